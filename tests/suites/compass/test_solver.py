"""The exact solver: its optimum is feasible and attained, and it agrees with Algorithm 1."""

from __future__ import annotations

import collections

import pytest

from travelgym.db import connect_readonly
from travelgym.suites.compass.reference_solver import reference_solve
from travelgym.suites.compass.scoring import score_plan
from travelgym.suites.compass.solver import Ranking, build_components, solve
from travelgym.suites.compass.taskgen import MIN_FEASIBLE
from travelgym.suites.compass.tasks import load_tasks


@pytest.fixture(scope="module")
def conn(compass_db):
    return connect_readonly(compass_db)


@pytest.fixture(scope="module")
def tasks():
    return load_tasks()


@pytest.fixture(scope="module")
def truths(conn, tasks):
    return {t.task_id: solve(conn, t) for t in tasks}


def test_every_optimal_plan_is_feasible_and_attains_the_optimum(conn, tasks, truths):
    for task in tasks:
        truth = truths[task.task_id]
        assert truth.feasible_count >= MIN_FEASIBLE, task.task_id
        verdict = score_plan(conn, task, truth, truth.optimal_plan)
        assert verdict.feasible, (task.task_id, verdict.violations)
        assert verdict.utility == truth.optimum, task.task_id
        assert verdict.optimal and all(verdict.top.values())
        t5, t10, t20 = (truth.thresholds[k] for k in ("5", "10", "20"))
        assert truth.optimum >= t5 >= t10 >= t20


def _reference_sample(tasks, per_cell=5):
    """The cheapest-to-enumerate tasks of every (level, objective type) cell."""
    cells = collections.defaultdict(list)
    for t in tasks:
        cells[(t.level, t.objective.type)].append(t)
    sample = []
    for cell in sorted(cells):
        ranked = sorted(cells[cell], key=lambda t: (len(t.dates.date_pairs()), t.task_id))
        sample += ranked[:per_cell]
    return sample


def test_reference_enumerator_agrees_exactly(conn, tasks, truths):
    sample = _reference_sample(tasks)
    assert len(sample) >= 30
    assert {(t.level, t.objective.type) for t in sample} == {
        (lv, o) for lv in (1, 2, 3) for o in ("single_metric", "feature_count")
    }
    for task in sample:
        fast, slow = truths[task.task_id], reference_solve(conn, task)
        assert slow.feasible_count == fast.feasible_count, task.task_id
        assert slow.optimum == fast.optimum, task.task_id
        assert slow.thresholds == fast.thresholds, task.task_id


def test_rank_counts_match_the_enumeration(conn, tasks):
    from travelgym.suites.compass.reference_solver import enumerate_feasible

    task = _reference_sample(tasks, per_cell=1)[2]  # a level-2 task
    ranking = Ranking(task, build_components(conn, task))
    plans = enumerate_feasible(conn, task)
    for utility, _ in plans[:: max(1, len(plans) // 25)]:
        better = sum(1 for u, _ in plans if u > utility)
        assert ranking.count_better(utility) == better
        assert ranking.count_at_least(utility) == sum(1 for u, _ in plans if u >= utility)
