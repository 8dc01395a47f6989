"""Shared check for ``travelgym serve-mcp SUITE``: start the server over real stdio with the MCP
SDK's own client and compare every listing and call with direct registry calls."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from pydantic_core import to_jsonable_python

TIMEOUT_S = 60  # a guard against hangs; a session takes a few seconds


def subprocess_env() -> dict[str, str]:
    """Environment for a server subprocess: it imports the very ``travelgym`` (and ``tests``)
    this test process runs, not whatever the interpreter would find on its own."""
    import travelgym

    source = Path(travelgym.__file__).resolve().parents[1]
    repo = Path(__file__).resolve().parents[2]
    return {"PYTHONPATH": os.pathsep.join([str(source), str(repo)])}


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
        command=sys.executable,
        args=["-m", "travelgym.cli", "serve-mcp", suite, "--db", str(db)],
        env=subprocess_env(),
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


def raw_session(args: list[str], lines: list[bytes], timeout_s: float = TIMEOUT_S) -> tuple[
    list[dict], str
]:  # fmt: skip
    """Start ``python ARGS`` as an MCP server, write the handshake and then ``lines`` (raw
    bytes, one request each) to its stdin, close stdin at once and read everything it answers.
    Returns (the responses by arrival, its stderr); the server must exit 0 within ``timeout_s``."""
    import subprocess

    handshake = [
        {"jsonrpc": "2.0", "id": "init", "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]  # fmt: skip
    data = b"".join(json.dumps(m).encode() + b"\n" for m in handshake)
    data += b"".join(line + b"\n" for line in lines)
    done = subprocess.run([sys.executable, *args], input=data, capture_output=True,
                          timeout=timeout_s, env=subprocess_env())  # fmt: skip
    stderr = done.stderr.decode("utf-8", errors="replace")
    assert done.returncode == 0, stderr
    responses = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]
    return responses, stderr


def tool_call(request_id: int | str, name: str, arguments: dict) -> bytes:
    """A ``tools/call`` request as one line of JSON (non-ASCII, lone surrogates included, kept
    as ``\\u`` escapes)."""
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}}).encode()  # fmt: skip
