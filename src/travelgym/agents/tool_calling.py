"""The native tool-calling step: every tool call of one assistant message runs through a
:class:`~travelgym.agents.tool_session.ToolSession` and is answered by a tool message (parallel
calls: all answered before the model's next step). A suite reads the message without tool calls
(the end of the agent's turn) in its own reply format."""

from __future__ import annotations

import json

from travelgym.agents.tool_session import ToolSession
from travelgym.core.records import ToolCallRecord
from travelgym.llm.protocol import ChatMessage

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
