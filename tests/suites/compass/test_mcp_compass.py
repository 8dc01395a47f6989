"""``travelgym serve-mcp compass`` over real stdio, checked against direct registry calls."""

from __future__ import annotations

import pytest

from tests.fakes.mcp_check import check_served_suite
from travelgym.suites.compass.tools import TOOLS_INTRO, CompassContext, compass_registry


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_serve_mcp_compass_matches_the_registry(compass_db, tmp_path):
    registry = compass_registry()
    direct = CompassContext.from_path(compass_db)
    calls = [
        ("search_location_name", {"query": "yosemity"}),
        ("get_weekday", {"date_str": "2025-08-15"}),
        ("search_airports", {"park_name": "Zion"}),
        ("calculate", {"expression": "100 + 200 * 3"}),
        ("notebook", {"action": "write", "input_data": "fly into FAT"}),
        ("notebook", {"action": "list_all"}),
    ]
    failures = [
        ("get_weekday", {"date": "2025-08-15"}, "parameter"),
        ("book_everything", {}, "tool_name"),
    ]
    assert len(registry) == 18
    await check_served_suite(
        "compass", compass_db, registry, direct, TOOLS_INTRO, calls, failures, tmp_path
    )
