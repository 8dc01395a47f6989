"""The B2T-Agent action format (paper Section 4.1, Figures 6 and 11).

One assistant message may hold ``<think>...</think>``, one or several (parallel)
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, ``<memory>`` operations (JSON
``{"action": "read"|"write", "key": ..., "value": ...}`` or the ``write(key=..., value=...)`` /
``read(key=...)`` forms of Figure 6) and a final ``<answer>...</answer>`` (``<result>`` of
Figures 6-7 is accepted too), parametrised by the tool registry's names. :func:`parse_message` never raises: every malformed action becomes
an :class:`ActionError`, answered as an error observation and counted as an invalid action (the
``P_action = -1`` penalty of Section 4.2). Observations go back as ``<tool_response>`` and
``<memory_response>`` blocks (:func:`format_responses`).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from travelgym.agents.actions import (
    FENCE,
    TOOL_RESPONSE,
    ActionError,
    ToolCallAction,
    parse_tool_call,
    tool_index,
)

MEMORY_RESPONSE = "memory_response"
ALL_KEYS = ("all", "*")  # read(key='all') returns the whole memory (Figure 6)
_TAG_ALIASES = {"result": "answer"}
_TAG = re.compile(r"<\s*(/?)\s*(think|tool_call|memory|answer|result|tool_response|memory_response)"
                  r"\s*>", re.I)  # fmt: skip
_CALL_FORM = re.compile(r"^\s*(?:\w+\s*\.\s*)?(read|write)\s*\(", re.I)


@dataclass
class MemoryOp:
    action: str  # read | write
    key: str
    value: Any = None
    raw: str = ""


@dataclass
class ParsedMessage:
    think: list[str] = field(default_factory=list)
    tool_calls: list[ToolCallAction] = field(default_factory=list)
    memory_ops: list[MemoryOp] = field(default_factory=list)
    answer: str | None = None
    errors: list[ActionError] = field(default_factory=list)
    items: list[ToolCallAction | MemoryOp | ActionError] = field(default_factory=list)  # in order

    def add(self, item: ToolCallAction | MemoryOp | ActionError) -> None:
        """Record an action (or a malformed one) in document order."""
        target = {ToolCallAction: self.tool_calls, MemoryOp: self.memory_ops}
        target.get(type(item), self.errors).append(item)
        self.items.append(item)

    @property
    def invalid(self) -> int:
        """How many invalid actions this message holds."""
        return len(self.errors)


def parse_message(text: str | None, tool_names: Iterable[str] | None = None) -> ParsedMessage:
    """Split one assistant message into its actions; ``tool_names`` (when given) are the valid
    tool names, matched ignoring case and punctuation (Figure 6 writes ``accommodationsearch``)."""
    out = ParsedMessage()
    text = text or ""
    names = tool_index(tool_names) if tool_names is not None else None
    answers: list[str] = []
    pos, seen_tag, attempts = 0, False, 0  # attempts: <tool_call> and <memory> blocks
    while (m := _TAG.search(text, pos)) is not None:
        closing, raw_tag = bool(m.group(1)), m.group(2).lower()
        tag = _TAG_ALIASES.get(raw_tag, raw_tag)
        if closing:
            if tag == "think" and not seen_tag:  # a reasoning parser stripped the opening tag
                out.think.append(text[: m.start()].strip())
            else:
                out.add(ActionError("unopened_tag", f"</{raw_tag}> without <{raw_tag}>",
                                              _snippet(text, m.start())))  # fmt: skip
            seen_tag, pos = True, m.end()
            continue
        seen_tag = True
        attempts += tag in ("tool_call", "memory")
        end = re.compile(rf"<\s*/\s*{raw_tag}\s*>", re.I).search(text, m.end())
        if end is None:
            out.add(ActionError("unclosed_tag", f"<{raw_tag}> is never closed with "
                                          f"</{raw_tag}>", _snippet(text, m.start()),
                                          _response_tag(tag)))  # fmt: skip
            break
        body, pos = text[m.end() : end.start()], end.end()
        if tag == "think":
            out.think.append(body.strip())
        elif tag == "tool_call":
            out.add(parse_tool_call(body, names))
        elif tag == "memory":
            _memory(body, out)
        elif tag == "answer":
            answers.append(body.strip())
        else:
            out.add(ActionError("fabricated_response", f"<{tag}> blocks are written by "
                                          "the environment, not by the agent", _snippet(body, 0),
                                          tag))  # fmt: skip
    _settle_answer(answers, attempts, out)
    return out


def _settle_answer(answers: list[str], attempts: int, out: ParsedMessage) -> None:
    if len(answers) > 1:
        out.add(ActionError("multiple_answers", "give exactly one <answer> block"))
    elif answers and not answers[0]:
        out.add(ActionError("empty_answer", "the <answer> block is empty"))
    elif answers:
        if attempts:
            out.add(ActionError("answer_with_actions", "<answer> must stand alone: "
                                          "no <tool_call> or <memory> in the same message"))  # fmt: skip
            out.tool_calls, out.memory_ops = [], []
            out.items = [i for i in out.items if isinstance(i, ActionError)]
        else:
            out.answer = answers[0]
    if not (answers or out.tool_calls or out.memory_ops or out.errors):
        out.add(ActionError("no_action", "each message must hold a <tool_call>, a "
                                      "<memory> operation or the final <answer>"))  # fmt: skip


def _memory(body: str, out: ParsedMessage) -> None:
    raw = body.strip()
    try:
        items = _memory_items(raw)
    except ValueError as exc:
        out.add(ActionError("bad_memory", str(exc), raw, MEMORY_RESPONSE))
        return
    for item in items:
        action = str(item.get("action", "")).strip().lower()
        key = item.get("key")
        if action not in ("read", "write"):
            out.add(ActionError("bad_memory", 'memory "action" must be "read" or '
                                          f'"write", got {item.get("action")!r}', raw,
                                          MEMORY_RESPONSE))  # fmt: skip
        elif not isinstance(key, str) or not key.strip():
            out.add(ActionError("missing_key", f'memory {action} needs a string "key"',
                                          raw, MEMORY_RESPONSE))  # fmt: skip
        elif action == "write" and "value" not in item:
            out.add(ActionError("missing_key", 'memory write needs a "value"', raw,
                                          MEMORY_RESPONSE))  # fmt: skip
        else:
            out.add(MemoryOp(action, key.strip(), item.get("value"), raw))


def _memory_items(raw: str) -> list[dict[str, Any]]:
    """The operations of one <memory> block (JSON object or array, or the call forms)."""
    if _CALL_FORM.match(raw):
        return [_call_form(raw)]
    try:
        value = json.loads(FENCE.sub("", raw))
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"<memory> is neither JSON nor read(key=...)/write(key=..., value=...) "
                         f"({exc})") from None  # fmt: skip
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(i, dict) for i in items):
        raise ValueError('<memory> must hold {"action": ..., "key": ..., "value": ...}')
    return items


def _call_form(raw: str) -> dict[str, Any]:
    try:
        node = ast.parse(raw.strip(), mode="eval").body
        if not isinstance(node, ast.Call):
            raise ValueError("not a call")
        action = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
        params = dict(zip(("key", "value"), (ast.literal_eval(a) for a in node.args), strict=False))
        for kw in node.keywords:
            if kw.arg not in ("key", "value"):
                raise ValueError(f"unknown argument {kw.arg!r}")
            params[kw.arg] = ast.literal_eval(kw.value)
    except (SyntaxError, ValueError, AttributeError, TypeError, RecursionError) as exc:
        raise ValueError(f"cannot read memory call {raw[:80]!r}: {exc}") from None
    return {"action": action.lower(), **{k: _jsonable(v) for k, v in params.items()}}


def _jsonable(value: Any) -> Any:
    return json.loads(
        json.dumps(value, default=lambda v: list(v) if isinstance(v, (set, tuple)) else str(v))
    )


def _response_tag(tag: str) -> str:
    return MEMORY_RESPONSE if tag == "memory" else TOOL_RESPONSE


def _snippet(text: str, start: int, size: int = 200) -> str:
    return text[start : start + size]


class Memory:
    """The per-episode key-value memory behind ``<memory>`` (values are JSON data)."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}

    def apply(self, op: MemoryOp) -> tuple[bool, str]:
        """Run one operation: (ok, the text of its ``<memory_response>``)."""
        if op.action == "write":
            self.data[op.key] = op.value
            return True, f"Data saved for key '{op.key}'."
        if op.key.lower() in ALL_KEYS:
            return True, json.dumps(self.data, ensure_ascii=False)
        if op.key not in self.data:
            known = ", ".join(self.data) or "none yet"
            message = f"no memory entry for key {op.key!r}; stored keys: {known}"
            return False, json.dumps({"error": {"category": "memory", "message": message}})
        return True, json.dumps(self.data[op.key], ensure_ascii=False)


def format_responses(items: Iterable[tuple[str, str]]) -> str:
    """``<tag>content</tag>`` blocks, one a line, for ``(tag, content)`` pairs."""
    return "\n".join(f"<{tag}>{content}</{tag}>" for tag, content in items)


def format_tool_call(name: str, arguments: Any) -> str:
    """One ``<tool_call>`` block as the agent writes it (:func:`parse_tool_call` reads it back)."""
    call = {"name": name, "arguments": arguments}
    return f"<tool_call>{json.dumps(call, ensure_ascii=False, default=str)}</tool_call>"


def format_memory_op(action: str, key: str, value: Any = None) -> str:
    """One ``<memory>`` block in the JSON form (``value`` only for a write)."""
    op: dict[str, Any] = {"action": action, "key": key}
    if action == "write":
        op["value"] = value
    return f"<memory>{json.dumps(op, ensure_ascii=False, default=str)}</memory>"


# The B2T actions that are not tool calls, as typed functions returning the action's text: what a
# policy that only calls tools (TRL's tool loop) calls instead of writing the tags.


def submit_plan(plan: str) -> str:
    """Deliver the final travel plan; this ends the task.

    Args:
        plan: The plan as a JSON list with one object per day of the trip.

    Returns:
        A confirmation.
    """
    text = plan if isinstance(plan, str) else json.dumps(plan, ensure_ascii=False)
    return f"<answer>{text}</answer>"


def memory(action: Literal["read", "write"], key: str, value: str | None = None) -> str:
    """Read or write the session memory, a dictionary kept for this task.

    Args:
        action: "write" stores value under key; "read" returns the value of key ("all": everything).
        key: The memory key, e.g. "preferences".
        value: The value to store (text; JSON allowed), for "write" only.

    Returns:
        The stored value (read) or a confirmation (write), or an error.
    """
    return format_memory_op(action, key, value)


__all__ = [
    "MEMORY_RESPONSE",
    "TOOL_RESPONSE",
    "ActionError",
    "Memory",
    "MemoryOp",
    "ParsedMessage",
    "ToolCallAction",
    "format_memory_op",
    "format_responses",
    "format_tool_call",
    "memory",
    "parse_message",
    "parse_tool_call",
    "submit_plan",
    "tool_index",
]
