"""B2T-Agent at inference (paper Section 4.1, Figure 11): any OpenAI-compatible chat model
acting in the structured text format (``<think>``, parallel ``<tool_call>``, ``<memory>``,
``<answer>``); no native tool calling. Observations go back in one user message per step."""

from __future__ import annotations

import time
from typing import Any

from travelgym.llm.protocol import ChatClient, ChatMessage
from travelgym.trips.agents.b2t_format import (
    MEMORY_RESPONSE,
    TOOL_RESPONSE,
    ActionError,
    Memory,
    MemoryOp,
    ToolCallAction,
    format_responses,
    parse_message,
)
from travelgym.trips.agents.base import (
    DEFAULT_MAX_STEPS,
    InvalidAction,
    MemoryOpRecord,
    TripRequest,
    TripsEnv,
)
from travelgym.trips.agents.prompts import plan_format, tool_listing, user_message

PROMPT = """You are a seasoned travel planner with extensive experience in generating personalized plans. Your core task is to deeply understand the user's requirements, gather information by calling tools, and ultimately design a thorough and meticulous travel plan. You possess an internal dictionary-structured memory module for storing and retrieving key information. Use <memory></memory> to wrap any operation that reads or writes session memory using "action": "read" or "write" with a "key" (and optional "value" for write). After gathering all necessary information and crafting the complete plan, please wrap the final itinerary in JSON format between the "<answer>" and "</answer>" tags. Note: The delivered travel plan must be complete, covering every day of the trip. Please note that the final output should be a JSON list (array) that includes all travel days. Each day is an independent JSON object that follows the same internal structure.

# Action format
Each of your messages may contain:
- <think>your reasoning</think>
- one or more tool calls, run in parallel: <tool_call>{{"name": "<tool name>", "arguments": {{...}}}}</tool_call>
- memory operations: <memory>{{"action": "write", "key": "preferences", "value": {{...}}}}</memory> or <memory>{{"action": "read", "key": "preferences"}}</memory> (key "all" reads everything)
- or, alone in its message, the final plan: <answer>...</answer>
The results come back in the next message as <tool_response>...</tool_response> and <memory_response>...</memory_response>, in the order of your actions. Invalid actions (malformed JSON, unknown tools or parameters, reading a missing key) return an error; avoid them.

# Plan format
{plan_format}

# Tools
{tools}"""


def system_prompt() -> str:
    return PROMPT.format(plan_format=plan_format(), tools=tool_listing())


class B2TAgent:
    """The B2T-Agent action loop with a step limit and a key-value memory per episode."""

    def __init__(
        self, client: ChatClient, max_steps: int = DEFAULT_MAX_STEPS, **params: Any
    ) -> None:
        self.client = client
        self.max_steps = max_steps
        self.params = params
        self.name = f"b2t:{client.model}"

    async def solve(self, request: TripRequest, env: TripsEnv) -> str | None:
        memory = Memory()
        env.memory = memory.data
        messages = [ChatMessage(role="system", content=system_prompt()),
                    ChatMessage(role="user", content=user_message(request))]  # fmt: skip
        env.messages = [m.to_openai() for m in messages]
        for _ in range(self.max_steps):
            tick = time.perf_counter()
            response = await self.client.complete(messages, **self.params)
            env.count_llm(response.usage)
            text = response.message.content or ""
            messages.append(ChatMessage(role="assistant", content=text))
            env.messages.append(messages[-1].to_openai())
            parsed = parse_message(text, env.tool_names)
            step = len(env.steps)
            invalid = [_invalid(step, "format", e) for e in parsed.errors]
            think = "\n".join(parsed.think) or None
            if parsed.answer is not None:
                env.add_step(text=text, think=think, invalid_actions=invalid, answer=True,
                             usage=response.usage, duration_s=_since(tick))  # fmt: skip
                return parsed.answer
            responses, ops = [], []
            for item in parsed.items:
                if isinstance(item, ToolCallAction):
                    record = await env.acall(
                        item.name, item.arguments, f"call_{step}_{len(responses)}"
                    )
                    responses.append((TOOL_RESPONSE, env.observation_text(record)))
                elif isinstance(item, MemoryOp):
                    ok, reply = memory.apply(item)
                    responses.append((MEMORY_RESPONSE, reply))
                    ops.append(MemoryOpRecord(action=item.action, key=item.key, value=item.value,
                                              ok=ok, response=reply))  # fmt: skip
                    if not ok:
                        invalid.append(InvalidAction(step=step, source="memory", kind="missing_entry",
                                                     message=reply, raw=item.raw))  # fmt: skip
                else:
                    responses.append((item.tag, item.payload()))
            observation = format_responses(responses)
            messages.append(ChatMessage(role="user", content=observation))
            env.messages.append(messages[-1].to_openai())
            env.add_step(text=text, think=think, memory_ops=ops, invalid_actions=invalid,
                         observation=observation, usage=response.usage, duration_s=_since(tick))  # fmt: skip
        return None


def _invalid(step: int, source: str, error: ActionError) -> InvalidAction:
    return InvalidAction(step=step, source=source, kind=error.kind, message=error.message,
                         raw=error.raw[:500])  # fmt: skip


def _since(tick: float) -> float:
    return round(time.perf_counter() - tick, 4)
