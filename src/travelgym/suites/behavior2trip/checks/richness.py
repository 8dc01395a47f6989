"""Information Richness (2) checks of Table 8."""

from __future__ import annotations

from travelgym.suites.behavior2trip.checks.base import Verdict, check, fail, verdict
from travelgym.suites.behavior2trip.checks.context import Context
from travelgym.suites.behavior2trip.plan import Stay

RICH_SHARE = 0.5  # share of POIs that carry a description or tips
MIN_TEXT = 10  # characters a description or tip needs to count
VISIT_FIELDS = ("start_time", "end_time", "price")
STAY_FIELDS = ("check_in_time", "price")
LEG_FIELDS = ("mode", "number", "from_city", "to_city", "departure_time", "arrival_time", "price")
LOCAL_FIELDS = ("mode", "minutes")


def _missing(obj, fields: tuple[str, ...]) -> list[str]:
    return [f for f in fields if getattr(obj, f) is None]


@check("info.sufficiency", "information", "Information Sufficiency",
       "every day names its city and has at least one POI; every meal, attraction and "
       "entertainment has name or id, start_time, end_time and price; every hotel name or id, "
       "check_in_time and price; every intercity leg mode, number, from_city, to_city, "
       "departure_time, arrival_time, price (and seat_class unless a bus); every local leg mode "
       "and minutes; a day with two or more POIs lists its local transport")  # fmt: skip
def sufficiency(ctx: Context) -> Verdict:
    problems = []
    for view in ctx.days:
        where = f"day {view.index}"
        if not view.day.city:
            problems.append(f"{where}: no city")
        if not view.items:
            problems.append(f"{where}: no meal, visit or hotel")
        for item in view.items:
            fields = STAY_FIELDS if isinstance(item.data, Stay) else VISIT_FIELDS
            missing = _missing(item.data, fields)
            if not (item.data.name or item.data.id):
                missing.insert(0, "name")
            if missing:
                problems.append(f"{item.label}: no {', '.join(missing)}")
        for leg in view.legs:
            fields = LEG_FIELDS + (() if leg.mode == "bus" else ("seat_class",))
            if missing := _missing(leg.data, fields):
                problems.append(f"{leg.label}: no {', '.join(missing)}")
        for local in view.locals:
            if missing := _missing(local.data, LOCAL_FIELDS):
                problems.append(f"{local.label}: no {', '.join(missing)}")
        if sum(i.kind != "accommodation" for i in view.items) >= 2 and not view.locals:
            problems.append(f"{where}: no local transport")
    return verdict(problems, "all required fields present")


@check("info.richness", "information", "Information Richness",
       f"at least {RICH_SHARE:.0%} of the POIs (meals, visits, hotels) carry a description or "
       f"tips of {MIN_TEXT}+ characters")  # fmt: skip
def richness(ctx: Context) -> Verdict:
    items = ctx.items
    if not items:
        return fail("no POI to describe")
    rich = sum(
        any(len((t or "").strip()) >= MIN_TEXT for t in (i.data.description, i.data.tips))
        for i in items
    )
    text = f"{rich} of {len(items)} POIs described"
    return Verdict(rich >= RICH_SHARE * len(items), text)
