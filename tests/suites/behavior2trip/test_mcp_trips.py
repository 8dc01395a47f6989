"""``travelgym serve-mcp behavior2trip`` over real stdio, checked against direct registry calls."""

from __future__ import annotations

import pytest

from tests.fakes.mcp_check import check_served_suite
from travelgym.suites.behavior2trip.tools import TOOLS_INTRO, TripsContext, trips_registry


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_serve_mcp_behavior2trip_matches_the_registry(trips_db, tmp_path):
    registry = trips_registry()
    direct = TripsContext.from_path(trips_db)
    calls = [
        ("AccommodationSearch", {"city": "xian", "n": 2, "preferences": {"star_rating": "5-Star/Luxury"}}),
        ("FlightSearch", {"origin": "Beijing", "destination": "Lhasa", "departure_date": "2025-10-09"}),
        ("MapGuide", {"origin_cityName": "Beijing", "origin": "The Forbidden City",
                      "destination_cityName": "Beijing", "destination": "Summer Palace"}),
        ("WeatherSearch", {"city": "Sanya", "n": 2}),
    ]  # fmt: skip
    failures = [
        ("RestaurantSearch", {"city": "Beijing", "preferences": {"spice": "high"}}, "parameter"),
        ("TrainSearch", {"origin": "Narnia", "destination": "Beijing"}, "content"),
        ("HotelSearch", {}, "tool_name"),
    ]
    assert len(registry) == 9
    await check_served_suite(
        "behavior2trip", trips_db, registry, direct, TOOLS_INTRO, calls, failures, tmp_path
    )
