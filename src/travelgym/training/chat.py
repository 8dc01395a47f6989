"""Trajectories as training chats: what every suite's chats share (replay checks, trimming,
structural checks) and the ShareGPT (LLaMA-Factory) form of an OpenAI chat.

LLM agents store their chat (``messages``) and it is used as it is. Scripted agents have no chat
and do not keep tool results, so each suite rebuilds their chat from the trajectory
(:meth:`~travelgym.core.suite.Suite.sft_chat`), running every tool call again, in order, on the
run's database (the tools are deterministic; each replayed result must have the recorded size,
else the export stops: :func:`check_replay`).
"""

from __future__ import annotations

import json
from typing import Any

OBSERVATION_SEPARATOR = "\n</tool_response>\n<tool_response>\n"  # LLaMA-Factory's own converter


class ReplayError(ValueError):
    """A chat that cannot be rebuilt: a tool call replayed on the database did not give the
    recorded result, or what the rebuild needs (the database, the instance) is missing."""


def check_replay(episode_id: str, old: Any, new: Any) -> None:
    """Raise :class:`ReplayError` unless the replayed tool call record ``new`` reproduces the
    recorded ``old`` one (same outcome and, where recorded, the same result size)."""
    if old.ok != new.ok or (old.result_chars and old.result_chars != new.result_chars):
        raise ReplayError(f"{episode_id}: replaying {old.name} ({old.id}) did not reproduce the "
                          "recorded result: is this the run's database?")  # fmt: skip


def arguments_text(arguments: Any) -> str:
    """Tool call arguments as JSON text (text is kept as it is)."""
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def trim_chat(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chat up to its last assistant message without tool calls (what a model is trained
    to end on); empty when there is none."""
    for end in range(len(messages) - 1, -1, -1):
        m = messages[end]
        if m.get("role") == "assistant" and not m.get("tool_calls"):
            return messages[: end + 1]
    return []


def chat_problems(messages: list[dict[str, Any]]) -> list[str]:
    """Structural problems of an OpenAI chat: a system message only first, a user message
    next, every tool message answering a pending tool call of the preceding assistant
    message, every call answered before the next non-tool message, an assistant message last."""
    problems: list[str] = []
    pending: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "system" and i:
            problems.append(f"message {i}: a system message after the first")
        if role != "tool" and pending:
            problems.append(f"message {i}: tool call(s) {sorted(pending)} unanswered")
            pending = set()
        if role == "assistant":
            pending = {c["id"] for c in m.get("tool_calls") or []}
        elif role == "tool":
            if m.get("tool_call_id") not in pending:
                problems.append(f"message {i}: answers no pending call ({m.get('tool_call_id')})")
            pending.discard(m.get("tool_call_id"))
    first = 1 if messages and messages[0].get("role") == "system" else 0
    if len(messages) <= first or messages[first].get("role") != "user":
        problems.append("the conversation does not open with a user message")
    if not messages or messages[-1].get("role") != "assistant" or messages[-1].get("tool_calls"):
        problems.append("the conversation does not end with an assistant reply")
    return problems


def to_sharegpt(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """LLaMA-Factory's ShareGPT form: ``{"conversations": [{"from": "human" | "gpt" |
    "function_call" | "observation", "value": ...}], "system": ..., "tools": "<json>"}``. Tool
    calls become a ``function_call`` (``{"name", "arguments"}``, a list when parallel; text next
    to the calls is dropped); consecutive tool results one ``observation``."""
    system = ""
    conversations: list[dict[str, str]] = []
    results: list[str] = []

    def flush() -> None:
        if results:
            conversations.append(
                {"from": "observation", "value": OBSERVATION_SEPARATOR.join(results)}
            )
            results.clear()

    for m in messages:
        role, content = m.get("role"), m.get("content") or ""
        if role == "system" and not conversations:
            system = content
        elif role == "tool":
            results.append(content)
        elif role == "assistant" and m.get("tool_calls"):
            flush()
            calls = [{"name": c["function"]["name"], "arguments": _arguments_value(c)}
                     for c in m["tool_calls"]]  # fmt: skip
            value = calls[0] if len(calls) == 1 else calls
            conversations.append(
                {"from": "function_call", "value": json.dumps(value, ensure_ascii=False)}
            )
        else:
            flush()
            conversations.append(
                {"from": "gpt" if role == "assistant" else "human", "value": content}
            )
    flush()
    return {"conversations": conversations, "system": system,
            "tools": json.dumps([t.get("function", t) for t in tools], ensure_ascii=False)}  # fmt: skip


def _arguments_value(call: dict[str, Any]) -> Any:
    text = call["function"].get("arguments")
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return text
    return value if isinstance(value, dict) else text


def sharegpt_problems(example: dict[str, Any]) -> list[str]:
    """Why LLaMA-Factory would skip a ShareGPT example: human/observation turns must alternate
    with gpt/function_call turns, starting with human and ending with gpt."""
    turns = example.get("conversations", [])
    odd, even = ("human", "observation"), ("gpt", "function_call")
    problems = [f"turn {i}: {t['from']} out of place" for i, t in enumerate(turns)
                if t["from"] not in (odd, even)[i % 2]]  # fmt: skip
    if not turns or turns[0]["from"] != "human":
        problems.append("does not open with a human turn")
    if not turns or turns[-1]["from"] != "gpt":
        problems.append("does not end with a gpt turn")
    return problems
