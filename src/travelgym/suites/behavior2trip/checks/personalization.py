"""Personalization (10) checks of Table 8: the plan against the hidden profile and the budget.

Each check applies only when the profile states the preference (and the trip needs the kind of
item it judges); its ``applies`` function reads the instance alone. An applicable check with
nothing in the plan to judge fails, and so does an item that is not in the database (its
attributes cannot be verified).
"""

from __future__ import annotations

import json

from travelgym.suites.behavior2trip.checks.base import Verdict, check, fail, verdict
from travelgym.suites.behavior2trip.checks.context import Context, Item
from travelgym.suites.behavior2trip.checks.data import PlanDB
from travelgym.suites.behavior2trip.checks.transport import seat_class
from travelgym.suites.behavior2trip.instance_model import Instance
from travelgym.suites.behavior2trip.preferences import MODE_SEATS, walking_ok
from travelgym.suites.behavior2trip.profiles import STAR_ORDER
from travelgym.suites.behavior2trip.vocab import WALKING_TOLERANCE

MAIN_MEALS = ("lunch", "dinner")


def _prefs(x: Instance):
    return x.profile.preferences


def _hotel(x: Instance) -> str | None:
    if _prefs(x).hotel_preferences is None:
        return "no hotel preferences"
    return "the trip has no night" if x.instruction.days < 2 else None


def _facilities(x: Instance) -> str | None:
    return _hotel(x) or (
        None if _prefs(x).hotel_preferences.essential_facilities else "no essential facilities"
    )


def _attraction(x: Instance) -> str | None:
    return None if _prefs(x).attraction_preferences else "no attraction preferences"


def _walking(x: Instance) -> str | None:
    a = _prefs(x).attraction_preferences
    return None if a and a.walking_tolerance else "no walking tolerance"


def _dining(attr: str):
    def applies(x: Instance) -> str | None:
        d = _prefs(x).dining_requirements
        return None if d and getattr(d, attr) else f"no {attr.replace('_', ' ')}"

    return applies


def _transport(x: Instance) -> str | None:
    if _prefs(x).transportation_preferences is None:
        return "no transportation preferences"
    same = x.instruction.departure_city == x.instruction.destination_city
    return "no intercity travel" if same else None


def _seat(x: Instance) -> str | None:
    t = _prefs(x).transportation_preferences
    if t is None or t.seat_class is None:
        return "no seat class preference"
    if t.seat_class not in MODE_SEATS[t.intercity_transport]:
        return f"{t.seat_class} does not exist for {t.intercity_transport}"
    return _transport(x)


def _budget(x: Instance) -> str | None:
    return None if x.instruction.budget_cny > 0 else "no budget"


def _unresolved(items: list[Item]) -> list[str]:
    return [f"{i.label}: not in the database" for i in items if i.row is None]


def star_ok(level: str, required: list[str]) -> bool:
    """A hotel level meets a star requirement: one of the levels, or above the lowest star
    level required (City Homestay matches only itself)."""
    if level in required:
        return True
    ranks = [STAR_ORDER.index(r) for r in required if r in STAR_ORDER]
    return level in STAR_ORDER and bool(ranks) and STAR_ORDER.index(level) >= min(ranks)


def _stays(ctx: Context) -> list[Item]:
    return [i for i in ctx.items if i.kind == "accommodation"]


@check("pref.hotel_star", "personalization", "Hotel Star Level Matching",
       "every hotel's star level is a required one or above the lowest required star level",
       applies=_hotel)  # fmt: skip
def hotel_star(ctx: Context) -> Verdict:
    stays = _stays(ctx)
    if not stays:
        return fail("no hotel to match")
    required = ctx.prefs.hotel_preferences.star_requirement
    problems = _unresolved(stays) + [
        f"{i.label}: {i.row['secondary_category']}" for i in stays
        if i.row and not star_ok(i.row["secondary_category"], required)
    ]  # fmt: skip
    return verdict(problems, f"hotels meet {', '.join(required)}")


@check("pref.hotel_amenities", "personalization", "Hotel Amenities Matching",
       "every hotel has all essential facilities", applies=_facilities)  # fmt: skip
def hotel_amenities(ctx: Context) -> Verdict:
    stays = _stays(ctx)
    if not stays:
        return fail("no hotel to match")
    need = set(ctx.prefs.hotel_preferences.essential_facilities)
    problems = _unresolved(stays)
    for i in stays:
        missing = need - set(json.loads(i.row["facilities"])) if i.row else set()
        if missing:
            problems.append(f"{i.label}: no {', '.join(sorted(missing))}")
    return verdict(problems, f"hotels have {', '.join(sorted(need))}")


def _days_matching(ctx: Context, kinds: tuple[str, ...], table: str,
                   where: dict[str, list[str]]) -> Verdict:  # fmt: skip
    """At least min(days, POIs in the destination matching every condition of ``where``) days
    have an item matching them all (in any of the day's cities). Counting only POIs that also
    meet the category's other stated preferences keeps the category's checks satisfiable
    together (a preferred cuisine served only at another price level cannot be required every
    day), and counting only the destination's keeps the rule satisfiable on the days spent
    there (a museum at home can be visited on a travel day at most)."""
    available = ctx.db.count(table, where, [ctx.dest] if ctx.dest else [])
    need = min(len(ctx.days), available)
    have = [v.index for v in ctx.days
            if any(i.kind in kinds and i.table == table and i.row
                   and all(i.row[col] in values for col, values in where.items())
                   for i in v.items)]  # fmt: skip
    wanted = " / ".join(next(iter(where.values())))
    text = f"{len(have)} days with {wanted} (need {need}: {available} in the destination)"
    return Verdict(len(have) >= need and need > 0, text)


@check("pref.attraction_type", "personalization", "Attraction Type Matching",
       "at least min(days, attractions of a preferred type within the walking tolerance in the "
       "destination) days have such an attraction", applies=_attraction)  # fmt: skip
def attraction_type(ctx: Context) -> Verdict:
    where = _attraction_where(ctx.prefs.attraction_preferences)
    return _days_matching(ctx, ("attraction", "entertainment"), "attractions", where)


def _attraction_where(prefs) -> dict[str, list[str]]:
    where = {"attraction_type": prefs.preferred_attraction_types}
    if prefs.walking_tolerance:
        where["walking_level"] = [
            w for w in WALKING_TOLERANCE if walking_ok(prefs.walking_tolerance, w)
        ]
    return where


@check("pref.walking_tolerance", "personalization", "Walking Tolerance Matching",
       "every attraction's walking level is within the user's tolerance (Low < Medium < High)",
       applies=_walking)  # fmt: skip
def walking_tolerance(ctx: Context) -> Verdict:
    visits = [i for i in ctx.items if i.is_attraction]
    if not visits:
        return fail("no attraction to match")
    tolerance = ctx.prefs.attraction_preferences.walking_tolerance
    problems = _unresolved(visits) + [
        f"{i.label}: {i.row['walking_km']:g} km ({i.row['walking_level']})" for i in visits
        if i.row and not walking_ok(tolerance, i.row["walking_level"])
    ]  # fmt: skip
    return verdict(problems, f"all attractions fit {tolerance}")


@check("pref.cuisine", "personalization", "Cuisine Type Matching",
       "at least min(days, restaurants of a preferred cuisine at the preferred price level and "
       "environment in the destination) days have such a lunch or dinner",
       applies=_dining("cuisine_preferences"))  # fmt: skip
def cuisine(ctx: Context) -> Verdict:
    return _days_matching(
        ctx, MAIN_MEALS, "restaurants", _cuisine_where(ctx.prefs.dining_requirements)
    )


def _cuisine_where(d) -> dict[str, list[str]]:
    where = {"secondary_category": d.cuisine_preferences}
    if d.price_level:
        where["price_level"] = [d.price_level]
    if d.dining_environment:
        where["dining_environment"] = [d.dining_environment]
    return where


def unsatisfiable(x: Instance, db: PlanDB) -> str | None:
    """A check no plan whose hotels are in the destination can pass on ``x`` (its id), read
    from the instance and the database alone; None when none is found. A necessary test:
    plans that pass every check may still not exist."""
    dest = db.city_id(x.instruction.destination_city)
    where = [dest] if dest else []
    prefs = _prefs(x)
    if _hotel(x) is None:
        # every hotel fails the star level or lacks a facility: one of the two checks fails
        required = prefs.hotel_preferences.star_requirement
        need = set(prefs.hotel_preferences.essential_facilities or ())
        if not any(star_ok(level, required) and need <= facilities
                   for level, facilities in db.hotel_offers(dest)):  # fmt: skip
            return "pref.hotel_star" if not need else "pref.hotel_amenities"
    # min(days, 0) days are needed and no plan meets "need > 0"
    attractions = _attraction(x) is None and _attraction_where(prefs.attraction_preferences)
    if attractions and not db.count("attractions", attractions, where):
        return "pref.attraction_type"
    dining = _dining("cuisine_preferences")(x) is None and _cuisine_where(prefs.dining_requirements)
    if dining and not db.count("restaurants", dining, where):
        return "pref.cuisine"
    return None


def _meals_all(ctx: Context, column: str, wanted: str) -> Verdict:
    meals = [i for i in ctx.items if i.kind in MAIN_MEALS]
    if not meals:
        return fail("no lunch or dinner to match")
    problems = _unresolved(meals) + [
        f"{i.label}: {i.row[column]}" for i in meals if i.row and i.row[column] != wanted
    ]
    return verdict(problems, f"all lunches and dinners {wanted}")


@check("pref.price_level", "personalization", "Price Level Matching",
       "every lunch and dinner restaurant has the preferred price level",
       applies=_dining("price_level"))  # fmt: skip
def price_level(ctx: Context) -> Verdict:
    return _meals_all(ctx, "price_level", ctx.prefs.dining_requirements.price_level)


@check("pref.dining_environment", "personalization", "Dining Environment Matching",
       "every lunch and dinner restaurant has the preferred dining environment",
       applies=_dining("dining_environment"))  # fmt: skip
def dining_environment(ctx: Context) -> Verdict:
    return _meals_all(ctx, "dining_environment", ctx.prefs.dining_requirements.dining_environment)


@check("pref.transport_mode", "personalization", "Transport Mode Matching",
       "every intercity leg uses the preferred mode (trains by their timetable type)",
       applies=_transport)  # fmt: skip
def transport_mode(ctx: Context) -> Verdict:
    if not ctx.legs:
        return fail("no intercity transport to match")
    wanted = ctx.prefs.transportation_preferences.intercity_transport
    problems = [
        f"{g.label}: {g.vocab_mode or 'unknown mode'}" for g in ctx.legs if g.vocab_mode != wanted
    ]
    return verdict(problems, f"all legs by {wanted}")


@check("pref.seat_class", "personalization", "Seat Class Matching",
       "every intercity leg states the preferred seat class (when it exists for the preferred "
       "mode)", applies=_seat)  # fmt: skip
def seat(ctx: Context) -> Verdict:
    if not ctx.legs:
        return fail("no intercity transport to match")
    wanted = ctx.prefs.transportation_preferences.seat_class
    problems = []
    for g in ctx.legs:
        got = seat_class(g.data.seat_class, g.mode)
        if got != wanted:
            problems.append(f"{g.label}: {got or 'no seat class'}")
    return verdict(problems, f"all legs in {wanted}")


def trip_cost(ctx: Context) -> float:
    """CNY for the party: fares and tickets x travellers, hotel nights x rooms, local legs as
    stated (never below 0). Database prices only, never the plan's: an item the database does
    not hold counts 0 here and fails ``pref.budget`` (and the credit gate) before it counts."""
    t, rooms = ctx.instruction.travellers, ctx.instruction.rooms
    cost = 0.0
    for g in ctx.legs:
        cost += (g.fare or 0) * t
    for i in ctx.items:
        price = i.row["avg_price"] if i.row else 0
        cost += price * (rooms if i.kind == "accommodation" else t)
    cost += sum(max(x.data.cost or 0, 0) for v in ctx.days for x in v.locals)
    return round(cost, 2)


@check("pref.budget", "personalization", "Budget Constraint",
       "the plan's total cost for the party is within the instruction's budget", applies=_budget)  # fmt: skip
def budget(ctx: Context) -> Verdict:
    # a POI the database does not hold has no price to check: a plan of invented places at
    # price 0 must not meet any budget
    unpriced = [g.label for g in ctx.legs if g.fare is None]
    unpriced += [i.label for i in ctx.items if i.row is None]
    if unpriced:
        return verdict([f"{label}: not in the database, its price cannot be checked"
                        for label in unpriced])  # fmt: skip
    cost, limit = trip_cost(ctx), ctx.instruction.budget_cny
    return Verdict(cost <= limit, f"total {cost:,.0f} CNY, budget {limit:,} CNY")
