"""Applying one message in the B2T action format (:mod:`travelgym.agents.b2t_format`) to a
TravelPlanner episode: the one implementation behind the ``b2t``/``local``/``hf`` agents and the
training environment. Tool calls run in order; memory operations use the episode's memory;
every malformed action, failed call or failed memory read is an invalid action."""

from __future__ import annotations

import time
from dataclasses import dataclass

from travelgym.agents.b2t_format import (
    MEMORY_RESPONSE,
    TOOL_RESPONSE,
    Memory,
    MemoryOp,
    ToolCallAction,
    format_responses,
    parse_message,
)
from travelgym.llm.protocol import Usage
from travelgym.suites.travelplanner.session import PlannerSession, PlannerStep


@dataclass
class StepResult:
    """The recorded step and either the answer or the observation (the next user message)."""

    step: PlannerStep
    answer: str | None = None
    observation: str | None = None


async def apply_b2t_message(env: PlannerSession, memory: Memory, text: str, *,
                            tools: bool = True, usage: Usage | None = None,
                            started: float | None = None) -> StepResult:  # fmt: skip
    """Apply the assistant message ``text`` to ``env``; ``tools=False`` (sole planning) makes
    every tool call an invalid action."""
    started = time.perf_counter() if started is None else started
    usage = usage or Usage()
    env.messages.append({"role": "assistant", "content": text})
    parsed = parse_message(text, env.tool_names if tools else [])
    index = len(env.steps)
    invalid = list(parsed.errors)
    think = "\n".join(parsed.think) or None
    timing = {"usage": usage, "text": text, "think": think}
    if parsed.answer is not None:
        step = env.add_step(answer=True, invalid_actions=invalid,
                            duration_s=_since(started), **timing)  # fmt: skip
        return StepResult(step, answer=parsed.answer)
    responses: list[tuple[str, str]] = []
    for item in parsed.items:
        if isinstance(item, ToolCallAction):
            record = await env.acall(item.name, item.arguments, f"call_{index}_{len(responses)}")
            responses.append((TOOL_RESPONSE, env.observation_text(record)))
        elif isinstance(item, MemoryOp):
            ok, reply = memory.apply(item)
            responses.append((MEMORY_RESPONSE, reply))
            if not ok:
                invalid.append({"step": index, "source": "memory", "kind": "missing_entry",
                                "message": reply, "raw": item.raw[:500]})  # fmt: skip
        else:
            responses.append((item.tag, item.payload()))
    if not responses:
        responses.append((TOOL_RESPONSE, "no action: call a tool or give <answer>the JSON "
                                         "plan</answer>"))  # fmt: skip
    observation = format_responses(responses)
    env.messages.append({"role": "user", "content": observation})
    step = env.add_step(invalid_actions=invalid, observation=observation,
                        duration_s=_since(started), **timing)  # fmt: skip
    return StepResult(step, observation=observation)


def _since(tick: float) -> float:
    return round(time.perf_counter() - tick, 4)
