"""Reasonableness checks of Table 8 about each day's contents: meals, hotels, attractions,
weather and city information."""

from __future__ import annotations

from travelgym.suites.behavior2trip.checks.base import Verdict, check, verdict
from travelgym.suites.behavior2trip.checks.context import Context
from travelgym.suites.behavior2trip.context import normalize
from travelgym.suites.behavior2trip.plan import MEALS, clock_minutes

MEAL_WINDOWS = {"breakfast": ("06:00", "10:00"), "lunch": ("11:00", "14:00"),
                "dinner": ("17:00", "21:00")}  # fmt: skip
CHECK_IN_AFTER = "18:00"
MAX_ATTRACTIONS = 4


@check("reason.complete_meals", "reasonableness", "Complete Meal Arrangement",
       "every day has a breakfast, a lunch and a dinner (each with a name or id)")  # fmt: skip
def complete_meals(ctx: Context) -> Verdict:
    problems = []
    for view in ctx.days:
        for meal in MEALS:
            item = getattr(view.day, meal)
            if item is None or not (item.name or item.id):
                problems.append(f"day {view.index}: no {meal}")
    return verdict(problems, "three meals every day")


@check("reason.non_duplicate_restaurants", "reasonableness", "Non-duplicate Restaurants",
       "no restaurant (same id, or same name when unresolved) is used twice in the plan")  # fmt: skip
def non_duplicate_restaurants(ctx: Context) -> Verdict:
    seen: dict[str, str] = {}
    problems = []
    for item in ctx.items:
        if item.kind not in MEALS:
            continue
        key = (
            item.row["restaurant_id"]
            if item.row
            else normalize(item.data.name or item.data.id or "")
        )
        if not key:
            continue
        if key in seen:
            problems.append(f"{item.label} repeats {seen[key]}")
        else:
            seen[key] = item.label
    return verdict(problems, f"{len(seen)} distinct restaurants")


@check("reason.meal_times", "reasonableness", "Reasonable Meal Times",
       "meals start in their window: breakfast 06:00-10:00, lunch 11:00-14:00, dinner "
       "17:00-21:00 (untimed meals are left to info.sufficiency)")  # fmt: skip
def meal_times(ctx: Context) -> Verdict:
    problems = []
    for item in ctx.items:
        start = item.times[0]
        if item.kind not in MEALS or start is None:
            continue
        lo, hi = MEAL_WINDOWS[item.kind]
        if not clock_minutes(lo) <= start <= clock_minutes(hi):
            problems.append(f"{item.label} at {item.data.start_time}, not within {lo}-{hi}")
    return verdict(problems)


@check("reason.daily_accommodation", "reasonableness", "Daily Accommodation Arrangement",
       "every day but the last (one per night of the trip) has a hotel with a name or id")  # fmt: skip
def daily_accommodation(ctx: Context) -> Verdict:
    problems = []
    for view in ctx.days[: ctx.nights]:
        stay = view.day.accommodation
        if stay is None or not (stay.name or stay.id):
            problems.append(f"day {view.index}: no accommodation")
    return verdict(problems, f"a hotel for each of the {ctx.nights} nights")


@check("reason.accommodation_time", "reasonableness", "Reasonable Accommodation Time",
       f"every hotel check-in time is at or after {CHECK_IN_AFTER} (and before midnight)")  # fmt: skip
def accommodation_time(ctx: Context) -> Verdict:
    problems = []
    for item in ctx.items:
        start = item.times[0]
        if (
            item.kind == "accommodation"
            and start is not None
            and start < clock_minutes(CHECK_IN_AFTER)
        ):
            problems.append(f"{item.label}: check-in at {item.data.check_in_time}")
    return verdict(problems)


@check("reason.weather_city_info", "reasonableness", "Weather and City Info Included",
       "every day has a weather text, and every city the days are spent in other than the "
       "departure city has city information on at least one day")  # fmt: skip
def weather_city_info(ctx: Context) -> Verdict:
    problems = [f"day {v.index}: no weather" for v in ctx.days if not v.day.weather]
    informed, cities = set(), []
    for view in ctx.days:
        named = ctx.db.cities_in(view.day.city)
        cities += named
        if view.day.city_info:
            informed.update(named)
    for city_id in dict.fromkeys(cities):
        if city_id != ctx.home and city_id not in informed:
            problems.append(f"no city information for {ctx.db.city(city_id)['name']}")
    return verdict(problems)


@check("reason.at_least_one_attraction", "reasonableness", "At Least One Attraction",
       "every day has at least one attraction found in the attractions table")  # fmt: skip
def at_least_one_attraction(ctx: Context) -> Verdict:
    problems = []
    for view in ctx.days:
        if not any(i.is_attraction and i.row is not None for i in view.items):
            problems.append(f"day {view.index}: no valid attraction")
    return verdict(problems)


@check("reason.attraction_limit", "reasonableness", "Attraction Quantity Limit",
       f"no day has more than {MAX_ATTRACTIONS} attractions")  # fmt: skip
def attraction_limit(ctx: Context) -> Verdict:
    problems = []
    for view in ctx.days:
        count = sum(i.is_attraction for i in view.items)
        if count > MAX_ATTRACTIONS:
            problems.append(f"day {view.index}: {count} attractions")
    return verdict(problems)
