"""The exact solver: its optimum is feasible and attained, and it agrees with Algorithm 1."""

from __future__ import annotations

import collections

import pytest

from travelgym.db import connect_readonly
from travelgym.suites.compass.ranking import rank_position
from travelgym.suites.compass.reference_solver import reference_solve
from travelgym.suites.compass.scoring import score_plan
from travelgym.suites.compass.solver import TOP_PERCENTS, Ranking, build_components, solve
from travelgym.suites.compass.taskgen import MIN_FEASIBLE, credit_bound
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


@pytest.mark.slow
def test_every_optimal_plan_is_feasible_and_attains_the_optimum(conn, tasks, truths):
    for task in tasks:
        truth = truths[task.task_id]
        assert truth.feasible_count >= MIN_FEASIBLE, task.task_id
        verdict = score_plan(conn, task, truth, truth.optimal_plan)
        assert verdict.feasible, (task.task_id, verdict.violations)
        assert verdict.utility == truth.optimum, task.task_id
        assert tuple(verdict.key) == tuple(truth.optimum_key), task.task_id
        assert verdict.optimal and all(verdict.top.values())
        t5, t10, t20 = (tuple(truth.thresholds[k]) for k in ("5", "10", "20"))
        assert tuple(truth.optimum_key) >= t5 >= t10 >= t20
        assert 1 <= truth.optimal_count <= truth.credited["5"] <= truth.credited["10"]


def test_every_task_credits_about_a_percent_of_its_feasible_plans(tasks, truths):
    """Ranked on f alone (no task states a tie-break), ties never make OR-A % credit more than
    max(2, 2 x A %) of X_feas."""
    for task in tasks:
        truth = truths[task.task_id]
        assert task.objective.tie_break is None, task.task_id
        for a in TOP_PERCENTS:
            credited, n = truth.credited[str(a)], truth.feasible_count
            assert rank_position(a, n) <= credited <= credit_bound(a, n), (task.task_id, a)


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


@pytest.mark.slow
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
        assert slow.optimum_key == fast.optimum_key, task.task_id
        assert slow.credited == fast.credited, task.task_id
        assert slow.optimal_count == fast.optimal_count, task.task_id
        assert slow.distinct_values == fast.distinct_values, task.task_id
        assert slow.threshold_values == fast.threshold_values, task.task_id


def _with_tie_break(task, tie_break):
    """The task as a version-2 task file stated it: with a tie-break."""
    return task.model_copy(
        update={"objective": task.objective.model_copy(update={"tie_break": tie_break})}
    )


def test_rank_counts_match_the_enumeration(conn, tasks):
    """Counts on the scored key agree with Algorithm 1 for a key without a tie-break (f alone,
    the generated tasks: ties share a rank and the threshold credits all of them) and for both
    tie-broken key shapes version-2 task files state (cost then a hotel metric; an objective
    then the cost)."""
    from travelgym.suites.compass.reference_solver import enumerate_feasible, reference_solve

    sample = _reference_sample(tasks, per_cell=1)
    by_cost = next(t for t in sample if getattr(t.objective, "metric", None) == "total_cost")
    feature = next(t for t in sample if t.objective.type == "feature_count" and t.level >= 2)
    checked_ties = False
    for task in (by_cost, feature, _with_tie_break(feature, "total_cost"),
                 _with_tie_break(by_cost, "distance")):  # fmt: skip
        ranking = Ranking(task, build_components(conn, task))
        plans = enumerate_feasible(conn, task)
        for key, _ in plans[:: max(1, len(plans) // 25)]:
            better = sum(1 for k, _ in plans if k > key)
            assert ranking.count_better(key) == better, task.task_id
            assert ranking.count_at_least(key) == sum(1 for k, _ in plans if k >= key)
        fast, slow = solve(conn, task), reference_solve(conn, task)
        assert fast.model_dump(exclude={"optimal_plan"}) == slow.model_dump(
            exclude={"optimal_plan"}
        ), task.task_id
        if task.objective.tie_break is None and task.objective.type == "feature_count":
            truth = solve(conn, task)
            # without a stated tie-break a feature count ties massively: credited shows it
            checked_ties = truth.credited["5"] > rank_position(5, truth.feasible_count)
    assert checked_ties


def test_the_budget_only_prunes_the_component_queries(conn, tasks):
    """The task generator ranks a task over the columns of its draft, the same constraints
    without the budget: the budget's SQL may only prune rows the ranking would not count, so
    the ground truth over unpruned columns is the task's (every shipped task has a budget)."""
    from travelgym.suites.compass.constraints import Budget
    from travelgym.suites.compass.solver import component_columns, group_components, solve_ranked

    checked = 0
    for task in tasks[::4]:
        draft = task.model_copy(
            update={"constraints": [c for c in task.constraints if not isinstance(c, Budget)]}
        )
        assert len(draft.constraints) == len(task.constraints) - 1, task.task_id
        full = component_columns(conn, draft)
        pruned = component_columns(conn, task)
        assert len(full[0]["cost"]) >= len(pruned[0]["cost"])
        unpruned = solve_ranked(task, Ranking(task, group_components(task, *full)))
        assert unpruned == solve(conn, task), task.task_id
        checked += 1
    assert checked == 71
