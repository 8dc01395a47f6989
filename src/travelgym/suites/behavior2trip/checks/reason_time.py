"""Reasonableness checks of Table 8 about time: travel hours, transport durations, conflicts,
the daily time range and idle gaps. Untimed items are skipped here (info.sufficiency asks for
their times)."""

from __future__ import annotations

from collections.abc import Iterator

from travelgym.suites.behavior2trip.checks.base import (
    Verdict,
    check,
    day_check,
    timed_item_check,
    verdict,
)
from travelgym.suites.behavior2trip.checks.context import Context, DayView, Item
from travelgym.suites.behavior2trip.checks.transport import DAY
from travelgym.suites.behavior2trip.context import Place
from travelgym.suites.behavior2trip.plan import clock_minutes
from travelgym.suites.behavior2trip.tools.mapguide import city_routes

NIGHT = (clock_minutes("23:00"), clock_minutes("06:00"))  # no transport in [23:00, 06:00)
LATE_ARRIVAL = clock_minutes("18:00")
LOCAL_DAILY_LIMIT = 120  # minutes of local transport a day
MIN_GAP = 30  # minutes between two activities
DAY_RANGE = (clock_minutes("09:00"), clock_minutes("21:00"))
INTER_ATTRACTION_LIMIT = 60  # minutes of transport between two attractions
MAX_IDLE = 120  # minutes without anything planned inside DAY_RANGE


def _hhmm(minutes: int) -> str:
    minutes %= DAY
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _intervals(view: DayView, stays: bool) -> list[tuple[int, int, str]]:
    """(start, end, label) of the day's timed activities and intercity legs (and hotel
    check-ins as instants when ``stays``), by start."""
    out = []
    for item in view.items:
        start, end = item.times
        if start is None or (item.kind == "accommodation" and not stays):
            continue
        out.append((start, start if end is None else end, item.label))
    for leg in view.legs:
        dep, arr = leg.times
        if dep is not None:
            out.append((dep, dep if arr is None else arr, leg.label))
    return sorted(out)


@check("reason.no_midnight_travel", "reasonableness", "Avoid Midnight Travel",
       "no intercity leg (departure to arrival) and no timed local leg runs between 23:00 and "
       "06:00")  # fmt: skip
def no_midnight_travel(ctx: Context) -> Verdict:
    late, early = NIGHT
    problems = []
    for leg in ctx.legs:
        dep, arr = leg.times
        if dep is not None and (dep < early or (arr if arr is not None else dep) > late):
            problems.append(f"{leg.label}: {_hhmm(dep)}-{_hhmm(arr if arr is not None else dep)}")
    for view in ctx.days:
        for local in view.locals:
            start = clock_minutes(local.data.start_time)
            if start is not None and (start < early or start + (local.data.minutes or 0) > late):
                problems.append(f"{local.label} at {local.data.start_time}")
    return verdict(problems)


@check("reason.no_attractions_after_late_arrival", "reasonableness",
       "No Attractions After Late Major Transport",
       "on a day whose intercity leg arrives at or after 18:00, no attraction starts after the "
       "arrival")  # fmt: skip
def no_attractions_after_late_arrival(ctx: Context) -> Verdict:
    problems = []
    for view in ctx.days:
        for leg in view.legs:
            arr = leg.times[1]
            if arr is None or not LATE_ARRIVAL <= arr < DAY:
                continue
            for item in view.items:
                start = item.times[0]
                if item.is_attraction and start is not None and start >= arr:
                    problems.append(f"{item.label} after {leg.label} arriving at {_hhmm(arr)}")
    return verdict(problems)


@day_check("reason.local_transport_limit", "reasonableness", "Local Transport Time Limit",
           f"local transport takes at most {LOCAL_DAILY_LIMIT} min a day in total")  # fmt: skip
def local_transport_limit(view: DayView) -> Iterator[str]:
    total = sum(local.data.minutes or 0 for local in view.locals)
    if total > LOCAL_DAILY_LIMIT:
        yield f"day {view.index}: {total:g} min of local transport"


@day_check("reason.no_time_conflicts", "reasonableness", "No Time Conflicts",
           f"timed meals, visits and intercity legs of a day do not overlap and leave at least "
           f"{MIN_GAP} min between one end and the next start")  # fmt: skip
def no_time_conflicts(view: DayView) -> Iterator[str]:
    last_end, last_label = None, ""
    for start, end, label in _intervals(view, stays=False):
        if last_end is not None and start - last_end < MIN_GAP:
            yield f"{label} at {_hhmm(start)}, {last_label} ends {_hhmm(last_end)}"
        if last_end is None or end >= last_end:
            last_end, last_label = end, label


def _activity(item: Item) -> bool:
    return item.kind in ("lunch", "dinner", "attraction", "entertainment")


@timed_item_check("reason.time_range", "reasonableness", "Reasonable Time Range",
                  "lunches, dinners, attractions and entertainment start at or after 09:00 and "
                  "end by 21:00 (breakfast, transport and check-in are exempt)")  # fmt: skip
def time_range(item: Item) -> str | None:
    lo, hi = DAY_RANGE
    start, end = item.times
    if _activity(item) and (start < lo or (end if end is not None else start) > hi):
        return f"{item.label}: {item.data.start_time}-{item.data.end_time or '?'}"
    return None


@day_check("reason.inter_attraction_transport", "reasonableness",
           "Inter-attraction Transport Time",
           f"between two attractions visited one after the other, transport takes at most "
           f"{INTER_ATTRACTION_LIMIT} min (the plan's leg, else MapGuide's taxi estimate)")  # fmt: skip
def inter_attraction_transport(view: DayView) -> Iterator[str]:
    order = [i for i in view.ordered() if i.times[0] is not None]
    for a, b in zip(order, order[1:], strict=False):
        if not (a.is_attraction and b.is_attraction):
            continue
        legs = [x for x in view.locals if x.origin_item is a and x.target_item is b]
        minutes = legs[0].data.minutes if legs and legs[0].data.minutes is not None else None
        if minutes is None:
            minutes = _taxi_minutes(a, b)
        if minutes is not None and minutes > INTER_ATTRACTION_LIMIT:
            yield f"{a.label} -> {b.label}: {minutes:g} min"


def _taxi_minutes(a: Item, b: Item) -> float | None:
    if a.row is None or b.row is None or a.row["city_id"] != b.row["city_id"]:
        return None
    pa, pb = (Place(r["name"], "", None, r["city"], r["lat"], r["lon"]) for r in (a.row, b.row))
    return next(r["minutes"] for r in city_routes(pa, pb)[1] if r["mode"] == "Taxi")


@day_check("reason.no_long_gaps", "reasonableness", "No Long Continuous Gaps",
           f"between consecutive timed items of a day (meals, visits, intercity legs, check-in) "
           f"no more than {MAX_IDLE} min of 09:00-21:00 is left idle")  # fmt: skip
def no_long_gaps(view: DayView) -> Iterator[str]:
    lo, hi = DAY_RANGE
    last_end = None
    for start, end, label in _intervals(view, stays=True):
        if last_end is not None:
            gap = min(start, hi) - max(last_end, lo)
            if gap > MAX_IDLE:
                yield f"day {view.index}: {gap} min idle before {label}"
        last_end = end if last_end is None else max(last_end, end)
