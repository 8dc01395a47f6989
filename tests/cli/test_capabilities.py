"""Commands that need a capability refuse, in one line, the suites without it; run directories
of a suite reach that suite's code only."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from travelgym.cli import main

RUNS = Path(__file__).resolve().parents[1] / "golden" / "runs"


def test_analyze_refuses_a_suite_without_analyses(tmp_path):
    run = tmp_path / "run"  # a TravelPlanner run: the suite is all the refusal reads
    run.mkdir()
    (run / "manifest.json").write_text('{"suite": "travelplanner", "agent": "scripted"}')
    (run / "episodes.jsonl").write_text("")
    result = CliRunner().invoke(main, ["analyze", str(run)])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: travelplanner does not support analyze (suites that do: compass, behavior2trip)"
    )


def test_annotate_export_refuses_a_suite_without_annotation(tmp_path):
    run = shutil.copytree(RUNS / "behavior2trip_small", tmp_path / "run")
    result = CliRunner().invoke(
        main, ["annotate", "export", str(run), "--out", str(tmp_path / "s")]
    )
    assert result.exit_code == 1 and "does not support annotate" in result.output
    assert not (tmp_path / "s").exists()


def test_analyze_refuses_runs_of_two_suites(tmp_path):
    a = shutil.copytree(RUNS / "behavior2trip_small", tmp_path / "a")
    b = shutil.copytree(RUNS / "compass_small", tmp_path / "b")
    result = CliRunner().invoke(main, ["analyze", str(a), str(b)])
    assert result.exit_code == 1 and "cannot mix" in result.output, result.output


def test_commands_offer_only_capable_suites():
    for command, capability in (("solve", "solve"), ("ingest", "ingest")):
        result = CliRunner().invoke(
            main, [command, "behavior2trip", "x"][: 3 if command == "ingest" else 2]
        )
        assert result.exit_code == 2
        assert f"behavior2trip does not support {capability}" in result.output
