"""Hand-made TravelPlanner data in the published formats: a tiny sandbox around Myrtle Beach,
queries of the three levels and a plan that meets every constraint of the easy query."""

from __future__ import annotations

import pytest

from travelgym.suites.travelplanner.records import DayPlan, LocalConstraint, Query
from travelgym.suites.travelplanner.sandbox import (
    Accommodation,
    Attraction,
    Drive,
    Flight,
    MemorySandbox,
    Restaurant,
)

MB = "Myrtle Beach"


def _restaurant(name, cost, cuisines, city=MB):
    return Restaurant(name=name, average_cost=cost, cuisines=cuisines, aggregate_rating=4.0,
                      city=city)  # fmt: skip


def _stay(name, price, room_type, rules, min_nights, occupancy, city=MB):
    return Accommodation(name=name, price=price, room_type=room_type, house_rules=rules,
                         minimum_nights=min_nights, maximum_occupancy=occupancy,
                         review_rate_number=4.0, city=city)  # fmt: skip


def _attraction(name, city=MB):
    return Attraction(name=name, latitude=None, longitude=None, address="", phone="", website="",
                      city=city)  # fmt: skip


def _flight(number, price, origin, destination, date):
    return Flight(flight_number=number, price=price, dep_time="08:00", arr_time="10:00",
                  actual_elapsed_time="2 hours", flight_date=date, origin_city=origin,
                  dest_city=destination, distance=1000.0)  # fmt: skip


def _drive(origin, destination, mode, cost):
    return Drive(origin=origin, destination=destination, mode=mode, duration="10 hours",
                 distance_km=1000.0, cost=cost)  # fmt: skip


@pytest.fixture
def sandbox() -> MemorySandbox:
    box = MemorySandbox(states={"Boston": "Massachusetts", MB: "South Carolina",
                                "Charleston": "South Carolina", "Columbia": "South Carolina"})  # fmt: skip
    box.extend([
        _flight("F1", 100, "Boston", MB, "2022-03-13"),
        _flight("F2", 120, MB, "Boston", "2022-03-15"),
        _drive("Boston", MB, "self-driving", 50),
        _drive(MB, "Boston", "self-driving", 50),
        _drive("Boston", MB, "taxi", 1000),
        _drive(MB, "Boston", "taxi", None),  # a route the matrix has no cost for
        _restaurant("Nagai", 20, "Chinese, Bakery"),
        _restaurant("Twigly", 30, "Italian, Cafe"),
        _restaurant("Exotic India", 10, "Indian"),
        _restaurant("Pizza Hut", 15, "Pizza, Fast Food"),
        _restaurant("Catfish Charlie's", 25, "Seafood"),
        _restaurant("Punjabi Tadka", 12, "Indian, Mughlai"),
        _restaurant("Boston Diner", 40, "Chinese, American", city="Boston"),
        _stay("Cozy Room", 100, "Private room", "No smoking & No pets", 2, 2),
        _stay("Beach House", 300, "Entire home/apt", "No parties", 1, 6),
        _stay("Shared Bunk", 30, "Shared room", "No visitors", 1, 1),
        _stay("Long Stay Loft", 50, "Entire home/apt", "", 30, 4),
        _stay("Long Stay Loft Annex", 50, "Entire home/apt", "", 30, 4),
        _attraction("SkyWheel Myrtle Beach"),
        _attraction("Ripley's Aquarium"),
        _attraction("State Park"),
        _attraction("Boardwalk"),
    ])  # fmt: skip
    return box


def make_query(idx=1, level="easy", people=1, budget=1000, **local) -> Query:
    """A 3-day Boston → Myrtle Beach query with the given local constraints."""
    return Query(task_id=f"validation-{idx}", split="validation", idx=idx, org="Boston", dest=MB,
                 days=3, visiting_city_number=1, date=["2022-03-13", "2022-03-14", "2022-03-15"],
                 people_number=people, local_constraint=LocalConstraint(**local), budget=budget,
                 query="Plan a trip from Boston to Myrtle Beach.", level=level)  # fmt: skip


@pytest.fixture
def query() -> Query:
    return make_query()


def good_days() -> list[DayPlan]:
    """A plan meeting every commonsense constraint of :func:`make_query` (costing 532 for one:
    flights 100 + 120, meals 20 + 30 + 10 + 15 + 25 + 12, Cozy Room 2 × 100)."""
    return [
        DayPlan(days=1, current_city=f"from Boston to {MB}",
                transportation=f"Flight Number: F1, from Boston to {MB}, Departure Time: 08:00, "
                               "Arrival Time: 10:00",
                breakfast="-", attraction=f"SkyWheel Myrtle Beach, {MB};",
                lunch=f"Nagai, {MB}", dinner=f"Twigly, {MB}", accommodation=f"Cozy Room, {MB}"),
        DayPlan(days=2, current_city=MB, transportation="-", breakfast=f"Exotic India, {MB}",
                attraction=f"Ripley's Aquarium, {MB};State Park, {MB};",
                lunch=f"Pizza Hut, {MB}", dinner=f"Catfish Charlie's, {MB}",
                accommodation=f"Cozy Room, {MB}"),
        DayPlan(days=3, current_city=f"from {MB} to Boston",
                transportation=f"Flight Number: F2, from {MB} to Boston, Departure Time: 18:00, "
                               "Arrival Time: 20:00",
                breakfast=f"Punjabi Tadka, {MB}", attraction="-", lunch="-", dinner="-",
                accommodation="-"),
    ]  # fmt: skip


@pytest.fixture
def plan() -> list[DayPlan]:
    return good_days()


def tweak(plan: list[DayPlan], day: int, **fields) -> list[DayPlan]:
    """A copy of ``plan`` with fields of day ``day`` (1-based) replaced."""
    copy = [d.model_copy() for d in plan]
    copy[day - 1] = copy[day - 1].model_copy(update=fields)
    return copy
