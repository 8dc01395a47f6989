"""The agent's side of a COMPASS episode: the tool registry over a fresh per-episode context."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from travelgym.core.records import ToolCallRecord, clean_tool_call
from travelgym.llm.protocol import Repair
from travelgym.sandbox.bridge import ToolBridge
from travelgym.suites.compass.context import CompassContext
from travelgym.suites.compass.tools import compass_registry
from travelgym.toolkit.errors import ToolResult


class CompassEnv:
    """Runs tool calls for one episode and records them; never raises."""

    def __init__(self, conn: sqlite3.Connection, keep_results: bool = True) -> None:
        self.registry = compass_registry()
        self.context = CompassContext(conn)
        self.keep_results = keep_results
        self.calls: list[ToolCallRecord] = []

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        return self.registry.openai_schemas()

    def call(self, name: Any, arguments: Any, call_id: str | None = None) -> ToolCallRecord:
        """Run one tool call; the record carries the payload or the categorised error (and the
        repairs of invalid Unicode in the name or arguments)."""
        start = time.perf_counter()
        name, to_run, arguments, repairs = clean_tool_call(name, arguments)
        result = self.registry.call(name, to_run, self.context)
        duration_ms = (time.perf_counter() - start) * 1000
        return self.record(name, arguments, result, duration_ms, call_id, repairs=repairs)

    def record(self, name: Any, arguments: Any, result: ToolResult, duration_ms: float,
               call_id: str | None = None, parent: str | None = None,
               repairs: list[Repair] | None = None) -> ToolCallRecord:  # fmt: skip
        """Record a call that has run (natively, or from code through the sandbox bridge);
        ``name`` and ``arguments`` are already cleaned of invalid Unicode (``repairs`` says
        what was replaced)."""
        payload = result.payload()
        text = json.dumps(payload, default=str)
        record = ToolCallRecord(
            id=call_id or (f"{parent}.{len(self.calls)}" if parent else f"call_{len(self.calls)}"),
            name=str(name),
            arguments=arguments,
            ok=result.ok,
            result=payload if self.keep_results else None,
            result_chars=len(text),
            error_category=result.error.category.value if result.error else None,
            error_message=result.error.message if result.error else None,
            duration_ms=round(duration_ms, 3),
            parent=parent,
            repairs=repairs or [],
        )
        self.calls.append(record)
        self.last_payload = payload
        return record

    def tool_bridge(self, parent: str) -> ToolBridge:
        """The bridge that serves (and records, under ``parent``) the tool calls of code."""
        return ToolBridge(self.registry, self.context,
                          lambda name, arguments, result, ms, repairs: self.record(
                              name, arguments, result, ms, parent=parent, repairs=repairs))  # fmt: skip

    def take_calls(self) -> list[ToolCallRecord]:
        """The calls made since the last take (one agent turn's calls)."""
        calls, self.calls = self.calls, []
        return calls
