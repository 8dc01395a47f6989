"""Shared check for ``travelgym serve-mcp SUITE``: start the server over real stdio with the MCP
SDK's own client and compare every listing and call with direct registry calls."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from pydantic_core import to_jsonable_python

TIMEOUT_S = 60  # a guard against hangs; a session takes a few seconds


def _json(value: Any) -> Any:
    return json.loads(json.dumps(to_jsonable_python(value)))


async def check_served_suite(
    suite: str,
    db: Path,
    registry: Any,
    direct: Any,
    intro: str,
    calls: list[tuple[str, dict]],
    failures: list[tuple[str, dict, str]],
    tmp_path: Path,
) -> None:
    """Served tools equal the registry's, successful ``calls`` and failing ``failures`` (with
    their error category) give the same payloads as direct calls on ``direct`` (a context)."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "travelgym.cli", "serve-mcp", suite, "--db", str(db)]
    )
    errlog_path = tmp_path / "server-stderr.txt"
    try:
        with errlog_path.open("w") as errlog, anyio.fail_after(TIMEOUT_S):
            transport = stdio_client(params, errlog=errlog)
            async with Client(transport, read_timeout_seconds=TIMEOUT_S) as client:
                assert client.server_info is not None
                assert client.server_info.name == f"travelgym-{suite}"
                assert client.instructions == intro
                listed = (await client.list_tools()).tools
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
