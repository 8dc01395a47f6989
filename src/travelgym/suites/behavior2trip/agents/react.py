"""The ReAct baseline (Yao et al., 2023) as TravelPlanner adapts it: Thought / Action /
Observation, one action per step, over any OpenAI-compatible chat model (plain text, no native
tools). An Action is a JSON tool call, ``ToolName[{...}]``, or ``Finish[<plan>]``."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any

from travelgym.llm.protocol import ChatClient, ChatMessage
from travelgym.suites.behavior2trip.agents.b2t_format import (
    ActionError,
    ToolCallAction,
    parse_tool_call,
    tool_index,
)
from travelgym.suites.behavior2trip.agents.base import (
    DEFAULT_MAX_STEPS,
    InvalidAction,
    TripRequest,
    TripsEnv,
)
from travelgym.suites.behavior2trip.agents.prompts import plan_format, tool_listing, user_message

PROMPT = """You are a seasoned travel planner. Using the user's behavior trajectory to infer their preferences, collect information with the tools and then deliver a complete, personalized travel plan. Solve the task with interleaving Thought, Action and Observation steps. Thought reasons about the current situation. Action is exactly ONE of:
(1) a tool call as a JSON object, e.g. {{"name": "AttractionSearch", "arguments": {{"city": "Beijing", "n": 5}}}}
(2) Finish[<the complete plan>] once you have gathered everything the plan needs.
Answer each step with exactly two lines, then stop and wait for the Observation:
Thought: ...
Action: ...

# Plan format
{plan_format}

# Tools
{tools}"""

_ACTION = re.compile(r"^[ \t]*\**Action(?:[ \t]*\d+)?\**[ \t]*:[ \t]*", re.M | re.I)
_THOUGHT = re.compile(r"^[ \t]*\**Thought(?:[ \t]*\d+)?\**[ \t]*:[ \t]*", re.M | re.I)
_NEXT = re.compile(r"\n[ \t]*\**(?:Observation|Thought|Action)(?:[ \t]*\d+)?\**[ \t]*:", re.I)
_BRACKET = re.compile(r"^(\w+)\s*\[(.*)\]$", re.S)


def system_prompt() -> str:
    return PROMPT.format(plan_format=plan_format(), tools=tool_listing())


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


class ReactAgent:
    """One tool call per step; the plan comes with ``Finish[...]``."""

    def __init__(
        self, client: ChatClient, max_steps: int = DEFAULT_MAX_STEPS, **params: Any
    ) -> None:
        self.client = client
        self.max_steps = max_steps
        self.params = params
        self.name = f"react:{client.model}"

    async def solve(self, request: TripRequest, env: TripsEnv) -> str | None:
        names = tool_index(env.tool_names)
        messages = [ChatMessage(role="system", content=system_prompt()),
                    ChatMessage(role="user", content=user_message(request))]  # fmt: skip
        env.messages = [m.to_openai() for m in messages]
        for _ in range(self.max_steps):
            tick = time.perf_counter()
            response = await self.client.complete(messages, **self.params)
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
                err = parsed.action
                observation = f"Observation: {err.payload()}"
                invalid.append(InvalidAction(step=step, source="format", kind=err.kind,
                                             message=err.message, raw=err.raw[:500]))  # fmt: skip
            else:
                record = await env.acall(
                    parsed.action.name, parsed.action.arguments, f"call_{step}"
                )
                observation = f"Observation: {env.observation_text(record)}"
            messages.append(ChatMessage(role="user", content=observation))
            env.messages.append(messages[-1].to_openai())
            env.add_step(invalid_actions=invalid, observation=observation,
                         duration_s=_since(tick), **timing)  # fmt: skip
        return None


def _since(tick: float) -> float:
    return round(time.perf_counter() - tick, 4)
