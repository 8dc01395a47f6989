"""``llm:MODEL``: a chat model plans the trip with native tool calls (the shared loop,
:func:`travelgym.agents.tool_calling.run_tool_loop`), Behavior2Trip's prompt and plan format;
its final reply without tool calls is the plan."""

from __future__ import annotations

from typing import Any

from travelgym.agents.tool_calling import run_tool_loop
from travelgym.llm.protocol import ChatClient, ChatMessage
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


class ToolCallingTripAgent:
    """Native tool calls until a reply without them, whose text is the plan."""

    def __init__(self, client: ChatClient, max_steps: int = DEFAULT_MAX_STEPS,
                 **params: Any) -> None:  # fmt: skip
        self.client, self.max_steps, self.params = client, max_steps, params
        self.name = f"llm:{client.model}"

    async def solve(self, request: TripRequest, env: TripToolSession) -> str | None:
        messages = [ChatMessage(role="system", content=PROMPT.format(plan_format=plan_format())),
                    ChatMessage(role="user", content=user_message(request))]  # fmt: skip
        tools = tool_schemas(env, request.ask_limit > 0)
        return await run_tool_loop(self.client, env, messages, tools, self.max_steps,
                                   **self.params)  # fmt: skip
