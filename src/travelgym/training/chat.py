"""Trajectories as training chats: the OpenAI chat form of an episode, rebuilt when the agent
kept none, and its ShareGPT (LLaMA-Factory) form.

LLM agents store their chat (``messages``) and it is used as it is. Scripted agents have no chat
and do not keep tool results, so their chat is rebuilt from the trajectory, and every tool call
is run again, in order, on the run's database (the tools are deterministic; each replayed
result must have the recorded size, else the export stops):

- COMPASS (turns): the LLM agent's system prompt; each user turn a user message; each tool call
  an assistant message with that one call, answered by its tool message (the scripted search is
  sequential: every call may depend on the previous results); the agent's words and
  recommendation a final assistant message in the JSON response format.
- Behavior2Trip (steps): the B2T-Agent prompt and task message; each step with tool calls one
  assistant message (its note as ``<think>``, its calls as parallel ``<tool_call>`` blocks)
  answered by a user message of ``<tool_response>`` blocks; the plan an ``<answer>`` message.
"""

from __future__ import annotations

import json
from typing import Any

from travelgym.suites.compass.agents.code_agent import RUN_PYTHON_SCHEMA
from travelgym.suites.compass.agents.llm_agent import SYSTEM_PROMPT, tool_message_content
from travelgym.suites.compass.trajectory import Episode, ToolCallRecord

OBSERVATION_SEPARATOR = "\n</tool_response>\n<tool_response>\n"  # LLaMA-Factory's own converter


class ReplayError(ValueError):
    """A tool call replayed on the database did not give the recorded result."""


def _check_replay(episode_id: str, old: ToolCallRecord, new: ToolCallRecord) -> None:
    if old.ok != new.ok or (old.result_chars and old.result_chars != new.result_chars):
        raise ReplayError(f"{episode_id}: replaying {old.name} ({old.id}) did not reproduce the "
                          "recorded result: is this the run's database?")  # fmt: skip


def compass_tools(agent: str) -> list[dict[str, Any]]:
    """The tool schemas a COMPASS agent was given (the code agent has only ``run_python``)."""
    if agent.startswith("code:"):
        return [RUN_PYTHON_SCHEMA]
    from travelgym.suites.compass.tools import compass_registry

    return compass_registry().openai_schemas()


def compass_chat(episode: Episode, conn: Any = None) -> list[dict[str, Any]]:
    """The OpenAI chat of a COMPASS episode: its transcript, or one rebuilt from its turns
    (``conn``: the run's database, needed when tool results were not kept)."""
    if episode.messages:
        return [dict(m) for m in episode.messages]
    from travelgym.suites.compass.env import CompassEnv as ToolEnv

    replay = ToolEnv(conn, keep_results=True) if conn is not None else None
    out: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    for turn in episode.turns:
        if turn.role == "user":
            out.append({"role": "user", "content": turn.text})
            continue
        for i, call in enumerate(turn.tool_calls):
            if call.parent is not None:
                continue  # made by the code of a run_python call, not by the model
            record = call
            if call.result is None and call.ok:
                if replay is None:
                    raise ReplayError(f"{episode.episode_id}: tool results were not kept; "
                                      "replaying them needs the run's database")  # fmt: skip
                record = replay.call(call.name, call.arguments, call.id)
                _check_replay(episode.episode_id, call, record)
            elif replay is not None:  # keep the tools' episode state (notebook) in step
                replay.call(call.name, call.arguments, call.id)
            call_id = f"call_{turn.index}_{i}"
            out.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function", "function": {
                    "name": call.name, "arguments": _arguments_text(call.arguments)}}]})  # fmt: skip
            out.append({"role": "tool", "tool_call_id": call_id,
                        "content": tool_message_content(record)})  # fmt: skip
        if turn.error and not turn.text and turn.recommendation is None:
            continue  # a failed turn said nothing
        reply = {"message": turn.text, "recommendation": turn.recommendation}
        out.append({"role": "assistant", "content": json.dumps(reply, ensure_ascii=False)})
    return out


def trip_chat(episode: Any, instance: Any = None, conn: Any = None) -> list[dict[str, Any]]:
    """The chat of a Behavior2Trip episode (B2T text format): its messages, or one rebuilt from
    its steps (``instance`` for the task message, ``conn`` to replay tool calls)."""
    if episode.messages:
        return [dict(m) for m in episode.messages]
    from travelgym.suites.behavior2trip.agents.b2t_agent import initial_messages
    from travelgym.suites.behavior2trip.agents.b2t_format import (
        MEMORY_RESPONSE,
        TOOL_RESPONSE,
        format_memory_op,
        format_responses,
        format_tool_call,
    )
    from travelgym.suites.behavior2trip.agents.base import TripRequest, TripsEnv

    if instance is None:
        raise ReplayError(f"{episode.episode_id}: rebuilding the chat needs its instance")
    replay = TripsEnv(conn, keep_results=True) if conn is not None else None
    out = initial_messages(TripRequest.of(instance))
    notes: list[str] = []
    for step in episode.steps:
        note = f"{step.text}: {step.think}" if step.think and step.text else step.think or step.text
        if note:
            notes.append(note)
        if step.answer:
            think = f"<think>{'; '.join(notes)}</think>\n" if notes else ""
            out.append({"role": "assistant", "content": think + (episode.final_answer or "")})
            break
        if not step.tool_calls and not step.memory_ops:
            continue  # a step without actions: its note goes into the next message
        blocks, responses = [], []
        for call in step.tool_calls:
            blocks.append(format_tool_call(call.name, call.arguments))
            if replay is None:
                raise ReplayError(f"{episode.episode_id}: replaying tool calls needs the database")
            record = replay.call(call.name, call.arguments, call.id)
            _check_replay(episode.episode_id, call, record)
            responses.append((TOOL_RESPONSE, replay.observation_text(record)))
        for op in step.memory_ops:
            blocks.append(format_memory_op(op.action, op.key, op.value))
            responses.append((MEMORY_RESPONSE, op.response))
        think = f"<think>{'; '.join(notes)}</think>\n" if notes else ""
        notes = []
        out.append({"role": "assistant", "content": think + "\n".join(blocks)})
        out.append({"role": "user", "content": format_responses(responses)})
    return out


def _arguments_text(arguments: Any) -> str:
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
