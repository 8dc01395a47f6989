"""TravelPlanner through the command line: ``run`` with the scripted baseline in both modes on
the hand-made data (DR 100 % and the hand-checked verdicts of :mod:`.suite_data`), ``score`` of
run directories and submission files, ``ingest``, ``tasks``, ``tools``, ``suites`` and one-line
errors for bad input."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.suites.travelplanner.suite_data import EXPECTED
from travelgym.cli import main
from travelgym.suites.travelplanner.evaluation import COMMONSENSE, HARD


def cli(*args: str, ok: bool = True):
    result = CliRunner().invoke(main, list(args))
    if ok:
        assert result.exit_code == 0, result.output
    return result


def episodes(run_dir) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text().splitlines() if x]


def check_verdicts(run_dir) -> None:
    """Every episode delivered, with exactly the expected failing constraints."""
    for e in episodes(run_dir):
        score = e["score"]
        assert score["delivered"] and e["termination"] == "answered"
        failed_cs, failed_hard = EXPECTED[e["task_id"]]
        assert sorted(k for k, v in score["commonsense"].items() if v is False) == failed_cs
        assert sorted(k for k, v in score["hard"].items() if v is False) == failed_hard
        assert set(score["commonsense"]) == set(COMMONSENSE) and set(score["hard"]) == set(HARD)
        assert score["final"] == (not failed_cs and not failed_hard)


def check_summary(summary: dict) -> None:
    overall = summary["metrics"]["overall"]
    assert overall["queries"] == 3 and overall["delivery_rate"] == 1.0
    assert overall["commonsense_micro"] == 1.0 and overall["commonsense_macro"] == 1.0
    # hard constraints set: easy 1 (budget), medium 2 (budget, rule), hard 4; one fails
    assert overall["hard_micro"] == pytest.approx(6 / 7)
    assert overall["hard_macro"] == pytest.approx(2 / 3)
    assert overall["final_pass_rate"] == pytest.approx(2 / 3)
    assert summary["metrics"]["hard"]["final_pass_rate"] == 0.0


@pytest.mark.parametrize("with_database", [True, False], ids=["database", "reference"])
def test_run_sole_planning_with_data(tp_suite_data, tmp_path, with_database):
    dataset, database = tp_suite_data
    extra = ["--database", str(database)] if with_database else []
    done = cli("run", "travelplanner", "--data", str(dataset / "validation.csv"), *extra,
               "--out", str(tmp_path / "runs"), "--data-dir", str(tmp_path / "data"),
               "--no-progress", "--json")  # fmt: skip
    summary = json.loads(done.output)["scripted"]
    check_summary(summary)
    assert summary["mode"] == "sole-planning"
    run_dir = tmp_path / "runs" / "scripted"
    check_verdicts(run_dir)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["suite"] == "travelplanner" and manifest["split"] == "validation"
    assert manifest["checked_against"] == ("database" if with_database else "reference")
    assert all(e["tool_calls"] == 0 for e in episodes(run_dir))  # no tools in sole planning
    scored = json.loads(cli("score", str(run_dir), "--json").stdout)
    assert scored["metrics"] == summary["metrics"]
    # with the data directory the run's data was ingested into, its scores are re-derived
    scored = json.loads(cli("score", str(run_dir), "--data-dir", str(tmp_path / "data"),
                            "--json").stdout)  # fmt: skip
    assert scored["recheck"]["scores_rederived"] == len(episodes(run_dir))
    assert scored["recheck"]["disagreements"] == [] and scored["tampered"] is None


def test_run_two_stage_through_the_tools_after_ingest(tp_suite_data, tmp_path):
    dataset, database = tp_suite_data
    data_dir = str(tmp_path / "data")
    ingested = cli("ingest", "travelplanner", "--dataset", str(dataset), "--database",
                   str(database), "--data-dir", data_dir)  # fmt: skip
    assert "content hash:" in ingested.output
    done = cli("run", "travelplanner", "--mode", "two-stage", "--split", "validation",
               "--out", str(tmp_path / "runs"), "--data-dir", data_dir, "--no-progress",
               "--json")  # fmt: skip
    check_summary(json.loads(done.output)["scripted"])
    run_dir = tmp_path / "runs" / "scripted"
    check_verdicts(run_dir)
    for e in episodes(run_dir):
        names = {c["name"] for s in e["steps"] for c in s["tool_calls"]}
        assert {"flight_search", "google_distance_matrix", "accommodation_search",
                "restaurant_search", "attraction_search", "notebook_write"} <= names  # fmt: skip
        assert e["notebook"] and e["mode"] == "two-stage"
    hard = next(e for e in episodes(run_dir) if e["task_id"] == "validation-3")
    assert any(c["name"] == "city_search" for s in hard["steps"] for c in s["tool_calls"])


def test_score_reads_a_travelplanner_submission_file(tp_suite_data, tmp_path):
    dataset, database = tp_suite_data
    cli("run", "travelplanner", "--data", str(dataset / "validation.csv"), "--database",
        str(database), "--out", str(tmp_path / "runs"), "--data-dir", str(tmp_path / "d"),
        "--no-progress")  # fmt: skip
    submission = tmp_path / "submission.jsonl"
    lines = [json.dumps({"idx": e["idx"], "query": e["query"],
                         "plan": json.loads(e["final_answer"])})
             for e in episodes(tmp_path / "runs" / "scripted")]  # fmt: skip
    lines.append(json.dumps({"idx": 4, "query": "not a query of the split", "plan": None}))
    submission.write_text("\n".join(lines) + "\n")
    done = cli("score", str(submission), "--data", str(dataset / "validation.csv"),
               "--database", str(database), "--data-dir", str(tmp_path / "d"), "--json")  # fmt: skip
    result = json.loads(done.output)
    assert result["source"] == "submission" and result["sandbox"] == "database"
    check_summary(result)
    text = cli("score", str(submission), "--data", str(dataset / "validation.csv"),
               "--data-dir", str(tmp_path / "d")).output  # fmt: skip
    assert "reference information" in text and "within_sandbox" in text


def test_suites_lists_three_and_tasks_and_tools(tp_suite_data, tmp_path):
    listed = json.loads(cli("suites", "--json").output)
    names = [row["name"] for row in listed]
    assert names[:3] == ["compass", "behavior2trip", "travelplanner"]
    tp = next(row for row in listed if row["name"] == "travelplanner")
    assert tp["capabilities"] == ["ingest"] and tp["default_agents"] == ["scripted"]
    dataset, _ = tp_suite_data
    data_dir = str(tmp_path / "data")
    cli("ingest", "travelplanner", "--dataset", str(dataset), "--data-dir", data_dir)
    tasks = json.loads(cli("tasks", "travelplanner", "--split", "test", "--data-dir", data_dir,
                           "--json").output)  # fmt: skip
    assert [t["task_id"] for t in tasks] == ["test-1", "test-2", "test-3"]
    assert "reference_information" not in tasks[0] and "annotated_plan" not in tasks[0]
    hard = cli("tasks", "travelplanner", "--difficulty", "hard", "--data-dir", data_dir).output
    assert "validation-3" in hard and "validation-1" not in hard
    schemas = json.loads(cli("tools", "travelplanner").output)
    assert len(schemas) == 7
    assert "# TravelPlanner tool reference" in cli("tools", "travelplanner", "--markdown").output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "travelplanner", "--no-progress"], "Error: no TravelPlanner data: run "
         "`travelgym ingest travelplanner --dataset PATH` first"),
        (["ingest", "travelplanner"], "Error: travelplanner ingest needs --dataset PATH"),
        (["run", "travelplanner", "--database", "."], "Error: --database goes with --data PATH"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line(tmp_path, args, message):
    done = cli(*args, "--data-dir", str(tmp_path / "data"), ok=False)
    assert done.exit_code != 0 and isinstance(done.exception, SystemExit)
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), done.output


def test_bad_files_are_one_line_errors(tp_suite_data, tmp_path):
    dataset, _ = tp_suite_data
    odd = tmp_path / "queries.csv"
    odd.write_text((dataset / "validation.csv").read_text())
    done = cli("run", "travelplanner", "--data", str(odd), "--data-dir", str(tmp_path), ok=False)
    assert done.output.strip() == (f"Error: {odd}: cannot tell the split from the file name; "
                                   "add --split train, validation or test")  # fmt: skip
    bad = tmp_path / "sub.jsonl"
    bad.write_text('{"idx": 1, "plan": []}\n{"idx": "two"}\n')
    done = cli("score", str(bad), "--data", str(dataset / "validation.csv"), "--data-dir",
               str(tmp_path), ok=False)  # fmt: skip
    assert done.output.strip() == (f"Error: {bad}: line 2: field 'idx' must be an integer, "
                                   "got 'two'")  # fmt: skip
    compass = cli("run", "compass", "--mode", "two-stage", ok=False)
    assert compass.exit_code == 2 and "--mode" in compass.output
