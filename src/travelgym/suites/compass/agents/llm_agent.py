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

#: The system prompt variants: ``paper`` follows the paper's description of its prompt
#: (Appendix G.1/G.3: the role, the tools, the JSON response format, validating package IDs
#: before recommending them) and gives no search strategy; ``search-hints`` adds one.
PROMPT_VARIANTS = ("paper", "search-hints")

ROLE = """You are a travel-planning assistant for trips to US national parks in August 2025.
You talk with a user who has hard requirements (which may come out over several turns) and an
objective that ranks the options meeting them. Recommend the plan that satisfies the user's
requirements and is the best for their objective."""

#: The ``search-hints`` variant's strategy (not in the paper's prompt).
SEARCH_HINTS = """Search broadly before you recommend: try several dates, airports and result
pages, and compare the options instead of taking the first acceptable one."""

VALIDATION = """Hotel packages look like pkg_<configid>_<startday>_<endday>_<rooms>, flights
flight_<templateid>_<depday>_<retday>, permits permit_<permitid>_<day>_<days>. Validate IDs with
recommend_hotel / recommend_flight / recommend_permit before you recommend them."""


def system_prompt(variant: str = "paper") -> str:
    """The tool-calling agent's system prompt of ``variant`` (one of :data:`PROMPT_VARIANTS`)."""
    if variant not in PROMPT_VARIANTS:
        raise ValueError(f"unknown prompt variant {variant!r}: choose {', '.join(PROMPT_VARIANTS)}")
    hints = f"\n\n{SEARCH_HINTS}" if variant == "search-hints" else ""
    return f"""{ROLE}{hints}

Use the tools to search the booking database; never invent package IDs.
{VALIDATION}

{FORMAT_INSTRUCTIONS}"""


SYSTEM_PROMPT = system_prompt("paper")


class LLMToolAgent:
    """An OpenAI-compatible model using native tool calls."""

    reads_dialogue_acts = False

    def __init__(self, client: ChatClient, max_steps: int = MAX_STEPS_PER_TURN,
                 prompt: str = "paper", **params: Any) -> None:  # fmt: skip
        self.client = client
        self.max_steps = max_steps
        self.system_prompt = system_prompt(prompt)
        self.params = params
        self.name = f"llm:{client.model}"

    def start(self, env: CompassToolSession) -> None:
        self.env = env
        self.messages = [ChatMessage(role="system", content=self.system_prompt)]
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
