"""``travelgym serve-mcp compass`` over real stdio, checked against direct registry calls."""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from pydantic_core import to_jsonable_python

from travelgym.parks.tools import TOOLS_INTRO, CompassContext, compass_registry

TIMEOUT_S = 60  # a guard against hangs; the session takes a few seconds


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _json(value):
    return json.loads(json.dumps(to_jsonable_python(value)))


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
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "travelgym.cli", "serve-mcp", "compass", "--db", str(compass_db)],
    )
    errlog_path = tmp_path / "server-stderr.txt"
    try:
        with errlog_path.open("w") as errlog, anyio.fail_after(TIMEOUT_S):
            transport = stdio_client(params, errlog=errlog)
            async with Client(transport, read_timeout_seconds=TIMEOUT_S) as client:
                assert client.server_info is not None
                assert client.server_info.name == "travelgym-compass"
                assert client.instructions == TOOLS_INTRO
                listed = (await client.list_tools()).tools
                assert len(listed) == 18
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
