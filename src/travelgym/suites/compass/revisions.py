"""Revised constraints (COMPASS Section 3.1): what the user has stated so far, per constraint.

A task's ``constraints`` are the final, scored requirements; a ``Revision`` names one of them and
the version the user states first. Until the user revises it, the stated version is the initial
one: that is what the user checks recommendations against. Scoring always uses the final ones.
A revision may tighten or relax the constraint ("revised mid-task"): :func:`revision_change`
says which way, so the user can say it ("I can stretch the budget to $X" or "I need to bring it
down to $X").
"""

from __future__ import annotations

from collections.abc import Iterable

from travelgym.suites.compass.constraints import Constraint
from travelgym.suites.compass.constraints.base import dollars
from travelgym.suites.compass.facts import cents
from travelgym.suites.compass.tasks import Task


def initial_versions(task: Task) -> dict[int, Constraint]:
    """Constraint index -> the version the user states first, for the revised constraints."""
    return {r.constraint_index: r.initial for r in task.revisions}


def stated_constraints(task: Task, revised: Iterable[int] = ()) -> list[Constraint]:
    """The constraints as the user has stated them once the revisions in ``revised`` are made:
    every other revised constraint is still in its initial version."""
    done = set(revised)
    initial = initial_versions(task)
    return [
        initial[i] if i in initial and i not in done else c for i, c in enumerate(task.constraints)
    ]


def stated_task(task: Task, revised: Iterable[int] = ()) -> Task:
    """The task with the constraints as stated (see :func:`stated_constraints`) and no
    revisions: what a user who has made only the revisions in ``revised`` checks plans against.
    Its ground truth is not the task's; score against ``task`` itself."""
    stated = stated_constraints(task, revised)
    if stated == list(task.constraints) and not task.revisions:
        return task
    data = task.model_dump(mode="json")
    data["constraints"] = [c.model_dump(mode="json") for c in stated]
    data["revisions"] = []
    return type(task).model_validate(data)  # validated afresh: party size etc. follow the change


# kind -> (field, whether a larger value relaxes the constraint) for the one-number kinds
_NUMERIC = {"max_nightly_price": ("amount", True), "min_star_rating": ("value", False),
            "min_review_score": ("value", False), "max_distance": ("value", True),
            "max_flight_duration": ("minutes", True), "max_airport_drive": ("hours", True)}  # fmt: skip


def _nights(c: Constraint) -> int | None:
    if c.kind == "stay_dates":
        return (c.check_out - c.check_in).days
    if c.kind == "date_window":
        return c.max_nights
    return None


def revision_change(initial: Constraint, final: Constraint) -> tuple[str, dict[str, str]]:
    """Which way a revision from ``initial`` to ``final`` goes, as ``(change, fields)``:
    ``budget_up`` / ``budget_down`` (``amount``: the new budget), ``longer`` / ``shorter`` (the
    stay; ``nights``: the new number, or the new longest stay of a date window), ``looser`` /
    ``tighter`` (any other one-number constraint) or ``changed`` (no direction to say)."""
    if initial.kind == "budget" and final.kind == "budget":
        change = "budget_up" if final.max_total > initial.max_total else "budget_down"
        return change, {"amount": dollars(cents(final.max_total))}
    before, after = _nights(initial), _nights(final)
    if before is not None and after is not None and before != after:
        nights = f"{after} night{'s' if after != 1 else ''}"
        return ("longer" if after > before else "shorter"), {"nights": nights}
    if initial.kind == final.kind and initial.kind in _NUMERIC:
        name, larger_relaxes = _NUMERIC[initial.kind]
        old, new = getattr(initial, name), getattr(final, name)
        if old != new:
            return ("looser" if (new > old) == larger_relaxes else "tighter"), {}
    return "changed", {}
