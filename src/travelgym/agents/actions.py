"""Text actions shared by the text-format agents (ReAct, the B2T action format): a JSON tool
call ``{"name": ..., "arguments": {...}}`` matched against a tool registry's names, or the
:class:`ActionError` that says why it is malformed (answered as an error observation)."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

TOOL_RESPONSE = "tool_response"
FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


@dataclass
class ToolCallAction:
    name: str
    arguments: dict[str, Any]
    raw: str = ""


@dataclass
class ActionError:
    """A malformed action: ``kind`` is a short code, ``tag`` the response tag that reports it."""

    kind: str
    message: str
    raw: str = ""
    tag: str = TOOL_RESPONSE

    def payload(self) -> str:
        return json.dumps({"error": {"category": "format", "kind": self.kind,
                                     "message": self.message}}, ensure_ascii=False)  # fmt: skip


def parse_tool_call(body: str, names: dict[str, str] | None) -> ToolCallAction | ActionError:
    """One ``{"name": ..., "arguments": {...}}`` call; ``names`` maps normalised names to
    tool names (see :func:`tool_index`)."""
    raw = body.strip()
    try:
        call = json.loads(FENCE.sub("", raw))
    except (ValueError, RecursionError) as exc:
        return ActionError("bad_json", f"the tool call is not valid JSON ({exc})", raw)
    if not isinstance(call, dict):
        shape = '{"name": ..., "arguments": {...}}'
        return ActionError("bad_json", f"a tool call must be a JSON object {shape}", raw)
    name = call.get("name")
    if not isinstance(name, str) or not name.strip():
        return ActionError("missing_name", 'the tool call needs a "name"', raw)
    args = call.get("arguments", call.get("parameters", {}))
    if isinstance(args, str):
        with contextlib.suppress(ValueError):
            args = json.loads(args) if args.strip() else {}
    if args is None:
        args = {}
    if not isinstance(args, dict):
        message = f'"arguments" of {name} must be a JSON object of parameters'
        return ActionError("bad_arguments", message, raw)
    if names is not None:
        canonical = names.get(_norm(name))
        if canonical is None:
            message = f"unknown tool {name!r}; available tools: {', '.join(names.values())}"
            return ActionError("unknown_tool", message, raw)
        name = canonical
    return ToolCallAction(name, args, raw)


def tool_index(tool_names: Iterable[str]) -> dict[str, str]:
    """Normalised name -> tool name, for matching names ignoring case and punctuation."""
    return {_norm(n): n for n in tool_names}


def _norm(name: str) -> str:
    return re.sub(r"[\W_]+", "", name.casefold())
