"""Reasonableness checks of Table 8 about each day's contents: meals, hotels, attractions,
weather and city information."""

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
from travelgym.suites.behavior2trip.checks.credit import repeats
from travelgym.suites.behavior2trip.plan import MEALS, clock_minutes

MEAL_WINDOWS = {"breakfast": ("06:00", "10:00"), "lunch": ("11:00", "14:00"),
                "dinner": ("17:00", "21:00")}  # fmt: skip
CHECK_IN_AFTER = "18:00"
MAX_ATTRACTIONS = 4


@day_check("reason.complete_meals", "reasonableness", "Complete Meal Arrangement",
       "every day has a breakfast, a lunch and a dinner (each with a name or id)",
       "three meals every day")  # fmt: skip
def complete_meals(view: DayView) -> Iterator[str]:
    for meal in MEALS:
        item = getattr(view.day, meal)
        if item is None or not (item.name or item.id):
            yield f"day {view.index}: no {meal}"


@check("reason.non_duplicate_restaurants", "reasonableness", "Non-duplicate Restaurants",
       "no restaurant (same id, or same name when unresolved) is used twice in the plan")  # fmt: skip
def non_duplicate_restaurants(ctx: Context) -> Verdict:
    problems, distinct = repeats(ctx, MEALS)
    return verdict(problems, f"{distinct} distinct restaurants")


@timed_item_check("reason.meal_times", "reasonableness", "Reasonable Meal Times",
                  "meals start in their window: breakfast 06:00-10:00, lunch 11:00-14:00, "
                  "dinner 17:00-21:00 (untimed meals are left to info.sufficiency)")  # fmt: skip
def meal_times(item: Item) -> str | None:
    if item.kind not in MEALS:
        return None
    lo, hi = MEAL_WINDOWS[item.kind]
    if clock_minutes(lo) <= item.times[0] <= clock_minutes(hi):
        return None
    return f"{item.label} at {item.data.start_time}, not within {lo}-{hi}"


@check("reason.daily_accommodation", "reasonableness", "Daily Accommodation Arrangement",
       "every day but the last (one per night of the trip) has a hotel with a name or id")  # fmt: skip
def daily_accommodation(ctx: Context) -> Verdict:
    problems = []
    for view in ctx.days[: ctx.nights]:
        stay = view.day.accommodation
        if stay is None or not (stay.name or stay.id):
            problems.append(f"day {view.index}: no accommodation")
    return verdict(problems, f"a hotel for each of the {ctx.nights} nights")


@timed_item_check("reason.accommodation_time", "reasonableness",
                  "Reasonable Accommodation Time",
                  f"every hotel check-in time is at or after {CHECK_IN_AFTER} (and before "
                  "midnight)")  # fmt: skip
def accommodation_time(item: Item) -> str | None:
    if item.kind == "accommodation" and item.times[0] < clock_minutes(CHECK_IN_AFTER):
        return f"{item.label}: check-in at {item.data.check_in_time}"
    return None


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


@day_check("reason.at_least_one_attraction", "reasonableness", "At Least One Attraction",
           "every day has at least one attraction found in the attractions table")  # fmt: skip
def at_least_one_attraction(view: DayView) -> Iterator[str]:
    if not any(i.is_attraction and i.row is not None for i in view.items):
        yield f"day {view.index}: no valid attraction"


@check("reason.attraction_limit", "reasonableness", "Attraction Quantity Limit",
       f"no day has more than {MAX_ATTRACTIONS} attractions, and no attraction or entertainment "
       "venue is visited twice in the plan (checks version 4)")  # fmt: skip
def attraction_limit(ctx: Context) -> Verdict:
    problems, _ = repeats(ctx, ("attraction", "entertainment"))
    for view in ctx.days:
        count = sum(i.is_attraction for i in view.items)
        if count > MAX_ATTRACTIONS:
            problems.append(f"day {view.index}: {count} attractions")
    return verdict(problems)
