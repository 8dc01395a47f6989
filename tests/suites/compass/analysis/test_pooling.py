"""Repeated runs of one agent are pooled into a stability row only when they measured the same
thing (task set, task file, database), unless mixing is asked for, and then the row says so."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.suites.compass.analysis.test_metrics import TASKS, three_episodes
from travelgym.cli import main
from travelgym.runner.store import RunStore
from travelgym.suites.compass.analysis.metrics import analyze_runs
from travelgym.suites.compass.analysis.pooling import MixedRunsError, differences, run_identity

BASE = {"suite": "compass", "agent": "llm:m", "trials": 1, "task_ids": ["t1", "t2", "t3"],
        "tasks_sha256": "a" * 64, "db_content_hash": "d" * 64}  # fmt: skip


def _write_run(directory, episodes, **manifest):
    store = RunStore(directory)
    store.open({**BASE, **manifest}, resume=False)
    for e in episodes:
        store.append(e)
    return directory


@pytest.mark.parametrize(
    ("changed", "named"),
    [
        ({"task_ids": ["t1", "t2"]}, "task set"),
        ({"tasks_sha256": "b" * 64}, "task file"),
        ({"db_content_hash": "e" * 64}, "database"),
        ({"db_content_hash": "e" * 64, "task_ids": ["t1"]}, "task set and database"),
    ],
)  # fmt: skip
def test_runs_that_differ_are_refused_unless_mixing_is_allowed(tmp_path, changed, named):
    eps = three_episodes()
    a = _write_run(tmp_path / "a", eps)
    b = _write_run(tmp_path / "b", eps, **changed)
    with pytest.raises(MixedRunsError) as info:
        analyze_runs([a, b], TASKS, resamples=100)
    message = str(info.value)
    assert f"runs of llm:m differ in {named}" in message and "--allow-mixed" in message
    assert str(a) in message and str(b) in message
    result = analyze_runs([a, b], TASKS, resamples=100, allow_mixed=True)
    assert result["stability"]["llm:m"]["mixed"] == named.split(" and ")
    assert result["stability"]["llm:m"]["n"] == 2


def test_runs_of_the_same_experiment_pool_without_asking(tmp_path):
    eps = three_episodes()
    a = _write_run(tmp_path / "a", eps)
    b = _write_run(tmp_path / "b", eps[:1], task_ids=["t3", "t1", "t2"])  # a killed run, same set
    other = _write_run(tmp_path / "c", eps, agent="llm:other", db_content_hash="e" * 64)
    result = analyze_runs([a, b, other], TASKS, resamples=100)
    assert list(result["stability"]) == ["llm:m"] and "mixed" not in result["stability"]["llm:m"]


def test_identity_falls_back_to_the_episodes_task_ids():
    eps = three_episodes()
    assert run_identity({}, eps)["task_ids"] == ("t1", "t2", "t3")
    ids = {"x": run_identity({}, eps), "y": run_identity({}, eps[:2])}
    assert differences(ids) == ["task set"]


def test_analyze_command_refuses_and_allows_mixing(tmp_path):
    eps = three_episodes()
    a = _write_run(tmp_path / "a", eps)
    b = _write_run(tmp_path / "b", eps, db_content_hash="e" * 64)
    runner = CliRunner()
    refused = runner.invoke(main, ["analyze", str(a), str(b), "--resamples", "100"])
    assert refused.exit_code == 1 and "Traceback" not in refused.output
    assert refused.output.startswith("Error: runs of llm:m differ in database")
    allowed = runner.invoke(main, ["analyze", str(a), str(b), "--resamples", "100",
                                   "--allow-mixed"])  # fmt: skip
    assert allowed.exit_code == 0, allowed.output
    assert "llm:m (runs) n=2 (mixed database)" in allowed.output
