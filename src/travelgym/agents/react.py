"""The ReAct text format (Yao et al., 2023) and its step loop: Thought / Action / Observation,
one action per step, over any OpenAI-compatible chat model (plain text, no native tools). An
Action is a JSON tool call (``{"name": ..., "arguments": {...}}`` or ``ToolName[{...}]``),
matched against the tool registry's names, or ``Finish[<answer>]``. A suite gives the prompt,
the first user message and the environment that runs and records the steps."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from travelgym.agents.actions import ActionError, ToolCallAction, parse_tool_call, tool_index
from travelgym.core.records import ToolCallRecord
from travelgym.llm.protocol import ChatClient, ChatMessage, Repair, Usage

_ACTION = re.compile(r"^[ \t]*\**Action(?:[ \t]*\d+)?\**[ \t]*:[ \t]*", re.M | re.I)
_THOUGHT = re.compile(r"^[ \t]*\**Thought(?:[ \t]*\d+)?\**[ \t]*:[ \t]*", re.M | re.I)
_NEXT = re.compile(r"\n[ \t]*\**(?:Observation|Thought|Action)(?:[ \t]*\d+)?\**[ \t]*:", re.I)
_BRACKET = re.compile(r"^(\w+)\s*\[(.*)\]$", re.S)


@dataclass
class ReactStep:
    thought: str | None
    action: ToolCallAction | ActionError | None  # None: Finish
    answer: str | None = None


def parse_react(text: str | None, names: dict[str, str] | None = None) -> ReactStep:
    """The thought and the (first) action of one ReAct step; malformed -> ActionError."""
    text = text or ""
    act = _ACTION.search(text)
    thought_match = _THOUGHT.search(text)
    thought = None
    if thought_match:
        stop = act.start() if act and act.start() > thought_match.end() else len(text)
        thought = text[thought_match.end() : stop].strip() or None
    if act is None:
        return ReactStep(thought, ActionError("no_action", "write 'Action: ' followed by a JSON "
                                              "tool call or Finish[<plan>]"))  # fmt: skip
    rest = text[act.end() :]
    nxt = _NEXT.search(rest)
    body = (rest[: nxt.start()] if nxt else rest).strip().strip("`").strip()
    if body.lower().startswith("finish"):
        inner = body[len("finish") :].strip()
        if not (inner.startswith("[") and inner.endswith("]")) or not inner[1:-1].strip():
            return ReactStep(thought, ActionError("bad_finish", "finish with Finish[<the complete "
                                                  "plan>]", body[:500]))  # fmt: skip
        return ReactStep(thought, None, inner[1:-1].strip())
    bracket = _BRACKET.match(body)
    if bracket and not body.startswith("{"):
        args = bracket.group(2).strip() or "{}"
        body = f'{{"name": {json.dumps(bracket.group(1))}, "arguments": {args}}}'
    return ReactStep(thought, parse_tool_call(body, names))


class ReactEnv(Protocol):
    """What the loop needs of an episode: a tool session that records steps."""

    messages: list[dict[str, Any]]
    steps: list[Any]

    @property
    def tool_names(self) -> list[str]: ...

    def count_llm(self, usage: Usage, repairs: list[Repair] | None = None) -> None: ...

    async def acall(
        self, name: Any, arguments: Any, call_id: str | None = None
    ) -> ToolCallRecord: ...

    def observation_text(self, record: ToolCallRecord) -> str: ...

    def add_step(self, **fields: Any) -> Any: ...


async def run_react(client: ChatClient, env: ReactEnv, messages: list[ChatMessage],
                    max_steps: int, invalid_action: Callable[[int, ActionError], Any],
                    **params: Any) -> str | None:  # fmt: skip
    """Run ReAct steps from ``messages`` (the prompt and the task) until ``Finish[...]`` (its
    answer is returned) or ``max_steps`` (None). Each step goes into ``env``: a malformed action
    is answered as an error observation and recorded as ``invalid_action(step, error)``."""
    names = tool_index(env.tool_names)
    env.messages = [m.to_openai() for m in messages]
    for _ in range(max_steps):
        tick = time.perf_counter()
        response = await client.complete(messages, **params)
        env.count_llm(response.usage, response.repairs)
        text = response.message.content or ""
        messages.append(ChatMessage(role="assistant", content=text))
        env.messages.append(messages[-1].to_openai())
        parsed = parse_react(text, names)
        step = len(env.steps)
        timing = {"usage": response.usage, "text": text, "think": parsed.thought}
        if parsed.action is None:
            env.add_step(answer=True, duration_s=_since(tick), **timing)
            return parsed.answer
        invalid = []
        if isinstance(parsed.action, ActionError):
            observation = f"Observation: {parsed.action.payload()}"
            invalid.append(invalid_action(step, parsed.action))
        else:
            record = await env.acall(parsed.action.name, parsed.action.arguments, f"call_{step}")
            observation = f"Observation: {env.observation_text(record)}"
        messages.append(ChatMessage(role="user", content=observation))
        env.messages.append(messages[-1].to_openai())
        env.add_step(invalid_actions=invalid, observation=observation, duration_s=_since(tick),
                     **timing)  # fmt: skip
    return None


def _since(tick: float) -> float:
    return round(time.perf_counter() - tick, 4)
