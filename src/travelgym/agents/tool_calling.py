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
from travelgym.llm.protocol import ChatClient, ChatMessage

MAX_TOOL_RESULT_CHARS = 12_000
TRUNCATION_NOTE = " ...[truncated: narrow the search or page]"


def run_tool_calls(session: ToolSession, message: ChatMessage,
                   max_chars: int = MAX_TOOL_RESULT_CHARS) -> list[ChatMessage]:  # fmt: skip
    """Run the tool calls of ``message`` in order; the tool messages that answer them."""
    out = []
    for call in message.tool_calls or ():
        record = session.call(call.name, call.arguments, call.id)
        out.append(ChatMessage(role="tool", tool_call_id=call.id, name=call.name,
                               content=tool_message_content(record, max_chars)))  # fmt: skip
    return out


def tool_message_content(record: ToolCallRecord, max_chars: int = MAX_TOOL_RESULT_CHARS) -> str:
    """The text of the tool message answering a call: its result (or categorised error) as
    JSON, cut at ``max_chars``."""
    content = json.dumps(record.result if record.ok else {
        "error": {"category": record.error_category, "message": record.error_message}})  # fmt: skip
    if len(content) > max_chars:
        content = content[:max_chars] + TRUNCATION_NOTE
    return content


def step_limit_message(max_steps: int) -> str:
    """The error that closes a turn in which the model made ``max_steps`` tool rounds."""
    return f"step limit of {max_steps} tool rounds reached"


async def run_tool_loop(client: ChatClient, env: Any, messages: list[ChatMessage],
                        tools: list[dict[str, Any]] | None, max_steps: int,
                        **params: Any) -> str | None:  # fmt: skip
    """Native tool calling from ``messages`` (the prompt and the task): each reply's tool calls
    run through ``env.acall`` (in order) and are answered by tool messages, until a reply
    without tool calls, whose text is returned (None after ``max_steps`` replies). ``env``
    records it all as a :class:`~travelgym.agents.react.ReactEnv` does (``messages``,
    ``count_llm``, ``add_step``: one step per reply)."""
    env.messages = [m.to_openai() for m in messages]
    for _ in range(max_steps):
        tick = time.perf_counter()
        response = await client.complete(messages, tools=tools, **params)
        env.count_llm(response.usage, response.repairs)
        message = response.message
        messages.append(message)
        env.messages.append(message.to_openai())
        text = message.content or ""
        if not message.tool_calls:
            env.add_step(text=text, answer=True, usage=response.usage,
                         duration_s=round(time.perf_counter() - tick, 4))  # fmt: skip
            return text
        for call in message.tool_calls:
            record = await env.acall(call.name, call.arguments, call.id)
            reply = ChatMessage(role="tool", tool_call_id=call.id, name=call.name,
                                content=tool_message_content(record))  # fmt: skip
            messages.append(reply)
            env.messages.append(reply.to_openai())
        env.add_step(text=text, usage=response.usage,
                     duration_s=round(time.perf_counter() - tick, 4))  # fmt: skip
    return None
