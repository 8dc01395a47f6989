"""The ReAct baseline (Yao et al., 2023) as TravelPlanner adapts it: Thought / Action /
Observation, one action per step (the shared loop, :func:`travelgym.agents.react.run_react`),
with Behavior2Trip's prompt; ``Finish[<plan>]`` delivers the plan."""

from __future__ import annotations

from typing import Any

from travelgym.agents.react import ReactStep, parse_react, run_react
from travelgym.llm.protocol import ChatClient, ChatMessage
from travelgym.suites.behavior2trip.agents.b2t_step import invalid_format
from travelgym.suites.behavior2trip.agents.base import (
    DEFAULT_MAX_STEPS,
    TripRequest,
    TripToolSession,
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

__all__ = ["PROMPT", "ReactAgent", "ReactStep", "parse_react", "system_prompt"]


def system_prompt(ask_user: bool = False) -> str:
    """The ReAct prompt (``ask_user``: with RQ1's ``AskUser`` tool listed)."""
    return PROMPT.format(plan_format=plan_format(), tools=tool_listing(ask_user))


class ReactAgent:
    """One tool call per step; the plan comes with ``Finish[...]``."""

    def __init__(
        self, client: ChatClient, max_steps: int = DEFAULT_MAX_STEPS, **params: Any
    ) -> None:
        self.client = client
        self.max_steps = max_steps
        self.params = params
        self.name = f"react:{client.model}"

    async def solve(self, request: TripRequest, env: TripToolSession) -> str | None:
        messages = [ChatMessage(role="system", content=system_prompt(request.ask_limit > 0)),
                    ChatMessage(role="user", content=user_message(request))]  # fmt: skip
        return await run_react(self.client, env, messages, self.max_steps, invalid_format,
                               **self.params)  # fmt: skip
