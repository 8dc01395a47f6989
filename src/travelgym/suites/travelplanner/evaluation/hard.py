"""TravelPlanner's 5 hard constraints, deciding as the published evaluation script does
(``evaluation/hard_constraint.py``): the budget always applies; room rule, room type, cuisine
and transportation only where the query's ``local_constraint`` sets them (``None`` otherwise).
Records are looked up as the script does: the first of the city's rows whose name contains the
plan's name."""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any, ClassVar

from travelgym.suites.travelplanner.evaluation.base import (
    Constraint,
    Verdict,
    accommodation_matches,
    days_of,
    register,
    restaurant_matches,
)
from travelgym.suites.travelplanner.evaluation.parsing import (
    drive_mode,
    filled,
    filled_meals,
    flight_number,
    is_flight,
    leg,
    name_city,
    strip_parenthesis,
)
from travelgym.suites.travelplanner.records import DayPlan, Query
from travelgym.suites.travelplanner.sandbox import Sandbox

# people per vehicle for the two ground modes
_SEATS = {"self-driving": 5, "taxi": 4}


def total_cost(query: Query, plan: list[DayPlan], sandbox: Sandbox) -> float:
    """The plan's cost as the script computes it: each flight's price × people; each drive's
    cost × cars (``ceil(people / 5)`` self-driving, ``ceil(people / 4)`` taxi); each meal's
    average cost × people; each night's price × rooms (``ceil(people / maximum occupancy)``).
    What the sandbox lacks costs nothing (the within-sandbox check fails such plans first)."""
    people = query.people_number
    cost = 0.0
    for day in days_of(query, plan):
        value = day.transportation
        origin, destination = leg(day)
        if filled(value) and origin is not None and destination is not None:
            origin, destination = strip_parenthesis(origin), strip_parenthesis(destination)
            if is_flight(value):
                number = flight_number(value)
                # the script finds the price by the number alone; numbers are unique rows of
                # the flights table, so the route narrows nothing a passing plan names
                found = sandbox.flight(number, origin, destination) if number else None
                cost += found.price * people if found else 0
            elif mode := drive_mode(value):
                drive = sandbox.drive(origin, destination, mode)
                if drive is not None and drive.cost is not None:
                    cost += drive.cost * math.ceil(people / _SEATS[mode])
        for _, text in filled_meals(day):
            if matches := restaurant_matches(sandbox, text):
                cost += matches[0].average_cost * people
        if filled(day.accommodation) and (
            stays := accommodation_matches(sandbox, day.accommodation)
        ):
            rooms = math.ceil(people / max(stays[0].maximum_occupancy, 1))
            cost += stays[0].price * rooms
    return cost


@register("hard", "budget", "Budget", "valid_cost",
          "The plan's total cost is within the query's budget.")  # fmt: skip
class Budget(Constraint):
    def check(self, query, plan, sandbox):
        cost = total_cost(query, plan, sandbox)
        if cost <= query.budget:
            return Verdict.ok()
        return Verdict.fail(f"the plan costs {cost:g}, over the budget of {query.budget:g}")


class OptionalHardConstraint(Constraint):
    """A hard constraint that applies only where the query's ``local_constraint`` sets its
    ``setting`` field; :meth:`check_wanted` judges the plan against the value set."""

    setting: ClassVar[str]

    def check(self, query, plan, sandbox):
        wanted = getattr(query.local_constraint, self.setting)
        # an empty cuisine list sets nothing either
        if wanted is None or wanted == []:
            return Verdict.not_applicable()
        return self.check_wanted(wanted, query, plan, sandbox)

    @abstractmethod
    def check_wanted(self, wanted: Any, query: Query, plan: list[DayPlan],
                     sandbox: Sandbox) -> Verdict:  # fmt: skip
        """The verdict on ``plan`` where the query's ``setting`` is ``wanted``."""


# a house rule the query asks for, and the accommodation rule that forbids it (an older copy of
# the script misspelt "parties" as "parities"; the published one tests "parties")
_FORBIDDING = {
    "smoking": "No smoking",
    "parties": "No parties",
    "children under 10": "No children under 10",
    "visitors": "No visitors",
    "pets": "No pets",
}


def _first_stays(query, plan, sandbox):
    for n, day in enumerate(days_of(query, plan), 1):
        if filled(day.accommodation) and (
            stays := accommodation_matches(sandbox, day.accommodation)
        ):
            yield n, stays[0]


@register("hard", "room_rule", "Room Rule", "valid_room_rule",
          "No accommodation's house rules forbid what the query asks for.")  # fmt: skip
class RoomRule(OptionalHardConstraint):
    setting = "house_rule"

    def check_wanted(self, rule, query, plan, sandbox):
        forbidding = _FORBIDDING.get(rule)
        for n, stay in _first_stays(query, plan, sandbox):
            if forbidding and forbidding in stay.house_rules:
                return Verdict.fail(f"the accommodation of day {n} says {forbidding!r}")
        return Verdict.ok()


# the room types each query value rejects, as the script tests them
_ROOM_TYPE_OK = {
    "not shared room": lambda t: t != "Shared room",
    "shared room": lambda t: t == "Shared room",
    "private room": lambda t: t == "Private room",
    "entire room": lambda t: t == "Entire home/apt",
}


@register("hard", "room_type", "Room Type", "valid_room_type",
          "Every accommodation is of the room type the query asks for.")  # fmt: skip
class RoomType(OptionalHardConstraint):
    setting = "room_type"

    def check_wanted(self, wanted, query, plan, sandbox):
        accepts = _ROOM_TYPE_OK.get(wanted, lambda _t: True)
        for n, stay in _first_stays(query, plan, sandbox):
            if not accepts(stay.room_type):
                return Verdict.fail(f"the accommodation of day {n} is a {stay.room_type}, "
                                    f"not a {wanted}")  # fmt: skip
        return Verdict.ok()


@register("hard", "cuisine", "Cuisine", "valid_cuisine",
          "Every cuisine the query asks for is served by a meal outside the origin.")  # fmt: skip
class Cuisine(OptionalHardConstraint):
    setting = "cuisine"

    def check_wanted(self, wanted, query, plan, sandbox):
        served: set[str] = set()
        for day in days_of(query, plan):
            for _, text in filled_meals(day):
                parsed = name_city(text)
                # the script's ``continue`` leaves the meal loop it has unrolled: a meal in the
                # origin city skips the rest of that day's meals too
                if parsed and parsed[1] == query.org:
                    break
                if matches := restaurant_matches(sandbox, text):
                    served |= {c for c in wanted if c in matches[0].cuisines}
        missing = [c for c in wanted if c not in served]
        return Verdict.fail(f"the cuisine {missing[0]} is not served") if missing else Verdict.ok()


@register("hard", "transportation", "Transportation", "valid_transportation",
          "No leg uses the mode the query rules out ('no flight', 'no self-driving').")  # fmt: skip
class Transportation(OptionalHardConstraint):
    setting = "transportation"

    def check_wanted(self, banned, query, plan, sandbox):
        # the script's case-sensitive tests: "Flight" / "Self-driving" as written
        needle = {"no flight": "Flight", "no self-driving": "Self-driving"}.get(banned)
        for n, day in enumerate(days_of(query, plan), 1):
            if needle and filled(day.transportation) and needle in day.transportation:
                return Verdict.fail(f"day {n} uses {needle.lower()}, which the query rules out")
        return Verdict.ok()
