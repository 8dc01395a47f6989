"""The shared cells of the runs' facts table."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from travelgym.report.body import ReportRun
from travelgym.report.run_facts import manifest_fact, terminations, unscored


def run_of(*episodes: tuple[str, dict | None]) -> ReportRun:
    found = [SimpleNamespace(termination=t, score=s) for t, s in episodes]
    return ReportRun(Path("run"), {"seed": 0}, found, "run")


def test_terminations_are_counted_and_listed_by_name():
    run = run_of(("turn_limit", None), ("answer", {"x": 1}), ("answer", {}), ("error", None))
    assert terminations(run) == "answer 2, error 1, turn_limit 1"
    assert terminations(run_of()) == ""


def test_an_empty_score_counts_as_unscored():
    assert unscored(run_of(("answer", {"x": 1}), ("answer", {}), ("error", None))) == 2


def test_a_recorded_falsy_manifest_field_is_kept_and_a_missing_one_is_a_dash():
    run = run_of()
    assert manifest_fact(run, "seed") == 0 and manifest_fact(run, "user") == "\u2013"
