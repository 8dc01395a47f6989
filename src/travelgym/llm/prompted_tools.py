"""Tool calling by prompt, for chat models served without a native tool-call parser.

The tool schemas go into the system message; the model answers with Hermes-style blocks
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` that :func:`split_tool_calls`
turns into OpenAI ``tool_calls``; earlier tool calls and tool results are written back into
the chat as text (``<tool_call>`` in the assistant turn, ``<tool_response>`` in a user turn).
A block that is not valid JSON still becomes a tool call (empty name, the raw text as
arguments), so the tool layer records it as the agent's error instead of losing it.
"""

from __future__ import annotations

import json
import re
from typing import Any

TOOL_CALL_RE = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)

INSTRUCTIONS = """# Tools

You may call one or more functions to assist with the user query. The function signatures are:
<tools>
{schemas}
</tools>

To call a function, write one block per call, with the arguments as a JSON object:
<tool_call>
{{"name": "<function name>", "arguments": {{"<parameter>": <value>}}}}
</tool_call>
The results come back in <tool_response></tool_response> blocks. To talk to the user, write plain text without any <tool_call> block."""


def tools_instructions(tools: list[dict[str, Any]]) -> str:
    """The system-prompt section that lists the tools and the call format."""
    schemas = "\n".join(json.dumps(t.get("function", t), ensure_ascii=False) for t in tools)
    return INSTRUCTIONS.format(schemas=schemas)


def _call_text(call: dict[str, Any]) -> str:
    fn = call.get("function") or {}
    raw = fn.get("arguments") or "{}"
    try:
        args: Any = json.loads(raw)
    except (TypeError, ValueError):
        args = raw
    body = json.dumps({"name": fn.get("name", ""), "arguments": args}, ensure_ascii=False)
    return f"<tool_call>\n{body}\n</tool_call>"


def to_prompted_messages(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
                         ) -> list[dict[str, Any]]:  # fmt: skip
    """OpenAI chat messages (with tool calls and tool results) as plain system/user/assistant
    text; consecutive tool results become one user message."""
    out: list[dict[str, Any]] = []
    section = tools_instructions(tools) if tools else ""
    if section and not (messages and messages[0].get("role") == "system"):
        out.append({"role": "system", "content": section})
    for i, msg in enumerate(messages):
        role, content = msg.get("role"), msg.get("content") or ""
        if role == "system":
            out.append(
                {
                    "role": "system",
                    "content": f"{content}\n\n{section}" if (i == 0 and section) else content,
                }
            )
        elif role == "assistant":
            parts = [content] if content else []
            parts += [_call_text(c) for c in msg.get("tool_calls") or []]
            out.append({"role": "assistant", "content": "\n".join(parts)})
        elif role == "tool":
            block = f"<tool_response>\n{content}\n</tool_response>"
            if out and out[-1].get("_tool_results"):
                out[-1]["content"] += "\n" + block
            else:
                out.append({"role": "user", "content": block, "_tool_results": True})
        else:
            out.append({"role": "user", "content": content})
    for msg in out:
        msg.pop("_tool_results", None)
    return out


def split_tool_calls(text: str | None) -> tuple[str | None, list[dict[str, Any]]]:
    """(the text without its ``<tool_call>`` blocks, the blocks as OpenAI tool calls)."""
    if not text or "<tool_call>" not in text:
        return text, []
    calls = []
    for index, match in enumerate(TOOL_CALL_RE.finditer(text)):
        body = match.group(1).strip()
        name, arguments = "", body
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("name"), str):
            name = parsed["name"]
            args = parsed.get("arguments", parsed.get("parameters", {}))
            arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        calls.append({"id": f"call_{index}", "type": "function",
                      "function": {"name": name, "arguments": arguments}})  # fmt: skip
    rest = TOOL_CALL_RE.sub("", text).strip()
    return rest or None, calls


def attach_tool_calls(completion: Any) -> Any:
    """Parse ``<tool_call>`` blocks out of an OpenAI-shaped completion's first message."""
    try:
        message = completion["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return completion  # malformed: the shared parser reports it
    if isinstance(message, dict) and not message.get("tool_calls"):
        content, calls = split_tool_calls(message.get("content"))
        if calls:
            message["content"], message["tool_calls"] = content, calls
            completion["choices"][0]["finish_reason"] = "tool_calls"
    return completion
