"""Revised constraints (COMPASS Section 3.1): what the user has stated so far, per constraint.

A task's ``constraints`` are the final, scored requirements; a ``Revision`` names one of them and
the version the user states first. Until the user revises it, the stated version is the initial
one: that is what the user checks recommendations against. Scoring always uses the final ones.
"""

from __future__ import annotations

from collections.abc import Iterable

from travelgym.suites.compass.constraints import Constraint
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
