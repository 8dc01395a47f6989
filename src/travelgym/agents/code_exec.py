"""Sandboxed code execution for code agents: the model's ``run_python`` call runs in the OS
sandbox with the session's tools importable (``from tools import ...``, served through the
session's :class:`~travelgym.sandbox.bridge.ToolBridge`). The run is recorded as a container
call, placed before the tool calls its code made (their ``parent`` is its id)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from travelgym.agents.tool_session import ToolSession
from travelgym.core.outcomes import InfraError
from travelgym.core.records import ToolCallRecord
from travelgym.sandbox import SandboxLimits, SandboxUnavailable, Workspace, run_code
from travelgym.sandbox.storage import MARKER

RUN_PYTHON = "run_python"
MAX_OUTPUT_CHARS = 12_000
MAX_ERROR_CHARS = 4000
RUN_PYTHON_PARAMETERS = {
    "type": "object",
    "properties": {"code": {"type": "string", "description": "The Python source to run."}},
    "required": ["code"],
    "additionalProperties": False,
}


def run_python_schema(description: str) -> dict[str, Any]:
    """The ``run_python`` function schema; the suite says what ``description`` tells the model
    (what the tools module holds)."""
    return {"type": "function", "function": {"name": RUN_PYTHON, "description": description,
                                             "parameters": RUN_PYTHON_PARAMETERS}}  # fmt: skip


async def run_python_call(session: ToolSession, call_id: str, name: str, arguments: str,
                          limits: SandboxLimits, workspace: Workspace) -> str:  # fmt: skip
    """Run one ``run_python`` call in the sandbox (off the event loop), record it in
    ``session.calls`` and return the tool message content (JSON)."""
    try:
        code = json.loads(arguments).get("code") if name == RUN_PYTHON else None
    except (ValueError, AttributeError):
        code = None
    if not isinstance(code, str):
        error = ("unknown tool; the only tool is run_python" if name != RUN_PYTHON
                 else "run_python needs a JSON object {\"code\": \"...\"}")  # fmt: skip
        category = "tool_name" if name != RUN_PYTHON else "parameter"
        session.calls.append(ToolCallRecord(id=call_id, name=name, arguments=arguments, ok=False,
                                            error_category=category, error_message=error))  # fmt: skip
        return json.dumps({"error": {"category": category, "message": error}})
    position = len(session.calls)  # the container goes before the calls its code made
    try:
        result = await asyncio.to_thread(run_code, code, tools=session.tool_bridge(call_id),
                                         limits=limits, workspace=workspace)  # fmt: skip
    except SandboxUnavailable as exc:  # no fault of the model's: the episode cannot be measured
        raise InfraError("sandbox", str(exc)) from None
    store = workspace.store  # the episode's byte budget, shared with the bridge's records
    payload = {"ok": result.ok, "stdout": store.text(_tail(result.stdout, MAX_OUTPUT_CHARS)),
               "stderr": store.text(_tail(result.stderr, MAX_ERROR_CHARS)),
               "error": result.error.value if result.error else None}  # fmt: skip
    if result.traceback:
        payload["traceback"] = store.text(_tail(result.traceback, MAX_ERROR_CHARS))
    session.calls.insert(position, ToolCallRecord(
        id=call_id, name=name, arguments={"code": code}, ok=result.ok, result=payload,
        result_chars=len(result.stdout), error_category=None if result.ok else "sandbox",
        error_message=None if result.ok else str(payload["error"]),
        duration_ms=round(result.wall_seconds * 1000, 1), container=True,
    ))  # fmt: skip
    return json.dumps(payload)


def _tail(text: str, chars: int) -> str:
    """The last ``chars`` characters of ``text``, after a marker of what was cut before them."""
    if len(text) <= chars:
        return text
    return MARKER.format(len(text[:-chars].encode("utf-8", "surrogatepass"))) + "\n" + text[-chars:]
