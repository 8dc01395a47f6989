"""``travelgym serve-mcp behavior2trip`` over real stdio, checked against direct registry calls."""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from pydantic_core import to_jsonable_python

from travelgym.trips.tools import TOOLS_INTRO, TripsContext, trips_registry

TIMEOUT_S = 60  # a guard against hangs; the session takes a few seconds


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _json(value):
    return json.loads(json.dumps(to_jsonable_python(value)))


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
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "travelgym.cli", "serve-mcp", "behavior2trip", "--db", str(trips_db)],
    )
    errlog_path = tmp_path / "server-stderr.txt"
    try:
        with errlog_path.open("w") as errlog, anyio.fail_after(TIMEOUT_S):
            transport = stdio_client(params, errlog=errlog)
            async with Client(transport, read_timeout_seconds=TIMEOUT_S) as client:
                assert client.server_info is not None
                assert client.server_info.name == "travelgym-behavior2trip"
                assert client.instructions == TOOLS_INTRO
                listed = (await client.list_tools()).tools
                assert len(listed) == 9
                assert [t.name for t in listed] == registry.names
                for t in listed:
                    assert t.input_schema == registry[t.name].json_schema()
                for name, arguments in calls:
                    result = await client.call_tool(name, arguments)
                    expected = registry.call(name, arguments, direct)
                    assert expected.ok and not result.is_error, (name, result)
                    assert json.loads(result.content[0].text) == _json(expected.payload())
                for name, arguments, category in failures:
                    result = await client.call_tool(name, arguments)
                    expected = registry.call(name, arguments, direct)
                    assert result.is_error
                    assert json.loads(result.content[0].text) == _json(expected.payload())
                    assert expected.payload()["error"]["category"] == category
    finally:
        direct.close()
        print(errlog_path.read_text(), file=sys.stderr)
