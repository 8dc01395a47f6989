"""The MCP server over real stdio: a subprocess server, the SDK's own stdio client.

Run as a script, this module *is* the toy server (``python test_mcp_server.py``), so the
subprocess and the direct comparisons use the very same tool definitions.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Literal

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from tests.fakes.mcp_check import subprocess_env
from travelgym.toolkit import ContentError, ToolContext, ToolRegistry
from travelgym.toolkit.mcp_server import build_mcp_server

TIMEOUT_S = 30  # a guard against hangs; a session takes about a second


class CounterContext(ToolContext):
    """Per-connection state: a running counter."""

    def __init__(self) -> None:
        self.count = 0


def increment(ctx: CounterContext, by: int = 1) -> dict:
    """Add to the session's counter.

    Args:
        by: How much to add.
    """
    ctx.count += by
    return {"count": ctx.count}


def split_words(text: str, case: Literal["upper", "lower", "keep"] = "keep") -> list[str]:
    """Split a text into words.

    Args:
        text: The text to split.
        case: How to change the words' case.
    """
    words = text.split()
    if case == "upper":
        return [w.upper() for w in words]
    if case == "lower":
        return [w.lower() for w in words]
    return words


def divide(a: float, b: float) -> float:
    """Divide a by b.

    Args:
        a: The dividend.
        b: The divisor; must not be zero.
    """
    print("a stray print must not reach the MCP wire")
    if b == 0:
        raise ContentError("cannot divide by zero")
    return a / b


def toy_registry() -> ToolRegistry:
    return ToolRegistry([increment, split_words, divide])


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def errlog(tmp_path):
    """The server's stderr, shown when a test fails."""
    path = tmp_path / "server-stderr.txt"
    with path.open("w") as handle:
        yield handle
    text = path.read_text()
    if text.strip():
        print(f"--- server stderr ---\n{text}")


def _client(errlog, mode: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable, args=[str(Path(__file__).resolve())], env=subprocess_env()
    )
    return Client(stdio_client(params, errlog=errlog), mode=mode, read_timeout_seconds=TIMEOUT_S)


def _decoded(result) -> object:
    assert len(result.content) == 1 and result.content[0].type == "text"
    return json.loads(result.content[0].text)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_lists_and_calls_tools_like_the_registry(errlog, mode):
    registry = toy_registry()
    direct_context = CounterContext()
    calls = [
        ("increment", {}),
        ("increment", {"by": 5}),
        ("split_words", {"text": "Yosemite and Zion", "case": "upper"}),
        ("split_words", {"text": "Arches  Bryce"}),
        ("divide", {"a": 7, "b": 2}),
        ("increment", {"by": -2}),
    ]
    with anyio.fail_after(TIMEOUT_S):
        async with _client(errlog, mode) as client:
            modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
            assert modern == (mode == "auto")
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == registry.names
            for t in listed:
                assert t.input_schema == registry[t.name].json_schema()
                assert t.description == registry[t.name].description
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                expected = registry.call(name, arguments, direct_context)
                assert expected.ok and not result.is_error, (name, result)
                assert _decoded(result) == expected.payload()
                if isinstance(expected.payload(), dict) or modern:
                    assert result.structured_content == expected.payload()
                else:  # before 2026-07-28 structured content must be an object
                    assert result.structured_content is None
    assert direct_context.count == 4


@pytest.mark.anyio
async def test_failures_come_back_as_error_results(errlog):
    registry = toy_registry()
    bad_calls = [
        ("increment", {"by": "many"}, "parameter"),
        ("increment", {"step": 1}, "parameter"),
        ("split_words", {}, "parameter"),
        ("split_words", {"text": "a b", "case": "title"}, "parameter"),
        ("divide", {"a": 1, "b": 0}, "content"),
        ("teleport", {"to": "Yosemite"}, "tool_name"),
    ]
    with anyio.fail_after(TIMEOUT_S):
        async with _client(errlog, "auto") as client:
            await client.list_tools()
            for name, arguments, category in bad_calls:
                result = await client.call_tool(name, arguments)
                expected = registry.call(name, arguments, CounterContext())
                assert result.is_error, (name, arguments)
                assert _decoded(result) == expected.payload()
                assert result.structured_content == expected.payload()
                assert expected.payload()["error"]["category"] == category
            # failed calls left the session's counter alone
            result = await client.call_tool("increment", {"by": 2})
            assert _decoded(result) == {"count": 2}


def test_build_mcp_server_registers_the_tool_handlers():
    server = build_mcp_server(toy_registry(), CounterContext, name="toy")
    assert server.name == "toy"
    assert server.get_request_handler("tools/list") is not None
    assert server.get_request_handler("tools/call") is not None
    assert server.create_initialization_options().capabilities.tools is not None


if __name__ == "__main__":  # the subprocess server of the tests above
    from travelgym.toolkit.mcp_server import run_stdio

    run_stdio(toy_registry(), CounterContext, name="toy")
