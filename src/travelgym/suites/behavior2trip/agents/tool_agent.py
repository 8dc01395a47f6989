"""``llm:MODEL``: a chat model plans the trip with native tool calls
(:func:`travelgym.agents.tool_calling.apply_native_message` in the training environment's
native mode, played by the one episode loop), Behavior2Trip's prompt and plan format; its final
reply without tool calls is the plan."""

from __future__ import annotations

from typing import Any

from travelgym.llm.protocol import ChatClient
from travelgym.runner.loop import ChatPolicy, PolicyAgent
from travelgym.suites.behavior2trip.agents.base import (
    DEFAULT_MAX_STEPS,
    TripRequest,
    TripToolSession,
)
from travelgym.suites.behavior2trip.agents.prompts import plan_format, user_message

PROMPT = """You are a seasoned travel planner. Using the user's behavior trajectory to infer their preferences, collect information by calling the tools, then deliver a complete, personalized travel plan: your last reply, without any tool call, is the plan itself (the JSON array described below and nothing else).

# Plan format
{plan_format}"""


def tool_schemas(env: TripToolSession, ask_user: bool) -> list[dict[str, Any]]:
    """The tools the model may call: the 9 tools (and RQ1's ``AskUser`` when ``ask_user``)."""
    schemas = list(env.tool_schemas)
    if ask_user:
        from travelgym.suites.behavior2trip.clarify import ASK_USER, clarify_registry

        schemas.append(clarify_registry()[ASK_USER].openai_schema())
    return schemas


def opening(request: TripRequest) -> list[dict[str, Any]]:
    """The chat a native tool-calling episode starts from: the prompt, then the task."""
    return [{"role": "system", "content": PROMPT.format(plan_format=plan_format())},
            {"role": "user", "content": user_message(request)}]  # fmt: skip


class ToolCallingTripAgent(PolicyAgent):
    """Native tool calls until a reply without them, whose text is the plan: a chat model
    played by the one episode loop over the training environment in its native mode."""

    def __init__(self, client: ChatClient, max_steps: int = DEFAULT_MAX_STEPS,
                 **params: Any) -> None:  # fmt: skip
        super().__init__(ChatPolicy(client, native_tools=True, **params), f"llm:{client.model}",
                         max_steps, {"native": True})  # fmt: skip
        self.client = client
