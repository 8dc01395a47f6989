"""Scoring: feasibility reasons, ranks, ties in the agent's favour, the score JSON and CLI."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.db import connect_readonly
from travelgym.suites.compass.packages import parse_package_id
from travelgym.suites.compass.scoring import score_answers, score_plan
from travelgym.suites.compass.solver import Ranking, build_components, solve
from travelgym.suites.compass.tasks import load_tasks


@pytest.fixture(scope="module")
def conn(compass_db):
    return connect_readonly(compass_db)


@pytest.fixture(scope="module")
def tasks():
    return {t.task_id: t for t in load_tasks()}


def first(tasks, level, objective="single_metric", metric=None):
    return next(t for t in tasks.values() if t.level == level and t.objective.type == objective
                and (metric is None or getattr(t.objective, "metric", None) == metric))  # fmt: skip


def test_optimal_plan_ranks_first(conn, tasks):
    task = first(tasks, 2)
    truth = solve(conn, task)
    ranking = Ranking(task, build_components(conn, task))
    verdict = score_plan(conn, task, truth, truth.optimal_plan, ranking)
    assert verdict.feasible and verdict.optimal and verdict.rank == 1
    assert verdict.optimality_gap == 0
    assert verdict.rank_percentile == pytest.approx(100 / truth.feasible_count, abs=1e-4)


def test_ties_count_in_the_agents_favour(conn, tasks):
    for task in [first(tasks, 1), first(tasks, 2, "feature_count"), first(tasks, 3)]:
        truth = solve(conn, task)
        ranking = Ranking(task, build_components(conn, task))
        for percent in ("5", "10", "20"):
            plan = ranking.find_plan(truth.thresholds[percent])
            verdict = score_plan(conn, task, truth, plan, ranking)
            assert verdict.feasible and verdict.top[percent], (task.task_id, percent)
            assert tuple(verdict.key) == tuple(truth.thresholds[percent])
            # the key's ties share a rank: the threshold plan ranks within the credited plans
            assert verdict.rank <= truth.credited[percent]


def test_infeasible_recommendations_have_reasons(conn, tasks):
    task = first(tasks, 2, metric="total_cost")
    truth = solve(conn, task)
    good = truth.optimal_plan
    hotel = parse_package_id(good["hotel"])

    def reasons(rec):
        verdict = score_plan(conn, task, truth, rec)
        assert not verdict.feasible and not any(verdict.top.values())
        return " | ".join(verdict.violations)

    assert "no flight" in reasons({**good, "flight": None})
    assert "malformed" in reasons({**good, "hotel": "pkg_x_1"})
    assert "check-out after" in reasons({**good, "hotel": "pkg_1_5_3_1"})
    assert "no room configuration" in reasons({**good, "hotel": "pkg_99999999_1_2_1"})
    assert "not a pkg" in reasons({**good, "hotel": good["flight"]})
    assert "not a flight" in reasons({**good, "flight": good["hotel"]})
    shifted = f"pkg_{hotel.config_id}_{hotel.start_day + 1}_{hotel.end_day + 1}_{hotel.rooms}"
    assert "do not match" in reasons({**good, "hotel": shifted}) or "does not fit" in reasons(
        {**good, "hotel": shifted}
    )
    more_rooms = f"pkg_{hotel.config_id}_{hotel.start_day}_{hotel.end_day}_{hotel.rooms + 1}"
    assert "room" in reasons({**good, "hotel": more_rooms})
    assert "hotel" in reasons({"hotel": 12345, "flight": [], "permit": {}})


def test_over_budget_is_infeasible(conn, tasks):
    task = first(tasks, 1, metric="review_score")
    truth = solve(conn, task)
    # the most expensive bookable package of the first allowed stay breaks the budget
    cols = build_components(conn, task.model_copy(update={"constraints": [
        c for c in task.constraints if c.kind != "budget"]})).hotels  # fmt: skip
    i = int(cols["cost"].argmax())
    pid = f"pkg_{cols['config_id'][i]}_{cols['start'][i]}_{cols['end'][i]}_{task.rooms}"
    assert cols["cost"][i] > task.budget.max_total * 100
    verdict = score_plan(conn, task, truth, {"hotel": pid})
    assert any("budget" in v for v in verdict.violations)


def test_summary_json_and_best_of_several_hotels(conn, tasks):
    l1 = first(tasks, 1)
    l2 = first(tasks, 2)
    truths = {t.task_id: solve(conn, t) for t in (l1, l2)}
    answers = [
        {"task_id": l1.task_id, "recommendation": {"hotel": ["pkg_1_5_3_1", truths[l1.task_id].optimal_plan["hotel"]]}},
        {"task_id": l2.task_id, "recommendation": {"hotel": "nonsense", "flight": None}},
        {"task_id": "compass-999", "recommendation": {}},
        "not even an object",
    ]  # fmt: skip
    result = score_answers(conn, tasks, {**truths}, answers)
    assert set(result) == {"overall", "by_level", "by_objective", "tasks", "errors"}
    assert result["overall"] == {
        "n": 2,
        "FR": 50.0,
        "OR5": 50.0,
        "OR10": 50.0,
        "OR20": 50.0,
        "optimal": 50.0,
    }
    assert result["by_level"]["1"]["FR"] == 100.0 and result["by_level"]["2"]["FR"] == 0.0
    assert len(result["errors"]) == 2
    assert result["tasks"][0]["optimal"] is True


def test_score_command(tmp_path, compass_db, tasks):
    conn = connect_readonly(compass_db)
    picked = list(tasks.values())[:6]
    lines = []
    for t in picked:
        plan = solve(conn, t).optimal_plan
        lines.append(json.dumps({"task_id": t.task_id, "recommendation": plan}))
    answers = tmp_path / "answers.jsonl"
    answers.write_text("\n".join(lines) + "\n")
    runner = CliRunner()
    data_dir = compass_db.parent.parent
    result = runner.invoke(main, ["score", str(answers), "--json", "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["overall"]["n"] == 6 and out["overall"]["OR5"] == 100.0
    assert len(out["tasks"]) == 6 and all(t["rank"] == 1 for t in out["tasks"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "compass-001"}\n{oops\n')
    result = runner.invoke(main, ["score", str(bad), "--data-dir", str(data_dir)])
    assert (
        result.exit_code == 1
        and "bad.jsonl:2" in result.output
        and "Traceback" not in result.output
    )
    result = runner.invoke(main, ["score", str(tmp_path), "--data-dir", str(data_dir)])
    assert result.exit_code == 1 and "not a run directory" in result.output


def test_tasks_and_solve_commands(compass_db):
    runner = CliRunner()
    data_dir = str(compass_db.parent.parent)
    listed = runner.invoke(main, ["tasks", "compass", "--json", "--level", "3"])
    assert listed.exit_code == 0
    level3 = json.loads(listed.output)
    assert len(level3) == 70 and all(t["level"] == 3 for t in level3)
    solved = runner.invoke(main, ["solve", "compass", "--task", "compass-001", "--task", "compass-002",
                                  "--json", "--data-dir", data_dir])  # fmt: skip
    assert solved.exit_code == 0, solved.output
    rows = json.loads(solved.output)
    assert [r["task_id"] for r in rows] == ["compass-001", "compass-002"]
    assert {"task_id", "feasible_count", "optimum", "thresholds", "optimal_plan"} <= set(rows[0])
    assert set(rows[0]["thresholds"]) == {"5", "10", "20"}
    missing = runner.invoke(main, ["solve", "compass", "--task", "nope", "--data-dir", data_dir])
    assert missing.exit_code == 2 and "nope" in missing.output


def test_score_a_run_directory_matches_the_run(tmp_path, compass_db):
    import asyncio

    from travelgym.runner.batch import RunConfig, run_suite

    data_dir = compass_db.parent.parent
    run_dir = tmp_path / "run"
    summary = asyncio.run(run_suite(RunConfig("compass", "scripted:sampled", out=run_dir,
                                                limit=8, options={"trials": 2}, data_dir=data_dir, progress=False)))  # fmt: skip
    result = CliRunner().invoke(
        main, ["score", str(run_dir), "--json", "--data-dir", str(data_dir)]
    )
    assert result.exit_code == 0, result.output
    scored = json.loads(result.output)
    assert scored["overall"] == summary["overall"] and scored["overall"]["n"] == 16
    assert scored["overall"]["FR"] > 0 and not scored["errors"]
