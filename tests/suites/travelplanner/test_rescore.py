"""``score``'s re-derivation hooks of TravelPlanner (:mod:`travelgym.suites.travelplanner.rescore`):
a scripted run's every episode, in both modes and against the database or the reference
information, gives back its stored final answer from its own steps and its stored score from
that answer, over the run's own data found in the data directory; another answer scores
otherwise; data with other contents is refused, none at hand re-scores nothing."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.core.answers import NOT_RECORDED
from travelgym.core.errors import UserError
from travelgym.core.registry import get_suite
from travelgym.runner.store import EPISODES, MANIFEST
from travelgym.suites.travelplanner.run import EVALUATION_VERSION


def cli(*args: str) -> None:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output


def _lines(run_dir) -> list[dict]:
    return [json.loads(x) for x in (run_dir / EPISODES).read_text().splitlines() if x.strip()]


def _check_run(run_dir, data_dir, options) -> list[dict]:
    """Every line's answer and score re-derived exactly; its lines."""
    suite = get_suite("travelplanner")
    lines = _lines(run_dir)
    assert len(lines) == 3
    with suite.rescorer(run_dir, 0, data_dir, options) as rescore:
        assert rescore is not None
        for line in lines:
            assert line["final_answer"] is not None
            assert suite.answer_from_turns(line) == line["final_answer"]
            assert rescore(line, line["final_answer"]) == line["score"]
            undelivered = rescore(line, None)
            assert undelivered != line["score"] and undelivered["delivered"] is False
            plan = json.loads(line["final_answer"])
            day = next(d for d in plan if isinstance(d, dict) and d.get("dinner") not in
                       (None, "", "-"))  # fmt: skip
            day["dinner"] = "Nowhere Grill, Atlantis"  # a restaurant no data has
            assert rescore(line, json.dumps(plan)) != line["score"]
            assert rescore({**line, "task_id": "validation-99"}, line["final_answer"]) is None
    return lines


@pytest.mark.parametrize("with_database", [True, False], ids=["database", "reference"])
def test_a_sole_planning_run_on_data_files(tp_suite_data, tmp_path, with_database):
    dataset, database = tp_suite_data
    extra = ["--database", str(database)] if with_database else []
    data_dir = tmp_path / "data"
    cli("run", "travelplanner", "--data", str(dataset / "validation.csv"), *extra, "--out",
        str(tmp_path / "runs"), "--data-dir", str(data_dir), "--no-progress")  # fmt: skip
    run_dir = tmp_path / "runs" / "scripted"
    suite = get_suite("travelplanner")
    manifest = json.loads((run_dir / MANIFEST).read_text())
    assert suite.scorer_version_key == "evaluation_version"
    assert manifest["evaluation_version"] == suite.scorer_version == EVALUATION_VERSION
    # the run's cached ingest is found by its content hash; the files named work as well
    _check_run(run_dir, data_dir, suite.options())
    named = suite.options(data=str(dataset / "validation.csv"),
                          database=str(database) if with_database else None)  # fmt: skip
    _check_run(run_dir, data_dir, named)
    # no data at hand: nothing re-scored; other data named: refused
    with suite.rescorer(run_dir, 0, tmp_path / "empty", suite.options()) as rescore:
        assert rescore is None
    other = suite.options(data=str(dataset / "validation.csv"),
                          database=None if with_database else str(database))  # fmt: skip
    with (
        pytest.raises(UserError, match="other TravelPlanner data"),
        suite.rescorer(run_dir, 0, data_dir, other),
    ):
        pass


def test_a_two_stage_run_after_ingest(tp_suite_data, tmp_path):
    dataset, database = tp_suite_data
    data_dir = tmp_path / "data"
    cli("ingest", "travelplanner", "--dataset", str(dataset), "--database", str(database),
        "--data-dir", str(data_dir))  # fmt: skip
    cli("run", "travelplanner", "--mode", "two-stage", "--split", "validation", "--out",
        str(tmp_path / "runs"), "--data-dir", str(data_dir), "--no-progress")  # fmt: skip
    suite = get_suite("travelplanner")
    lines = _check_run(tmp_path / "runs" / "scripted", data_dir, suite.options())
    line = lines[0]
    old = {**line, "steps": [{k: v for k, v in s.items() if k != "delivered"}
                             for s in line["steps"]]}  # fmt: skip
    assert suite.answer_from_turns(old) is NOT_RECORDED
    # a plan names places by name: no tool ids to report
    assert suite.answer_ids(line["final_answer"]) == set() == suite.answer_ids(None)


def test_a_run_of_another_evaluation_is_not_rescored(tp_suite_data, tmp_path):
    dataset, database = tp_suite_data
    data_dir = tmp_path / "data"
    cli("run", "travelplanner", "--data", str(dataset / "validation.csv"), "--out",
        str(tmp_path / "runs"), "--data-dir", str(data_dir), "--no-progress")  # fmt: skip
    run_dir = tmp_path / "runs" / "scripted"
    manifest = json.loads((run_dir / MANIFEST).read_text())
    (run_dir / MANIFEST).write_text(json.dumps({**manifest, "evaluation_version": "0"}))
    suite = get_suite("travelplanner")
    with suite.rescorer(run_dir, 0, data_dir, suite.options()) as rescore:
        assert rescore is None
