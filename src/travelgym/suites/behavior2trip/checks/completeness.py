"""No credit without content: what a plan must contain before a check about it can pass.

A check judges a *subject* (the meals, the hotels, the attractions, the intercity legs, the
local legs, the times). Judged on a plan that lacks its subject, most rules hold vacuously: a
plan of bare day skeletons has no meal outside its window, no time conflict, no hotel below the
star requirement and costs nothing. So every check names the subjects it needs
(``Check.needs``) and fails, without being run, when the plan's shape leaves one of them
incomplete. What the shape makes genuinely not applicable is not required: a day with no
intercity travel has no leg to judge (only the first and last days must travel), a trip's last
day has no night, a day with fewer than two places has no local transport to list.

:func:`completeness` returns, per subject, the first thing missing (``None``: complete). The
rules are listed in ``docs/behavior2trip/constraints.md``.
"""

from __future__ import annotations

from travelgym.suites.behavior2trip.checks.context import Context
from travelgym.suites.behavior2trip.plan import MEALS, Stay

SUBJECTS = ("days", "meals", "accommodation", "attractions", "intercity", "local", "times")
# what each subject requires, in words (for the docs and the failure reasons)
RULES = {
    "days": "the plan has one day per trip day",
    "meals": "every day has a breakfast, a lunch and a dinner, each with a name or id",
    "accommodation": "every day but the last has a hotel with a name or id",
    "attractions": "every day has at least one attraction or entertainment visit with a name or id",
    "intercity": "the first day travels out and the last day travels back (a leg with a "
    "number or mode on each)",
    "local": "every day with two or more meals or visits lists its local transport",
    "times": "every meal and visit has a start and end time, every hotel a check-in time and "
    "every intercity leg a departure and arrival time (the plan's or the timetable's)",
}


def _named(item) -> bool:
    return item is not None and bool(item.name or item.id)


def completeness(ctx: Context) -> dict[str, str | None]:
    """Per subject of :data:`SUBJECTS`, the first thing the plan lacks, or ``None``."""
    out: dict[str, str | None] = dict.fromkeys(SUBJECTS)
    want = ctx.instruction.days
    if len(ctx.days) != want:
        out["days"] = f"the plan has {len(ctx.days)} days, the trip {want}"
    for view in ctx.days:
        where, day = f"day {view.index}", view.day
        if out["meals"] is None:
            missing = [m for m in MEALS if not _named(getattr(day, m))]
            if missing:
                out["meals"] = f"{where} has no {missing[0]}"
        night = view.index <= ctx.nights
        if out["accommodation"] is None and night and not _named(day.accommodation):
            out["accommodation"] = f"{where} has no hotel"
        visits = [*day.attractions, *day.entertainment]
        if out["attractions"] is None and not any(_named(v) for v in visits):
            out["attractions"] = f"{where} has no attraction"
        places = sum(i.kind != "accommodation" for i in view.items)
        if out["local"] is None and places >= 2 and not view.locals:
            out["local"] = f"{where} has {places} places and no local transport"
        if out["times"] is None:
            out["times"] = _untimed(view)
    if ctx.home != ctx.dest and ctx.days:
        for view, way in ((ctx.days[0], "out"), (ctx.days[-1], "back")):
            if not any(g.data.number or g.data.mode for g in view.legs):
                out["intercity"] = out["intercity"] or f"day {view.index} does not travel {way}"
    return out


def _untimed(view) -> str | None:
    for item in view.items:
        if isinstance(item.data, Stay):
            if item.data.check_in_time is None:
                return f"{item.label} has no check-in time"
        elif item.data.start_time is None or item.data.end_time is None:
            return f"{item.label} has no start or end time"
    for leg in view.legs:
        dep, arr = leg.times
        if dep is None or arr is None:
            return f"{leg.label} has no departure or arrival time"
    return None


ALL_POIS = ("meals", "accommodation", "attractions")
TIMED = ("meals", "attractions", "times")
# check id -> the subjects it judges; format.json alone judges the raw answer. Local transport
# connects the day's places, so it is judged only on a plan that has them all.
NEEDS: dict[str, tuple[str, ...]] = {
    "format.json": (),
    "auth.poi": ALL_POIS,
    "auth.major_transport": (),
    "auth.local_transport": ("local", *ALL_POIS),
    "auth.business_hours": TIMED,
    "reason.complete_meals": (),
    "reason.non_duplicate_restaurants": ("meals",),
    "reason.meal_times": ("meals", "times"),
    "reason.daily_accommodation": (),
    "reason.accommodation_time": ("accommodation", "times"),
    "reason.no_midnight_travel": ("intercity", "times"),
    "reason.no_attractions_after_late_arrival": ("intercity", *TIMED),
    "reason.local_transport_limit": ("local", *ALL_POIS),
    "reason.weather_city_info": (),
    "reason.at_least_one_attraction": (),
    "reason.attraction_limit": ("attractions",),
    "reason.no_time_conflicts": ("intercity", *TIMED),
    "reason.time_range": TIMED,
    "reason.inter_attraction_transport": ("attractions", "local"),
    "reason.no_long_gaps": ("intercity", "accommodation", *TIMED),
    "pref.hotel_star": ("accommodation",),
    "pref.hotel_amenities": ("accommodation",),
    "pref.attraction_type": ("attractions",),
    "pref.walking_tolerance": ("attractions",),
    "pref.cuisine": ("meals",),
    "pref.price_level": ("meals",),
    "pref.dining_environment": ("meals",),
    "pref.transport_mode": ("intercity",),
    "pref.seat_class": ("intercity",),
    "pref.budget": ("intercity", *ALL_POIS),
    "info.sufficiency": (),
    "info.richness": ALL_POIS,
}


def gate(check_id: str, gaps: dict[str, str | None]) -> str | None:
    """Why the check ``check_id`` cannot pass on a plan with these ``gaps`` (else ``None``).
    Every check but ``format.json``, which judges the answer's shape itself, needs all the
    trip's days besides its own subjects: a rule held on three days of a five-day trip is not
    held."""
    if check_id == "format.json":
        return None
    for subject in ("days", *NEEDS[check_id]):
        if gaps.get(subject):
            return f"incomplete plan ({subject}): {gaps[subject]}"
    return None
