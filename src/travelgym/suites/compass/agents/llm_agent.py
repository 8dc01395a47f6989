"""The LLM tool-calling agent: native function calling over the 18 tools, parallel calls,
a step limit per user turn, and the JSON response format."""

from __future__ import annotations

from typing import Any

from travelgym.agents.tool_calling import (
    run_tool_calls,
    step_limit_message,
)
from travelgym.llm.protocol import ChatClient, ChatMessage, Usage
from travelgym.suites.compass.agents.base import AgentReply
from travelgym.suites.compass.agents.response_format import FORMAT_INSTRUCTIONS, parse_reply
from travelgym.suites.compass.env import CompassToolSession
from travelgym.suites.compass.trajectory import DialogueAct

MAX_STEPS_PER_TURN = 24

SYSTEM_PROMPT = f"""You are a travel-planning assistant for trips to US national parks in August 2025.
You talk with a user who has hard requirements (which may come out over several turns) and an
objective that ranks the options meeting them. Find the plan that satisfies EVERY requirement and
is the BEST for the objective, not just an acceptable one: search broadly (several dates,
airports, pages) and compare before recommending.

Use the tools to search the booking database; never invent package IDs. Hotel packages look like
pkg_<configid>_<startday>_<endday>_<rooms>, flights flight_<templateid>_<depday>_<retday>, permits
permit_<permitid>_<day>_<days>. Validate IDs with recommend_hotel / recommend_flight /
recommend_permit before you recommend them.

{FORMAT_INSTRUCTIONS}"""


class LLMToolAgent:
    """An OpenAI-compatible model using native tool calls."""

    reads_dialogue_acts = False

    def __init__(
        self, client: ChatClient, max_steps: int = MAX_STEPS_PER_TURN, **params: Any
    ) -> None:
        self.client = client
        self.max_steps = max_steps
        self.params = params
        self.name = f"llm:{client.model}"

    def start(self, env: CompassToolSession) -> None:
        self.env = env
        self.messages = [ChatMessage(role="system", content=SYSTEM_PROMPT)]
        self.partial = AgentReply("")

    def transcript(self) -> list[dict[str, Any]]:
        return [m.to_openai() for m in self.messages]

    async def reply(self, user_text: str, acts: list[DialogueAct]) -> AgentReply:
        self.messages.append(ChatMessage(role="user", content=user_text))
        # the turn so far: what the episode records if a later call of the turn fails
        self.partial = turn = AgentReply("")
        for _ in range(self.max_steps):
            response = await self.client.complete(
                self.messages, tools=self.env.tool_schemas, **self.params
            )
            turn.llm_calls += 1
            turn.usage = turn.usage + response.usage
            turn.repairs.extend(response.repairs)
            self.messages.append(response.message)
            tool_messages, final = apply_assistant_message(self.env, response.message)
            if final is not None:
                final.usage, final.llm_calls, final.repairs = (
                    turn.usage,
                    turn.llm_calls,
                    turn.repairs,
                )
                return final
            self.messages.extend(tool_messages)
        reply = step_limit_reply(self.max_steps, turn.usage, turn.llm_calls)
        reply.repairs = turn.repairs
        return reply


def apply_assistant_message(
    env: CompassToolSession, message: ChatMessage
) -> tuple[list[ChatMessage], AgentReply | None]:
    """Apply one assistant message of the tool-calling agent: with tool calls, run them all
    (:func:`~travelgym.agents.tool_calling.run_tool_calls`) and return the tool messages;
    without, the message ends the agent's turn and is parsed as the JSON response format into
    the :class:`AgentReply`. Shared by :class:`LLMToolAgent` and the training environment."""
    if not message.tool_calls:
        text, recommendation, error = parse_reply(message.content)
        return [], AgentReply(text, recommendation, error=error)
    return run_tool_calls(env, message), None


def step_limit_reply(max_steps: int, usage: Usage | None = None, calls: int = 0) -> AgentReply:
    """The reply that closes a turn in which the model made ``max_steps`` tool rounds."""
    return AgentReply("", None, usage or Usage(), calls, step_limit_message(max_steps))
