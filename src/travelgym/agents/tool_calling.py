"""The native tool-calling step: every tool call of one assistant message runs through a
:class:`~travelgym.agents.tool_session.ToolSession` and is answered by a tool message (parallel
calls: all answered before the model's next step). A suite reads the message without tool calls
(the end of the agent's turn) in its own reply format."""

from __future__ import annotations

import json
import time
from typing import Any

from travelgym.agents.tool_session import ToolSession
from travelgym.core.records import ToolCallRecord
from travelgym.llm.protocol import ChatMessage, Usage
from travelgym.toolkit.budget import RESULT_BUDGET_CHARS, fit_json

MAX_TOOL_RESULT_CHARS = RESULT_BUDGET_CHARS  # the tools page by the same budget
OVERSIZE_HINT = "narrow the search or ask for the next page"
_UNSET = object()


def run_tool_calls(session: ToolSession, message: ChatMessage,
                   max_chars: int = MAX_TOOL_RESULT_CHARS) -> list[ChatMessage]:  # fmt: skip
    """Run the tool calls of ``message`` in order; the tool messages that answer them."""
    out = []
    for call in message.tool_calls or ():
        record = session.call(call.name, call.arguments, call.id)
        content = tool_message_content(record, max_chars, session.payload(record))
        out.append(ChatMessage(role="tool", tool_call_id=call.id, name=call.name,
                               content=content))  # fmt: skip
    return out


def tool_message_content(record: ToolCallRecord, max_chars: int = MAX_TOOL_RESULT_CHARS,
                         payload: Any = _UNSET) -> str:  # fmt: skip
    """The text of the tool message answering a call: its result (or categorised error) as
    JSON, always a complete document of at most ``max_chars`` characters (the tools page
    within that budget; a result that still exceeds it is shortened to whole items with a note,
    or answered by a ``result_too_large`` error: :func:`~travelgym.toolkit.budget.fit_json`).
    ``payload``: what the call returned, when the record does not keep it (the session's
    :meth:`~travelgym.agents.tool_session.ToolSession.payload`)."""
    if payload is _UNSET:
        payload = record.result if record.ok else {
            "error": {"category": record.error_category, "message": record.error_message}}  # fmt: skip
    return fit_json(payload, max_chars, OVERSIZE_HINT)


def step_limit_message(max_steps: int) -> str:
    """The error that closes a turn in which the model made ``max_steps`` tool rounds."""
    return f"step limit of {max_steps} tool rounds reached"


def as_assistant(action: Any) -> ChatMessage:
    """An environment's action as an assistant message: a :class:`ChatMessage`, an OpenAI-style
    message dict, or plain text."""
    if isinstance(action, ChatMessage):
        message = action
    elif isinstance(action, dict):
        message = ChatMessage.from_openai({"role": "assistant", **action})
    elif isinstance(action, str):
        message = ChatMessage(role="assistant", content=action)
    else:
        raise TypeError(f"an action is a message dict or its text, not {type(action).__name__}")
    if message.role != "assistant":
        raise ValueError(f"an action is an assistant message, not a {message.role!r} one")
    return message


def native_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An assistant message making the one native tool call ``name(arguments)`` (the
    environment gives it its id)."""
    call = {"type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


async def apply_native_message(env: Any, message: ChatMessage, usage: Usage | None = None,
                               started: float | None = None) -> tuple[list[dict[str, Any]], str | None]:  # fmt: skip
    """Apply one assistant message with native tool calls to a step session ``env`` (its
    ``acall``, ``messages`` and ``add_step``): each call runs (in order) and is answered by a
    tool message; a message without tool calls is the answer. ``(the tool messages, the answer
    text or None)``; the message and the replies join ``env.messages``, one step records it."""
    tick = time.perf_counter() if started is None else started
    env.messages.append(message.to_openai())
    text = message.content or ""
    step = {"text": text, "usage": usage or Usage()}
    if not message.tool_calls:
        env.add_step(answer=True, duration_s=round(time.perf_counter() - tick, 4), **step)
        return [], text
    replies = []
    for call in message.tool_calls:
        record = await env.acall(call.name, call.arguments, call.id)
        content = tool_message_content(record, payload=env.payload(record))
        reply = ChatMessage(role="tool", tool_call_id=call.id, name=call.name,
                            content=content).to_openai()  # fmt: skip
        env.messages.append(reply)
        replies.append(reply)
    env.add_step(duration_s=round(time.perf_counter() - tick, 4), **step)
    return replies, None
