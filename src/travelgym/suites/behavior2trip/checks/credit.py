"""Credit only for a delivered, authentic plan (checks version 4).

**Delivery.** A plan is delivered only when it has every day of the trip with the required
slots: three named meals a day, a named attraction or entertainment visit a day, a hotel every
night and the intercity legs out and back (:data:`DELIVERY`, the subjects of
:mod:`~travelgym.suites.behavior2trip.checks.completeness`). An empty or skeleton day, or a
missing day, is not delivery: every applicable check fails and DR does not count it.

**Authenticity gates credit.** A plan item that names a POI, train, flight or bus the database
does not hold, states a price other than the database's for it (zero and negative prices
included), or a local leg with a negative or non-finite cost, is not authentic; so is an
attraction or restaurant repeated in the plan (padding, not a plan). :func:`uncredited` lists
them; on a plan with any, every applicable check fails: a check that fails on its own keeps its
reason, the others fail with ``not credited: ...``. So no such plan earns more than an
undelivered one, in the metrics or in the training reward. Costs are the database's
(:func:`~travelgym.suites.behavior2trip.checks.personalization.trip_cost`), never the plan's.
"""

from __future__ import annotations

import math

from travelgym.suites.behavior2trip.checks.context import Context, Item
from travelgym.suites.behavior2trip.context import normalize
from travelgym.suites.behavior2trip.plan import MEALS

# the completeness subjects a delivered plan must have (local legs and times are details that
# their own checks judge)
DELIVERY = ("days", "meals", "accommodation", "attractions", "intercity")
NOT_CREDITED = "not credited"
PRICE_TOLERANCE = 0.01  # CNY: a stated price is the database's


def undelivered(gaps: dict[str, str | None]) -> str | None:
    """Why a plan with these completeness ``gaps`` is not delivered (else ``None``)."""
    for subject in DELIVERY:
        if gaps.get(subject):
            return f"incomplete plan ({subject}): {gaps[subject]}"
    return None


def _key(item: Item) -> str:
    if item.row is not None:
        return f"{item.table}:{item.row['name']}:{item.row['city_id']}"
    return normalize(item.data.name or item.data.id or "")


def repeats(ctx: Context, kinds: tuple[str, ...]) -> tuple[list[str], int]:
    """The items of ``kinds`` that repeat an earlier one (same database POI, else the same
    normalised name), and how many distinct ones the plan has."""
    seen: dict[str, str] = {}
    problems = []
    for item in ctx.items:
        if item.kind not in kinds or not (key := _key(item)):
            continue
        if key in seen:
            problems.append(f"{item.label} repeats {seen[key]}")
        else:
            seen[key] = item.label
    return problems, len(seen)


def _bad_price(stated: float | None, truth: float | None) -> bool:
    if stated is None:
        return False  # a missing price is info.sufficiency's
    if not math.isfinite(stated) or stated < 0:
        return True
    return truth is not None and abs(stated - truth) > PRICE_TOLERANCE


def uncredited(ctx: Context) -> list[str]:
    """Why the plan earns no credit: its inauthentic and repeated items (empty: none)."""
    problems = [i.problem for i in ctx.items if i.problem]
    for i in ctx.items:
        if i.row is not None and _bad_price(i.data.price, i.row["avg_price"]):
            problems.append(f"{i.label}: price {i.data.price}, the database's {i.row['avg_price']}")
    for g in ctx.legs:
        if g.fare is None:
            problems.append(g.problem or f"{g.label}: not in the timetable")
        elif _bad_price(g.data.price, g.fare):
            problems.append(f"{g.label}: price {g.data.price}, the database's {g.fare}")
    for view in ctx.days:
        for local in view.locals:
            cost = local.data.cost
            if cost is not None and (not math.isfinite(cost) or cost < 0):
                problems.append(f"{local.label}: cost {cost}")
    problems += repeats(ctx, MEALS)[0]
    problems += repeats(ctx, ("attraction", "entertainment"))[0]
    return problems
