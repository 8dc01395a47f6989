"""Format (1) and Authenticity (4) checks of Table 8."""

from __future__ import annotations

from travelgym.suites.behavior2trip.checks.base import (
    Verdict,
    check,
    fail,
    timed_item_check,
    verdict,
)
from travelgym.suites.behavior2trip.checks.context import Context, Item
from travelgym.suites.behavior2trip.checks.transport import DAY, TIME_TOLERANCE
from travelgym.suites.behavior2trip.plan import clock_minutes

LOCAL_MAX_MINUTES = 240  # a single local leg longer than this is never plausible
LOCAL_TOLERANCE = (15, 0.5)  # allowed |minutes - MapGuide|: max(15 min, 50 % of the estimate)


@check("format.json", "format", "JSON Format Validation",
       "the answer is a JSON list of day objects without malformed values; one day per trip day "
       "(numbered 1..N, dates matching the trip's); every day names its city, which is the "
       "destination or the departure city; the destination appears")  # fmt: skip
def format_json(ctx: Context) -> Verdict:
    problems = list(ctx.plan.issues)
    n = ctx.instruction.days
    if len(ctx.days) != n:
        problems.append(f"the plan has {len(ctx.days)} days, the trip {n}")
    allowed = {ctx.home, ctx.dest}
    named: set[str] = set()
    for view in ctx.days:
        day, where = view.day, f"day {view.index}"
        if day.day is None and day.date is None:
            problems.append(f"{where}: neither a day number nor a date")
        if day.day is not None and day.day != view.index:
            problems.append(f"{where}: numbered {day.day}")
        if day.date is not None and day.date != view.date:
            problems.append(f"{where}: date {day.date}, the trip's is {view.date}")
        cities = ctx.db.cities_in(day.city)
        named.update(cities)
        if not day.city:
            problems.append(f"{where}: no city")
        elif not cities:
            problems.append(f"{where}: unknown city {day.city!r}")
        elif not set(cities) <= allowed:
            problems.append(f"{where}: {day.city!r} is neither the destination nor the departure")
    if ctx.dest not in named:
        problems.append(f"no day is spent in {ctx.instruction.destination_city}")
    return verdict(problems, "well-formed plan covering the requested trip")


@check("auth.poi", "authenticity", "POI Authenticity",
       "every meal, attraction, entertainment and hotel is a database POI of its kind (by id, "
       "else by exact name) in the day's cities, and a given name matches the id's")  # fmt: skip
def poi(ctx: Context) -> Verdict:
    items = ctx.items
    if not items:
        return fail("the plan names no POI")
    return verdict([i.problem for i in items if i.problem], f"{len(items)} POIs found")


@check("auth.major_transport", "authenticity", "Major Transport Authenticity",
       "every intercity leg is a flight (that date), train or bus of the timetable on its route, "
       f"with the seat class offered and times within {TIME_TOLERANCE} min; day 1 travels from the departure "
       "city to the destination and the last day back")  # fmt: skip
def major_transport(ctx: Context) -> Verdict:
    problems = [g.problem for g in ctx.legs if g.problem]
    if ctx.home != ctx.dest and ctx.days:
        first, last = ctx.days[0], ctx.days[-1]
        if not (
            any(g.dep == ctx.home for g in first.legs)
            and any(g.arr == ctx.dest for g in first.legs)
        ):
            problems.append(f"day 1 has no intercity transport from {ctx.instruction.departure_city} "
                            f"to {ctx.instruction.destination_city}")  # fmt: skip
        if not (
            any(g.dep == ctx.dest for g in last.legs) and any(g.arr == ctx.home for g in last.legs)
        ):
            problems.append(f"the last day has no intercity transport back to "
                            f"{ctx.instruction.departure_city}")  # fmt: skip
    return verdict(problems, f"{len(ctx.legs)} intercity legs found")


@check("auth.local_transport", "authenticity", "Local Transport Authenticity",
       "every local leg uses a known mode (Subway only where there is a metro), takes "
       f"0-{LOCAL_MAX_MINUTES} min, and when both ends are known its minutes are within "
       "max(15 min, 50 %) of MapGuide's estimate for that mode")  # fmt: skip
def local_transport(ctx: Context) -> Verdict:
    problems = []
    for view in ctx.days:
        for local in view.locals:
            minutes = local.data.minutes
            if local.problem:
                problems.append(local.problem)
            elif minutes is None:
                continue  # missing minutes: info.sufficiency
            elif not 0 < minutes <= LOCAL_MAX_MINUTES:
                problems.append(f"{local.label}: {minutes:g} min")
            elif local.estimate is not None:
                slack = max(LOCAL_TOLERANCE[0], LOCAL_TOLERANCE[1] * local.estimate)
                if abs(minutes - local.estimate) > slack:
                    problems.append(
                        f"{local.label}: {minutes:g} min, MapGuide says {local.estimate:g}"
                    )
    return verdict(problems)


def within_hours(start: int, end: int, open_time: str, close_time: str) -> bool:
    """Whether a visit from ``start`` to ``end`` (minutes) fits opening hours (a close earlier
    than the opening is after midnight; ``24:00`` is midnight)."""
    o, c = clock_minutes(open_time), clock_minutes(close_time)
    if o is None or c is None:
        return True
    if c <= o:
        c += DAY
    return any(o <= start + shift and end + shift <= c for shift in (0, DAY))


@timed_item_check("auth.business_hours", "authenticity", "Business Hours Authenticity",
                  "every timed restaurant, attraction and entertainment visit lies within the "
                  "POI's opening hours")  # fmt: skip
def business_hours(item: Item) -> str | None:
    start, end = item.times
    if item.row is None or item.kind == "accommodation":
        return None
    end = start if end is None else end
    if within_hours(start, end, item.row["open_time"], item.row["close_time"]):
        return None
    hours = f"{item.row['open_time']}-{item.row['close_time']}"
    return f"{item.label}: {item.data.start_time}-{item.data.end_time} outside {hours}"
