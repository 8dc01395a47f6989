"""TravelPlanner's LLM agents over the shared loops of :mod:`travelgym.agents`: native tool
calls (``llm:MODEL``, also ``tool:MODEL``), ReAct (``react:MODEL``) and the B2T action format (``b2t:MODEL``, also
``local:GGUF`` and ``hf:CKPT``, e.g. a Behavior2Trip GRPO checkpoint). In sole-planning mode
each gets the reference information in the prompt and no tools."""

from __future__ import annotations

import json
import time
from typing import Any

from travelgym.agents.react import run_react
from travelgym.llm.protocol import ChatClient, ChatMessage
from travelgym.runner.loop import ChatPolicy, PolicyAgent
from travelgym.suites.travelplanner.prompts import system_prompt, user_prompt
from travelgym.suites.travelplanner.session import (
    PlannerRequest,
    PlannerSession,
    invalid_action,
)

DEFAULT_MAX_STEPS = 30


def opening(request: PlannerRequest, form: str, env: PlannerSession) -> list[dict[str, Any]]:
    """The system and first user message; the prompted formats list the tools' schemas."""
    system = system_prompt(request, form)
    if request.mode == "two-stage" and form != "tool":
        system += "\n\n# Tools\n" + json.dumps(env.tool_schemas, ensure_ascii=False)
    user = user_prompt(request)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


class _ModelAgent:
    kind = form = "tool"  # the spec kind and the prompt's action format

    def __init__(self, client: ChatClient, max_steps: int = DEFAULT_MAX_STEPS,
                 kind: str | None = None, **params: Any) -> None:  # fmt: skip
        self.client, self.max_steps, self.params = client, max_steps, params
        self.name = f"{kind or self.kind}:{client.model}"


class ToolCallingAgent(PolicyAgent):
    """Native function calling: tool calls answered by tool messages until a reply without
    tool calls, whose text holds the plan; a chat model played by the one episode loop over
    the training environment in its native mode (``kind``: ``llm``, or ``tool``, its old
    name)."""

    def __init__(self, client: ChatClient, max_steps: int = DEFAULT_MAX_STEPS,
                 kind: str = "llm", **params: Any) -> None:  # fmt: skip
        super().__init__(ChatPolicy(client, native_tools=True, **params),
                         f"{kind}:{client.model}", max_steps, {"native": True})  # fmt: skip
        self.client = client


class ReactPlanner(_ModelAgent):
    """ReAct: Thought / Action / Observation, one tool call a step, ``Finish[<plan>]``."""

    kind = form = "react"

    async def solve(self, request: PlannerRequest, env: PlannerSession) -> str | None:
        """Run the ReAct loop (sole planning: one reply, its text the answer)."""
        if request.mode == "sole-planning":
            return await _one_reply(self, request, env)
        messages = [ChatMessage.model_validate(m) for m in opening(request, self.form, env)]
        return await run_react(self.client, env, messages, self.max_steps, invalid_action,
                               **self.params)  # fmt: skip


class B2TPlanner(PolicyAgent):
    """The B2T action format (``<think>``, parallel ``<tool_call>``, ``<memory>``,
    ``<answer>``): a chat model played by the one episode loop
    (:func:`travelgym.runner.loop.play`) over the training environment."""

    def __init__(self, client: ChatClient, max_steps: int = DEFAULT_MAX_STEPS,
                 kind: str = "b2t", **params: Any) -> None:  # fmt: skip
        super().__init__(ChatPolicy(client, **params), f"{kind}:{client.model}", max_steps)
        self.client = client


async def _one_reply(agent: _ModelAgent, request: PlannerRequest, env: PlannerSession) -> str:
    env.messages = opening(request, agent.form, env)
    tick = time.perf_counter()
    messages = [ChatMessage.model_validate(m) for m in env.messages]
    response = await agent.client.complete(messages, **agent.params)
    env.count_llm(response.usage, response.repairs)
    text = response.message.content or ""
    env.messages.append({"role": "assistant", "content": text})
    env.add_step(text=text, answer=True, usage=response.usage,
                 duration_s=round(time.perf_counter() - tick, 4))  # fmt: skip
    return text
