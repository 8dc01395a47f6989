"""Scoring a recommendation against the exact ground truth (COMPASS Section 3.4).

A plan is feasible when it has the components its level needs, each resolves and is bookable,
and every hard constraint (revealed or not) holds. OR-A % holds when the plan is feasible and its
utility f is at least the f of the plan at rank ceil(A % x |X_feas|); plans equal on f share a
rank, so ties at the threshold are credited. (A version-2 task file states a tie-break: its
plans are ranked on the key (f, tie-break utility) instead.) A Level I recommendation may offer
up to three hotels: the best counts (``score_recommendation``).
"""

from __future__ import annotations

import math
import sqlite3
from typing import Any

from pydantic import BaseModel

from travelgym.suites.compass.facts import PlanFacts, flight_facts, hotel_facts, permit_facts
from travelgym.suites.compass.objectives import plan_key
from travelgym.suites.compass.packages import PackageIdError
from travelgym.suites.compass.resolver import (
    FlightOffer,
    HotelOffer,
    PackageNotFound,
    PermitOffer,
    resolve,
)
from travelgym.suites.compass.solver import TOP_PERCENTS, Ranking, build_components
from travelgym.suites.compass.tasks import GroundTruth, Task

COMPONENTS = ("hotel", "flight", "permit")
KIND_OF = {"hotel": "pkg", "flight": "flight", "permit": "permit"}
NEEDED = {1: ("hotel",), 2: ("hotel", "flight"), 3: ("hotel", "flight", "permit")}


class PlanScore(BaseModel):
    """The verdict on one task's recommendation."""

    task_id: str
    level: int
    objective_type: str
    recommendation: dict[str, Any]
    feasible: bool
    violations: list[str]
    utility: float | None = None
    key: list[float] | None = None  # [utility, tie-break utility or 0]: what ranks it
    objective_value: float | None = None
    optimum_value: float | None = None
    optimality_gap: float | None = None  # |f(x') - f(x*)| in the objective's unit
    rank: int | None = None  # 1 + number of strictly better feasible plans
    rank_percentile: float | None = None  # rank / |X_feas| x 100 (lower is better)
    top: dict[str, bool] = {}  # "5" / "10" / "20" -> within the top A %
    optimal: bool = False


def resolve_plan(
    conn: sqlite3.Connection, task: Task, recommendation: dict
) -> tuple[PlanFacts, list[str]]:
    """Resolve a recommendation's IDs into facts; problems become violation texts."""
    problems: list[str] = []
    offers: dict[str, Any] = {}
    for component in COMPONENTS:
        package_id = recommendation.get(component)
        if package_id in (None, ""):
            if component in NEEDED[task.level]:
                problems.append(f"no {component} recommended")
            continue
        if component not in NEEDED[task.level]:
            continue  # extra components are ignored, as in the paper's evaluation
        try:
            offers[component] = resolve(conn, package_id, kind=KIND_OF[component])
        except (PackageIdError, PackageNotFound) as exc:
            problems.append(f"{component}: {exc}")
    hotel: HotelOffer | None = offers.get("hotel")
    drive = {}
    if hotel is not None:
        drive = dict(conn.execute("SELECT airport_code, drive_hours FROM park_airports WHERE park_id = ?",
                                  (hotel.hotel["park_id"],)).fetchall())  # fmt: skip
    flight: FlightOffer | None = offers.get("flight")
    permit: PermitOffer | None = offers.get("permit")
    plan = PlanFacts(
        hotel=hotel_facts(hotel) if hotel else None,
        flight=flight_facts(flight, drive) if flight else None,
        permit=permit_facts(permit) if permit else None,
        travellers=task.travellers,
    )
    for component in COMPONENTS:
        facts = getattr(plan, component)
        if facts is not None and not facts["bookable"]:
            problems.append(
                f"{component} {facts['package_id']} is not bookable (sold out or not offered)"
            )
    return plan, problems


def check_plan(
    conn: sqlite3.Connection, task: Task, recommendation: dict
) -> tuple[PlanFacts, list[str]]:
    """All violations of a recommendation: resolution problems, then every constraint."""
    plan, problems = resolve_plan(conn, task, recommendation)
    if problems and plan.hotel is None:
        return plan, problems
    for constraint in task.constraints:
        verdict = constraint.check(plan)
        if verdict and verdict not in problems:
            problems.append(f"{constraint.kind}: {verdict}")
    return plan, problems


def revealed_violations(
    conn: sqlite3.Connection, task: Task, recommendation: dict, indices: list[int]
) -> list[tuple[int | None, str]]:
    """Violations of the constraints at ``indices`` only (what a user who knows just those
    can notice), plus unresolvable IDs as ``(None, text)``."""
    plan, problems = resolve_plan(conn, task, recommendation)
    out: list[tuple[int | None, str]] = [(None, p) for p in problems]
    if plan.hotel is None:
        return out
    for index in indices:
        verdict = task.constraints[index].check(plan)
        if verdict:
            out.append((index, verdict))
    return out


def score_plan(
    conn: sqlite3.Connection,
    task: Task,
    truth: GroundTruth,
    recommendation: dict,
    ranking: Ranking | None = None,
) -> PlanScore:
    """Score one recommendation; pass a ``Ranking`` to also compute its exact rank."""
    recommendation = (
        {k: recommendation.get(k) for k in COMPONENTS} if isinstance(recommendation, dict) else {}
    )
    plan, violations = check_plan(conn, task, recommendation)
    score = PlanScore(task_id=task.task_id, level=task.level, objective_type=task.objective.type,
                      recommendation=recommendation, feasible=not violations, violations=violations,
                      optimum_value=truth.optimum_value)  # fmt: skip
    if violations or truth.feasible_count == 0:
        score.feasible = False
        score.top = {str(a): False for a in TOP_PERCENTS}
        return score
    key = plan_key(task.objective, plan)
    utility = key[0]
    score.utility, score.key = utility, list(key)
    score.objective_value = task.objective.metric_value(utility)
    score.optimality_gap = round(abs(score.objective_value - truth.optimum_value), 6)
    score.top = {str(a): key >= tuple(truth.thresholds[str(a)]) for a in TOP_PERCENTS}
    score.optimal = key >= tuple(truth.optimum_key or (truth.optimum, 0.0))
    if ranking is not None:
        score.rank = ranking.count_better(key) + 1
        score.rank_percentile = round(100 * score.rank / truth.feasible_count, 4)
    return score


def best_of(scores: list[PlanScore]) -> PlanScore:
    """Level I agents may recommend several hotels: the best one counts (Appendix G.3)."""
    return max(
        scores, key=lambda s: (s.feasible, s.key if s.key is not None else [-math.inf, -math.inf])
    )


# Appendix G.3: "For hotel recommendation (Level I), if agent recommends multiple options, we
# pick the best one for evaluation. For itinerary-level recommendation (Level II and III) ...
# [the agent recommends] one valid itinerary." Every reader of a recommendation (the episode's
# score, the answers-file scorer, the re-derivation of a run's scores, the report and the user
# simulator) takes its options from ``plan_options``, so they agree on what was recommended.
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


def score_recommendation(
    conn: sqlite3.Connection,
    task: Task,
    truth: GroundTruth,
    recommendation: Any,
    ranking: Ranking | None = None,
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


def naive_plan(conn: sqlite3.Connection, task: Task) -> dict | None:
    """The plan made of the first results of the natural searches on the first allowed dates."""
    from travelgym.suites.compass.context import CompassContext
    from travelgym.suites.compass.packages import day_to_date
    from travelgym.suites.compass.tools import compass_registry

    registry, ctx = compass_registry(), CompassContext(conn)
    start, end = task.dates.date_pairs()[0]
    park = task.park.park_ids[0]
    dates = {"start_date": day_to_date(start).isoformat(), "end_date": day_to_date(end).isoformat()}
    hotels = registry.call("search_hotel", {"location": park, **dates, "num_guests": task.travellers,
                                            "num_rooms": task.rooms}, ctx)  # fmt: skip
    if not hotels.ok or not hotels.content["results"]:
        return None
    plan = {"hotel": hotels.content["results"][0]["package_id"], "flight": None, "permit": None}
    if task.level >= 2:
        origin = next(c.airport for c in task.constraints if c.kind == "origin_city")
        airports = registry.call("search_airports", {"park_name": park}, ctx).content["airports"]
        flights = registry.call("search_flights", {
            "origin": origin, "destination": airports[0]["airport_code"],
            "departure_date": dates["start_date"], "return_date": dates["end_date"],
            "passengers": task.travellers}, ctx)  # fmt: skip
        if not flights.ok or not flights.content["results"]:
            return None
        plan["flight"] = flights.content["results"][0]["package_id"]
    if task.level == 3:
        permits = registry.call("search_permit_availability", {
            "park": park, "template_name": task.permit.names[0],
            "date_range": f"{dates['start_date']} to {dates['end_date']}",
            "duration_days": task.permit.days, "party_size": task.travellers}, ctx)  # fmt: skip
        if not permits.ok or not permits.content["available_dates"]:
            return None
        plan["permit"] = permits.content["available_dates"][0]["package_id"]
    return plan


def _aggregate(scores: list[PlanScore]) -> dict[str, float | int]:
    n = len(scores)

    def pct(count: int) -> float:
        return round(100 * count / n, 2) if n else 0.0

    return {
        "n": n,
        "FR": pct(sum(s.feasible for s in scores)),
        "OR5": pct(sum(s.top.get("5", False) for s in scores)),
        "OR10": pct(sum(s.top.get("10", False) for s in scores)),
        "OR20": pct(sum(s.top.get("20", False) for s in scores)),
        "optimal": pct(sum(s.optimal for s in scores)),
    }


def summarize(scores: list[PlanScore]) -> dict[str, Any]:
    """The stable score JSON: overall, by_level, by_objective, tasks."""
    levels = sorted({s.level for s in scores})
    objectives = sorted({s.objective_type for s in scores})
    return {
        "overall": _aggregate(scores),
        "by_level": {str(lv): _aggregate([s for s in scores if s.level == lv]) for lv in levels},
        "by_objective": {
            o: _aggregate([s for s in scores if s.objective_type == o]) for o in objectives
        },
        "tasks": [s.model_dump() for s in scores],
    }


def score_answers(
    conn: sqlite3.Connection,
    tasks: dict[str, Task],
    truths: dict[str, GroundTruth],
    answers: list[dict],
    with_rank: bool = True,
) -> dict[str, Any]:
    """Score answers ``{"task_id", "recommendation"}``; bad entries are reported, not raised."""
    errors: list[str] = []
    latest: dict[tuple, dict] = {}
    for number, answer in enumerate(answers, start=1):
        task_id = answer.get("task_id") if isinstance(answer, dict) else None
        if not isinstance(task_id, str) or task_id not in tasks:
            errors.append(f"answer {number}: unknown task_id {task_id!r}")
            continue
        key = (task_id, answer.get("trial", 0))  # the trials of a run directory each count
        if key in latest:
            errors.append(f"answer {number}: {task_id} answered again; the last answer counts")
        latest[key] = answer
    scores = []
    for (task_id, _), answer in latest.items():
        task, truth = tasks[task_id], truths[task_id]
        ranking = Ranking(task, build_components(conn, task)) if with_rank else None
        rec = answer.get("recommendation")
        rec = rec if isinstance(rec, dict) else {}
        if isinstance(rec.get("hotel"), list) and task.level > 1:
            errors.append(
                f"{task_id}: level {task.level} needs one itinerary, not a list of hotels"
            )
        scores.append(score_recommendation(conn, task, truth, rec, ranking))
    result = summarize(scores)
    result["errors"] = errors
    return result
