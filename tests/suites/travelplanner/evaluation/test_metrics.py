"""eval.py's metrics on a hand-checked set of five plans."""

import pytest

from tests.suites.travelplanner.evaluation.conftest import MB, good_days, make_query, tweak
from travelgym.suites.travelplanner.evaluation import (
    constraint_pass_counts,
    evaluate_plan,
    metrics,
    metrics_by_level,
)


@pytest.fixture
def results(sandbox):
    plan = good_days()
    cases = [
        # 1 easy, meets everything: commonsense 8/8, hard budget 1/1
        (make_query(1), plan),
        # 2 medium, smoking asked, Cozy Room says no: commonsense 8/8, hard 1/2 (budget 864)
        (make_query(2, "medium", people=2, house_rule="smoking"), plan),
        # 3 hard, a restaurant twice (commonsense 7/8, the gate still passes): budget and
        # cuisine pass, a private room and flights fail the others: hard 2/4
        (make_query(3, "hard", room_type="entire room", cuisine=["Chinese"],
                    transportation="no flight"), tweak(plan, 2, dinner=f"Nagai, {MB}")),
        # 4 easy, not delivered: nothing passes, budget still counted
        (make_query(4), None),
        # 5 medium, an invented restaurant: within sandbox fails (commonsense 7/8), so the
        # hard constraints are not checked (their 2 count as failures)
        (make_query(5, "medium", room_type="private room"), tweak(plan, 2, lunch=f"Ghost, {MB}")),
    ]  # fmt: skip
    return [evaluate_plan(q, p, sandbox) for q, p in cases]


def test_the_per_plan_results(results):
    assert [r.delivered for r in results] == [True, True, True, False, True]
    assert [r.hard is None for r in results] == [False, False, False, True, True]
    assert results[2].commonsense["diverse_restaurants"].passed is False
    assert results[2].hard["cuisine"].passed is True
    assert results[2].hard["transportation"].passed is False
    assert results[1].hard["room_type"].passed is None
    assert results[4].hard_applicable == ("budget", "room_type")
    assert [r.final_pass for r in results] == [True, False, False, False, False]


def test_overall_metrics(results):
    assert metrics(results) == {
        "queries": 5,
        "delivery_rate": 4 / 5,
        "commonsense_micro": (8 + 8 + 7 + 0 + 7) / 40,
        "commonsense_macro": 2 / 5,  # plans 1 and 2
        "hard_micro": (1 + 1 + 2 + 0 + 0) / (1 + 2 + 4 + 1 + 2),
        "hard_macro": 1 / 5,  # plan 1; plan 5 was not checked
        "final_pass_rate": 1 / 5,
    }


def test_metrics_by_level(results):
    report = metrics_by_level(results)
    assert report["easy"] == {"queries": 2, "delivery_rate": 0.5, "commonsense_micro": 8 / 16,
                              "commonsense_macro": 0.5, "hard_micro": 1 / 2, "hard_macro": 0.5,
                              "final_pass_rate": 0.5}  # fmt: skip
    assert report["medium"] == {"queries": 2, "delivery_rate": 1.0, "commonsense_micro": 15 / 16,
                                "commonsense_macro": 0.5, "hard_micro": 1 / 4, "hard_macro": 0.0,
                                "final_pass_rate": 0.0}  # fmt: skip
    assert report["hard"]["commonsense_micro"] == 7 / 8 and report["hard"]["hard_micro"] == 0.5
    assert report["overall"] == metrics(results)


def test_constraint_pass_counts(results):
    counts = constraint_pass_counts(results)
    assert counts["within_sandbox"] == {"passed": 3, "total": 5}
    assert counts["diverse_restaurants"] == {"passed": 3, "total": 5}
    assert counts["budget"] == {"passed": 3, "total": 5}
    assert counts["room_type"] == {"passed": 0, "total": 2}
    assert counts["cuisine"] == {"passed": 1, "total": 1}


def test_no_results():
    assert metrics([])["final_pass_rate"] == 0.0
