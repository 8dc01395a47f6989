"""The per-episode tool session: a tool registry over one context, recording every call."""

from __future__ import annotations

import json
import time
from typing import Any

from travelgym.core.records import ToolCallRecord, clean_tool_call
from travelgym.llm.protocol import Repair
from travelgym.sandbox.bridge import ToolBridge
from travelgym.toolkit.errors import ToolResult
from travelgym.toolkit.registry import ToolRegistry


class ToolSession:
    """Runs tool calls over ``context`` and records them (:class:`ToolCallRecord`); never
    raises. ``calls`` holds the records since the last :meth:`take_calls`; what each call
    returned stays readable (:meth:`payload`) even with ``keep_results`` off."""

    ensure_ascii = True  # how ``result_chars`` counts non-ASCII text (as the JSON escapes it)

    def __init__(self, registry: ToolRegistry, context: Any, keep_results: bool = True) -> None:
        self.registry = registry
        self.context = context
        self.keep_results = keep_results
        self.calls: list[ToolCallRecord] = []
        self.last_payload: Any = None
        self._payloads: dict[int, Any] = {}

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        return self.registry.openai_schemas()

    @property
    def tool_names(self) -> list[str]:
        return self.registry.names

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
        text = json.dumps(payload, default=str, ensure_ascii=self.ensure_ascii)
        record = ToolCallRecord(
            id=call_id or self.default_call_id(parent),
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
        self._payloads[id(record)] = payload
        self.last_payload = payload
        return record

    def default_call_id(self, parent: str | None) -> str:
        """The id of a call that came without one: ``<parent>.<n>`` for the calls of code,
        ``call_<n>`` otherwise (``n`` counts the calls since the last take)."""
        return f"{parent}.{len(self.calls)}" if parent else f"call_{len(self.calls)}"

    def payload(self, record: ToolCallRecord) -> Any:
        """The content (or ``{"error": ...}``) a call since the last take returned."""
        return self._payloads.get(id(record), record.result)

    def tool_bridge(self, parent: str) -> ToolBridge:
        """The bridge that serves (and records, under ``parent``) the tool calls of code."""
        return ToolBridge(self.registry, self.context,
                          lambda name, arguments, result, ms, repairs: self.record(
                              name, arguments, result, ms, parent=parent, repairs=repairs))  # fmt: skip

    def take_calls(self) -> list[ToolCallRecord]:
        """The calls made since the last take (one agent turn's or step's calls)."""
        calls, self.calls, self._payloads = self.calls, [], {}
        return calls
