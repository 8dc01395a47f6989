"""The parent's side of the tools inside the sandbox: each call arrives as a message, is
validated by the same registry as a native tool call, runs on the parent's read-only
connection, and is recorded by the caller exactly like a native call."""

from __future__ import annotations

import json
import marshal
import time
from collections.abc import Callable
from typing import Any

from travelgym.toolkit import codegen
from travelgym.toolkit.errors import ErrorCategory, ToolResult
from travelgym.toolkit.registry import ToolContext, ToolRegistry

# (tool name, arguments as sent, result, duration in ms) -> None
Recorder = Callable[[str, Any, ToolResult, float], Any]


def scrub_text(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (and keys) replaced by U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8") if _has_surrogate(value) else value
    if isinstance(value, list):
        return [scrub_text(v) for v in value]
    if isinstance(value, dict):
        return {scrub_text(k): scrub_text(v) for k, v in value.items()}
    return value


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class ToolBridge:
    """Serves the tool calls of one ``run_code``; ``record`` sees every call it answers."""

    def __init__(self, registry: ToolRegistry, context: ToolContext | None,
                 record: Recorder | None = None, module: str = "tools") -> None:  # fmt: skip
        self.registry, self.context, self.record, self.module = registry, context, record, module
        self.calls = 0

    def specs(self) -> list[dict[str, Any]]:
        """The binding specs the sandbox builds its ``tools`` module from."""
        return [codegen.binding_spec(self.registry[name]) for name in self.registry.names]

    def handle(self, request: bytes, max_calls: int) -> bytes:
        """Answer one request frame with a reply frame's payload (never raises)."""
        start = time.perf_counter()
        name, arguments, result = self._serve(request, max_calls)
        if result is not None and self.record is not None:
            self.record(
                scrub_text(name),
                scrub_text(arguments),
                result,
                round((time.perf_counter() - start) * 1000, 3),
            )
        payload = result.payload() if result is not None else _limit_payload(max_calls)
        # what the code sees: the payload as JSON data (as a native caller reads it), marshalled
        return marshal.dumps({"payload": json.loads(json.dumps(payload, default=str))})

    def _serve(self, request: bytes, max_calls: int) -> tuple[str, Any, ToolResult | None]:
        if self.calls >= max_calls:
            return "", None, None
        self.calls += 1
        try:
            message = json.loads(request)
            name, args, kwargs = message["name"], message.get("args", []), message.get("kwargs", {})
            if (
                not isinstance(name, str)
                or not isinstance(args, list)
                or not isinstance(kwargs, dict)
            ):
                raise TypeError("name, args and kwargs have the wrong types")
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            failure = ToolResult.failure("?", ErrorCategory.PARAMETER, f"malformed call ({exc})")
            return "?", request[:200].decode("utf-8", "replace"), failure
        if name not in self.registry.names:
            arguments = {"*args": args, **kwargs} if args else kwargs
            return name, arguments, self.registry.call(name, arguments, self.context)
        tool = self.registry[name]
        arguments = codegen.call_arguments(tool, args, kwargs)
        if isinstance(arguments, str):
            return name, {"*args": args, **kwargs}, codegen.invalid_call(tool, arguments)
        return name, arguments, self.registry.call(name, arguments, self.context)


def _limit_payload(max_calls: int) -> dict[str, Any]:
    message = f"tool-call limit of {max_calls} per run reached; later calls are not run"
    return {"error": {"category": "content", "message": message}}
