"""Applying one B2T-Agent message to an episode: the single implementation behind both
:meth:`~travelgym.suites.behavior2trip.agents.b2t_agent.B2TAgent.solve` (inference) and
:meth:`~travelgym.suites.behavior2trip.environment.TripTrainingEnv.step` (training).

A message is parsed (:func:`~travelgym.agents.b2t_format.parse_message`); its tool calls run
in order (parallel in the paper's sense: all answered in the next message), its memory
operations read and write the episode's :class:`~travelgym.agents.b2t_format.Memory`, and
every malformed action, failed tool call or failed memory read is an invalid action (Section 4.2).
The assistant message and the observation go into ``env.messages`` and the step into
``env.steps``. With ``memory=None`` (the no-memory ablation) every ``<memory>`` operation is an
invalid action answered with an error.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from travelgym.agents.b2t_format import (
    MEMORY_RESPONSE,
    TOOL_RESPONSE,
    ActionError,
    Memory,
    MemoryOp,
    ToolCallAction,
    format_responses,
    parse_message,
)
from travelgym.llm.protocol import Usage
from travelgym.suites.behavior2trip.agents.base import (
    InvalidAction,
    MemoryOpRecord,
    TripStep,
    TripToolSession,
)

MEMORY_DISABLED = "memory is disabled in this environment: <memory> operations are invalid"


@dataclass
class B2TStepResult:
    """What one message did: the recorded step, the plan (when it answered) or the observation
    (the next user message: ``<tool_response>`` / ``<memory_response>`` blocks)."""

    step: TripStep
    answer: str | None = None
    observation: str | None = None
    from_tools: bool = False  # the observation holds tool responses
    from_memory: bool = False  # the observation holds memory responses

    @property
    def invalid_actions(self) -> list[InvalidAction]:
        return self.step.invalid_actions


def invalid_format(step: int, error: ActionError) -> InvalidAction:
    """The invalid-action record of a malformed action."""
    return InvalidAction(step=step, source="format", kind=error.kind, message=error.message,
                         raw=error.raw[:500])  # fmt: skip


async def apply_b2t_message(
    env: TripToolSession,
    memory: Memory | None,
    text: str,
    *,
    usage: Usage | None = None,
    started: float | None = None,
) -> B2TStepResult:
    """Apply one assistant message ``text`` to ``env`` (see the module docstring); ``usage`` and
    ``started`` (a ``time.perf_counter()`` tick) are recorded with the step."""
    usage = usage or Usage()
    started = time.perf_counter() if started is None else started
    env.messages.append({"role": "assistant", "content": text})
    parsed = parse_message(text, env.tool_names)
    index = len(env.steps)
    invalid = [invalid_format(index, e) for e in parsed.errors]
    think = "\n".join(parsed.think) or None
    if parsed.answer is not None:
        step = env.add_step(text=text, think=think, invalid_actions=invalid, answer=True,
                            usage=usage, duration_s=_since(started))  # fmt: skip
        return B2TStepResult(step, answer=parsed.answer)
    responses: list[tuple[str, str]] = []
    ops: list[MemoryOpRecord] = []
    for item in parsed.items:
        if isinstance(item, ToolCallAction):
            record = await env.acall(item.name, item.arguments, f"call_{index}_{len(responses)}")
            responses.append((TOOL_RESPONSE, env.observation_text(record)))
        elif isinstance(item, MemoryOp):
            ok, reply = _memory_reply(memory, item)
            responses.append((MEMORY_RESPONSE, reply))
            ops.append(MemoryOpRecord(action=item.action, key=item.key, value=item.value, ok=ok,
                                      response=reply))  # fmt: skip
            if not ok:
                kind = "missing_entry" if memory is not None else "memory_disabled"
                invalid.append(InvalidAction(step=index, source="memory", kind=kind,
                                             message=reply, raw=item.raw[:500]))  # fmt: skip
        else:
            responses.append((item.tag, item.payload()))
    observation = format_responses(responses)
    env.messages.append({"role": "user", "content": observation})
    step = env.add_step(text=text, think=think, memory_ops=ops, invalid_actions=invalid,
                        observation=observation, usage=usage, duration_s=_since(started))  # fmt: skip
    tags = {tag for tag, _ in responses}
    return B2TStepResult(step, observation=observation, from_tools=TOOL_RESPONSE in tags,
                         from_memory=MEMORY_RESPONSE in tags)  # fmt: skip


def _memory_reply(memory: Memory | None, op: MemoryOp) -> tuple[bool, str]:
    if memory is None:
        return False, json.dumps({"error": {"category": "memory", "message": MEMORY_DISABLED}})
    return memory.apply(op)


def _since(tick: float) -> float:
    return round(time.perf_counter() - tick, 4)
