"""The agent's side of a COMPASS episode: the tool registry over a fresh per-episode context."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from travelgym.parks.context import CompassContext
from travelgym.parks.tools import compass_registry
from travelgym.trajectory import ToolCallRecord, clean_tool_call


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
        payload = result.payload()
        text = json.dumps(payload, default=str)
        record = ToolCallRecord(
            id=call_id or f"call_{len(self.calls)}",
            name=str(name),
            arguments=arguments,
            ok=result.ok,
            result=payload if self.keep_results else None,
            result_chars=len(text),
            error_category=result.error.category.value if result.error else None,
            error_message=result.error.message if result.error else None,
            duration_ms=round((time.perf_counter() - start) * 1000, 3),
            repairs=repairs,
        )
        self.calls.append(record)
        self.last_payload = payload
        return record

    def take_calls(self) -> list[ToolCallRecord]:
        """The calls made since the last take (one agent turn's calls)."""
        calls, self.calls = self.calls, []
        return calls
