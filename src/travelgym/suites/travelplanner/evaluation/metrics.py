"""TravelPlanner's metrics (``eval.py``) as pure functions over :class:`PlanResult` lists.
Every rate's denominator counts every query, delivered or not: an undelivered plan, or one
whose hard constraints were not checked, passes nothing."""

from __future__ import annotations

from collections.abc import Sequence

from travelgym.suites.travelplanner.evaluation.base import COMMONSENSE
from travelgym.suites.travelplanner.evaluation.results import PlanResult

LEVELS = ("easy", "medium", "hard")


def _rate(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


def metrics(results: Sequence[PlanResult]) -> dict[str, float | int]:
    """The six rates (fractions, not percent) over ``results``:

    - ``delivery_rate``: delivered plans / queries;
    - ``commonsense_micro``: commonsense verdicts passed / (8 × queries);
    - ``commonsense_macro``: plans passing every commonsense constraint / queries;
    - ``hard_micro``: hard verdicts passed / hard constraints the queries set (budget on all);
    - ``hard_macro``: plans whose hard constraints were checked and none failed / queries;
    - ``final_pass_rate``: plans passing both / queries;

    with ``queries``, the count."""
    n = len(results)
    commonsense_passed = sum(
        v.passed is True for r in results if r.commonsense for v in r.commonsense.values()
    )
    hard_passed = sum(v.passed is True for r in results if r.hard for v in r.hard.values())
    hard_total = sum(len(r.hard_applicable) for r in results)
    return {
        "queries": n,
        "delivery_rate": _rate(sum(r.delivered for r in results), n),
        "commonsense_micro": _rate(commonsense_passed, len(COMMONSENSE) * n),
        "commonsense_macro": _rate(sum(r.commonsense_pass for r in results), n),
        "hard_micro": _rate(hard_passed, hard_total),
        "hard_macro": _rate(sum(r.hard_pass for r in results), n),
        "final_pass_rate": _rate(sum(r.final_pass for r in results), n),
    }


def metrics_by_level(results: Sequence[PlanResult]) -> dict[str, dict[str, float | int]]:
    """:func:`metrics` over all results (``"overall"``) and over each level present."""
    report = {"overall": metrics(results)}
    for level in LEVELS:
        subset = [r for r in results if r.level == level]
        if subset:
            report[level] = metrics(subset)
    return report


def constraint_pass_counts(results: Sequence[PlanResult]) -> dict[str, dict[str, int]]:
    """Per constraint id: ``passed`` verdicts, and ``total`` (queries for a commonsense
    constraint, queries setting it for a hard one), as ``eval.py``'s detailed scores."""
    counts: dict[str, dict[str, int]] = {}
    for r in results:
        for cid in COMMONSENSE:
            entry = counts.setdefault(cid, {"passed": 0, "total": 0})
            entry["total"] += 1
            entry["passed"] += bool(r.commonsense and r.commonsense[cid].passed is True)
        for cid in r.hard_applicable:
            entry = counts.setdefault(cid, {"passed": 0, "total": 0})
            entry["total"] += 1
            entry["passed"] += bool(r.hard and r.hard[cid].passed is True)
    return counts
