"""The parent's side of the tools inside the sandbox: each call arrives as a message, is
validated by the same registry as a native tool call, runs on the parent's read-only
connection, and is recorded by the caller exactly like a native call."""

from __future__ import annotations

import json
import marshal
import time
from collections.abc import Callable
from typing import Any

from travelgym.llm.protocol import Repair
from travelgym.llm.text import clean_value
from travelgym.sandbox.storage import StoreBudget
from travelgym.toolkit import codegen
from travelgym.toolkit.errors import ErrorCategory, ToolResult
from travelgym.toolkit.registry import ToolContext, ToolRegistry

# (tool name, arguments as sent, result, duration in ms, repairs) -> None; name and arguments
# have invalid Unicode replaced already (the repairs say where)
Recorder = Callable[[str, Any, ToolResult, float, list[Repair]], Any]


class ToolBridge:
    """Serves the tool calls of one ``run_code``; ``record`` sees every call it answers."""

    def __init__(self, registry: ToolRegistry, context: ToolContext | None,
                 record: Recorder | None = None, module: str = "tools") -> None:  # fmt: skip
        self.registry, self.context, self.record, self.module = registry, context, record, module
        self.calls = 0
        self.store = StoreBudget()  # what is recorded; run_code hands it the episode's budget

    def specs(self) -> list[dict[str, Any]]:
        """The binding specs the sandbox builds its ``tools`` module from."""
        return [codegen.binding_spec(self.registry[name]) for name in self.registry.names]

    def handle(self, request: bytes, max_calls: int) -> bytes:
        """Answer one request frame with a reply frame's payload (never raises)."""
        start = time.perf_counter()
        name, arguments, result, repairs = self._serve(request, max_calls)
        payload = result.payload() if result is not None else _limit_payload(max_calls)
        if result is not None and self.record is not None:
            # the code sees the whole result; the record keeps what the byte budget allows
            kept = self.store.value(arguments)
            self.record(name, kept, self._stored(result),
                        (time.perf_counter() - start) * 1000, repairs)  # fmt: skip
        # what the code sees: the payload as JSON data (as a native caller reads it), marshalled
        return marshal.dumps({"payload": json.loads(json.dumps(payload, default=str))})

    def _serve(self, request: bytes, max_calls: int,
               ) -> tuple[str, Any, ToolResult | None, list[Repair]]:  # fmt: skip
        if self.calls >= max_calls:
            return "", None, None, []
        self.calls += 1
        try:
            # code may pass lone surrogates ("\ud83d"): replaced before the tool runs or is recorded
            message, replaced = clean_value(json.loads(request))
            repairs = (
                [Repair(kind="invalid_unicode", where="arguments", count=replaced)]
                if replaced
                else []
            )
            name, args, kwargs = message["name"], message.get("args", []), message.get("kwargs", {})
            if (
                not isinstance(name, str)
                or not isinstance(args, list)
                or not isinstance(kwargs, dict)
            ):
                raise TypeError("name, args and kwargs have the wrong types")
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            failure = ToolResult.failure("?", ErrorCategory.PARAMETER, f"malformed call ({exc})")
            return "?", request[:200].decode("utf-8", "replace"), failure, []
        if name not in self.registry.names:
            arguments = {"*args": args, **kwargs} if args else kwargs
            return name, arguments, self.registry.call(name, arguments, self.context), repairs
        tool = self.registry[name]
        arguments = codegen.call_arguments(tool, args, kwargs)
        if isinstance(arguments, str):
            return name, {"*args": args, **kwargs}, codegen.invalid_call(tool, arguments), repairs
        return name, arguments, self.registry.call(name, arguments, self.context), repairs

    def _stored(self, result: ToolResult) -> ToolResult:
        """``result`` as recorded: its content (or error message) cut to the byte budget."""
        if result.ok:
            content = self.store.value(result.content)
            return result if content is result.content else ToolResult.success(result.tool, content)
        assert result.error is not None
        message = self.store.text(result.error.message)
        if message == result.error.message:
            return result
        return ToolResult.failure(result.tool, result.error.category, message)


def _limit_payload(max_calls: int) -> dict[str, Any]:
    message = f"tool-call limit of {max_calls} per run reached; later calls are not run"
    return {"error": {"category": "content", "message": message}}
