"""What a recommendation stands for: one itinerary, or at Level I up to three hotel options.

Appendix G.3: "For hotel recommendation (Level I), if agent recommends multiple options, we pick
the best one for evaluation. For itinerary-level recommendation (Level II and III) ... the agent
[recommends] one valid itinerary." Every reader of a recommendation (the episode's score, the
answers-file scorer, the re-derivation of a run's scores, the report and the user simulator)
takes its options from :func:`plan_options`, so they agree on what was recommended.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from travelgym.suites.compass.scoring import (
    COMPONENTS,
    PlanScore,
    best_of,
    revealed_violations,
    score_plan,
)
from travelgym.suites.compass.tasks import GroundTruth, Task

MAX_HOTEL_OPTIONS = 3


def plan_options(task: Task, recommendation: Any) -> list[dict[str, Any]]:
    """The single-itinerary plans a recommendation offers: at Level I each of its first
    :data:`MAX_HOTEL_OPTIONS` hotels when ``hotel`` is a list, otherwise the recommendation
    itself (a list at Levels II-III stays a list, which the resolver rejects)."""
    rec = recommendation if isinstance(recommendation, dict) else {}
    rec = {k: rec.get(k) for k in COMPONENTS}
    hotels = rec["hotel"]
    if task.level == 1 and isinstance(hotels, list) and hotels:
        return [{**rec, "hotel": hotel} for hotel in hotels[:MAX_HOTEL_OPTIONS]]
    return [rec]


def offers_options(task: Task, recommendation: Any) -> bool:
    """Does the recommendation offer more than one option (Level I hotel options)?"""
    return len(plan_options(task, recommendation)) > 1


def score_recommendation(
    conn: sqlite3.Connection,
    task: Task,
    truth: GroundTruth,
    recommendation: Any,
    ranking: Any = None,
) -> PlanScore:
    """The score of a recommendation: of its best option at Level I (feasible first, then the
    best key), of the one itinerary otherwise."""
    options = plan_options(task, recommendation)
    return best_of([score_plan(conn, task, truth, plan, ranking) for plan in options])


def revealed_option_violations(
    conn: sqlite3.Connection, task: Task, recommendation: Any, indices: list[int]
) -> list[tuple[int | None, str]]:
    """What a user who knows the constraints at ``indices`` can object to: nothing when one of
    the options meets all of them (the user would take that one), else the first option's
    violations."""
    found = [revealed_violations(conn, task, plan, indices)
             for plan in plan_options(task, recommendation)]  # fmt: skip
    return next((v for v in found if not v), found[0])
