"""TravelPlanner's 8 commonsense constraints, each deciding as the published evaluation
script does (``evaluation/commonsense_constraint.py``). None of them is ever "not applicable":
the script gives every delivered plan a True/False on all 8. Where the script would raise on a
plan it cannot parse, the constraint fails with the reason instead."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import groupby

from travelgym.suites.travelplanner.evaluation.base import (
    Constraint,
    Verdict,
    accommodation_matches,
    attraction_found,
    days_of,
    register,
    restaurant_matches,
)
from travelgym.suites.travelplanner.evaluation.parsing import (
    MEALS,
    NO_INFO_DAY,
    PLAN_FIELDS,
    day_attractions,
    day_cities,
    drive_mode,
    filled,
    filled_meals,
    flight_number,
    from_to,
    is_flight,
    is_travel_day,
    leg,
    present,
    strip_parenthesis,
    transport_kind,
)
from travelgym.suites.travelplanner.records import DayPlan


@register("commonsense", "within_sandbox", "Within Sandbox", "is_valid_information_in_sandbox",
          "Every flight, drive, restaurant, attraction and accommodation is in the "
          "sandbox.")  # fmt: skip
class WithinSandbox(Constraint):
    def check(self, query, plan, sandbox):
        for n, day in enumerate(days_of(query, plan), 1):
            value = day.transportation
            if filled(value):
                origin, destination = leg(day)
                if is_flight(value):
                    number = flight_number(value)
                    if origin is None or destination is None or number is None:
                        return Verdict.fail(f"the flight in day {n} cannot be parsed")
                    found = sandbox.flight(number, strip_parenthesis(origin),
                                           strip_parenthesis(destination))  # fmt: skip
                    if found is None:
                        return Verdict.fail(f"the flight number in day {n} is not in the sandbox")
                elif mode := drive_mode(value):
                    if origin is None or destination is None:
                        origin = destination = "-"
                    drive = sandbox.drive(strip_parenthesis(origin),
                                          strip_parenthesis(destination), mode)  # fmt: skip
                    if drive is None or drive.cost is None:
                        return Verdict.fail(f"the {mode} in day {n} is not in the sandbox")
            for meal, text in filled_meals(day):
                if not restaurant_matches(sandbox, text):
                    return Verdict.fail(f"the {meal} in day {n} is not in the sandbox")
            for attraction in day_attractions(day):
                if not attraction_found(sandbox, attraction):
                    return Verdict.fail(f"the attraction {attraction!r} in day {n} is not in "
                                        "the sandbox")  # fmt: skip
            if filled(day.accommodation) and not accommodation_matches(sandbox, day.accommodation):
                return Verdict.fail(f"the accommodation in day {n} is not in the sandbox")
        return Verdict.ok()


def _route(query, days) -> tuple[list[str] | None, str | None]:
    # the cities the days' current cities name in order, a leg giving both its ends, as the
    # script's route and visiting-city checks read them; else the reason they cannot be read
    route: list[str] = []
    for n, day in enumerate(days, 1):
        if is_travel_day(day.current_city):
            origin, destination = from_to(day.current_city)
            if origin is None or destination is None:
                return None, f"the current city of day {n} cannot be parsed"
            origin, destination = strip_parenthesis(origin), strip_parenthesis(destination)
            if n == 1 and origin != query.org:
                return None, f"the first day's city should be {query.org}"
            route += [origin, destination]
        else:
            route.append(strip_parenthesis(day.current_city))
    return route, None


@register("commonsense", "complete_information", "Complete Information", "is_not_absent",
          "The plan covers the query's days and cities, every day holds every field, "
          "and no more than half of the information is absent.")  # fmt: skip
class CompleteInformation(Constraint):
    def check(self, query, plan, sandbox):
        days = days_of(query, plan)
        counted = [d for d in days if d.model_fields_set and d.current_city != NO_INFO_DAY]
        if len(counted) != query.days:
            return Verdict.fail(f"the plan should have {query.days} days")
        # the script's is_valid_visiting_city_number: the cities named, origin excluded
        route, problem = _route(query, days)
        if route is None or len(set(route) - {query.org}) != query.visiting_city_number:
            return Verdict.fail(problem or f"the plan should visit {query.visiting_city_number} "
                                "cities")  # fmt: skip
        information = 0
        for n, day in enumerate(days, 1):
            missing = next((f for f in PLAN_FIELDS if not present(day, f)), None)
            if missing:
                return Verdict.fail(f"day {n} has no {missing} field")
            city = day.current_city
            # the script's tests, with their spaces: "from "/"to " for a travel day here
            if ("from " in city or "to " in city) and not filled(day.transportation):
                return Verdict.fail(f"day {n} travels without transportation")
            if "from " not in city and " to " not in city and not filled(day.attraction):
                return Verdict.fail(f"day {n} has no attraction")
            if n != query.days and not filled(day.accommodation):
                return Verdict.fail(f"day {n} has no accommodation")
            if "from " not in city and not all(filled(getattr(day, m)) for m in MEALS):
                return Verdict.fail(f"day {n} misses a meal")
            # every key the day holds counts, ``days`` and ``current_city`` included
            information += sum(1 for f in day.model_fields_set
                               if getattr(day, f) and getattr(day, f) != "-")  # fmt: skip
        if information / (6 * query.days) < 0.5:
            return Verdict.fail("more than half of the information is absent")
        return Verdict.ok()


@register("commonsense", "within_current_city", "Within Current City",
          "is_valid_information_in_current_city",
          "Each day's transportation, meals, attractions and stay are in its city.")  # fmt: skip
class WithinCurrentCity(Constraint):
    def check(self, query, plan, sandbox):
        for n, day in enumerate(days_of(query, plan), 1):
            # on a day that is not a leg the script iterates the city name's *characters*
            # (a string where a list was meant): reproduced, as it decides verdicts
            cities = day_cities(day.current_city)
            if cities is None:
                return Verdict.fail(f"the current city of day {n} cannot be parsed")
            if filled(day.transportation) and any(c not in day.transportation for c in cities):
                return Verdict.fail(f"the transportation in day {n} is in another city")
            for meal, text in filled_meals(day):
                if not any(c in text for c in cities):
                    return Verdict.fail(f"the {meal} in day {n} is in another city")
            for attraction in day_attractions(day):
                if not any(c in attraction for c in cities):
                    return Verdict.fail(f"an attraction in day {n} is in another city")
            # an empty current city has no last entry: the script raises there
            if filled(day.accommodation) and (not cities or cities[-1] not in day.accommodation):
                return Verdict.fail(f"the accommodation in day {n} is in another city")
        return Verdict.ok()


def valid_city_sequence(cities: list[str]) -> bool:
    """The script's route shape: at least 3 entries; every city but the first and last stays
    for a run of at least two entries and never comes back once left."""
    if len(cities) < 3:
        return False
    last = len(cities) - 1
    seen: set[str] = set()
    start = 0
    for city, run in groupby(cities):
        length = len(list(run))
        if city in seen and start not in (0, last):
            return False
        if length == 1 and 0 < start < last:
            return False
        seen.add(city)
        start += length
    return True


# the script's key is misspelt (sic)
@register("commonsense", "reasonable_city_route", "Reasonable City Route",
          "is_reasonalbe_visiting_city",
          "The route starts at the origin, returns to it, visits each city in one "
          "stretch, and (trips over 3 days) stays in the destination state.")  # fmt: skip
class ReasonableCityRoute(Constraint):
    def check(self, query, plan, sandbox):
        route, problem = _route(query, days_of(query, plan))
        if route is None:
            return Verdict.fail(problem)
        if not route or route[0] != route[-1]:
            return Verdict.fail("the trip should be a closed circle")
        if not valid_city_sequence(route):
            return Verdict.fail("the city sequence is invalid")
        for i, city in enumerate(route):
            state = sandbox.city_state(city)
            if state is None:
                return Verdict.fail(f"{city} is not a valid city")
            if i not in (0, len(route) - 1) and query.days > 3 and state != query.dest:
                return Verdict.fail(f"{city} is not in {query.dest}")
        return Verdict.ok()


def _first_repeat(days: list[DayPlan], entries: Callable[[DayPlan], Iterable[tuple[str, str]]]
                  ) -> tuple[int, str, str] | None:  # fmt: skip
    # the first (day number, what, text) of the days' ``entries`` whose text came before
    seen: set[str] = set()
    for n, day in enumerate(days, 1):
        for what, text in entries(day):
            if text in seen:
                return n, what, text
            seen.add(text)
    return None


@register("commonsense", "diverse_restaurants", "Diverse Restaurants", "is_valid_restaurants",
          "No restaurant is chosen twice (the meal texts compared as written).")  # fmt: skip
class DiverseRestaurants(Constraint):
    def check(self, query, plan, sandbox):
        repeat = _first_repeat(days_of(query, plan), filled_meals)
        if repeat is None:
            return Verdict.ok()
        n, meal, text = repeat
        return Verdict.fail(f"the {meal} of day {n} repeats {text!r}")


@register("commonsense", "diverse_attractions", "Diverse Attractions", "is_valid_attractions",
          "No attraction is visited twice (the ';'-separated texts compared as "
          "written).")  # fmt: skip
class DiverseAttractions(Constraint):
    def check(self, query, plan, sandbox):
        repeat = _first_repeat(days_of(query, plan),
                               lambda day: (("attraction", a) for a in day_attractions(day)))  # fmt: skip
        if repeat is None:
            return Verdict.ok()
        n, _, attraction = repeat
        return Verdict.fail(f"the attraction {attraction!r} in day {n} repeats")


@register("commonsense", "non_conflicting_transportation", "Non-conf. Transportation",
          "is_valid_transportation",
          "Day 1 has transportation, and self-driving is never mixed with flights "
          "or taxis.")  # fmt: skip
class NonConflictingTransportation(Constraint):
    def check(self, query, plan, sandbox):
        if not plan or not filled(plan[0].transportation):
            return Verdict.fail("the transportation in day 1 should not be empty")
        kinds = {transport_kind(d.transportation) for d in days_of(query, plan)
                 if filled(d.transportation)}  # fmt: skip
        if "Self-driving" in kinds and ({"Flight", "Taxi"} & kinds):
            return Verdict.fail("the transportation is conflicting")
        return Verdict.ok()


@register("commonsense", "valid_accommodation", "Minimum Nights Stay", "is_valid_accommodation",
          "Each consecutive stay at an accommodation lasts at least its minimum "
          "nights (checked where the name matches exactly one record).")  # fmt: skip
class ValidAccommodation(Constraint):
    def check(self, query, plan, sandbox):
        days = days_of(query, plan)
        if any(not present(day, "accommodation") for day in days):
            return Verdict.fail("a day has no accommodation field")
        for text, run in groupby(day.accommodation for day in days):
            nights = len(list(run))
            if text in ("-", ""):
                continue
            matches = accommodation_matches(sandbox, text)
            # the script checks only a stay whose name matches exactly one record
            if len(matches) == 1 and nights < matches[0].minimum_nights:
                return Verdict.fail(f"{text!r} needs {matches[0].minimum_nights} nights, "
                                    f"the plan stays {nights}")  # fmt: skip
        return Verdict.ok()
