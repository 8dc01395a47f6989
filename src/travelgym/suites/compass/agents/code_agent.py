"""The code agent: its one tool runs Python in the sandbox, where the COMPASS tools are
importable functions (``from tools import search_hotel``)."""

from __future__ import annotations

from typing import Any

from travelgym.agents.code_exec import run_python_call, run_python_schema
from travelgym.agents.tool_calling import step_limit_message
from travelgym.llm.protocol import ChatClient, ChatMessage, Usage
from travelgym.sandbox import SandboxLimits, Workspace
from travelgym.suites.compass.agents.base import AgentReply
from travelgym.suites.compass.agents.response_format import FORMAT_INSTRUCTIONS, parse_reply
from travelgym.suites.compass.env import CompassToolSession
from travelgym.suites.compass.trajectory import DialogueAct
from travelgym.toolkit.codegen import describe_tools

MAX_STEPS_PER_TURN = 16

RUN_PYTHON_SCHEMA = run_python_schema(
    "Run a Python program in a sandbox (no network, no subprocesses, files only in its "
    "working directory, time and memory limits). The booking tools are importable from "
    "the `tools` module. Print what you want to see: stdout and stderr come back."
)


def system_prompt(tool_listing: str) -> str:
    return f"""You are a travel-planning assistant for trips to US national parks in August 2025.
The user has hard requirements (some revealed over several turns) and an objective that ranks
the options meeting them. Find the plan that satisfies EVERY requirement and is the BEST for the
objective. Write Python with the run_python tool to search the booking database systematically
(loop over dates, airports and pages; compute totals; compare) instead of guessing.

{tool_listing}

Package IDs: hotel pkg_<configid>_<startday>_<endday>_<rooms>, flight
flight_<templateid>_<depday>_<retday>, permit permit_<permitid>_<day>_<days>. Validate them with
recommend_hotel / recommend_flight / recommend_permit before recommending.

{FORMAT_INSTRUCTIONS}"""


class CodeAgent:
    """An OpenAI-compatible model that acts by writing sandboxed Python."""

    reads_dialogue_acts = False

    def __init__(self, client: ChatClient, max_steps: int = MAX_STEPS_PER_TURN,
                 limits: SandboxLimits | None = None, **params: Any) -> None:  # fmt: skip
        self.client = client
        self.max_steps = max_steps
        self.limits = limits or SandboxLimits()
        self.params = params
        self.name = f"code:{client.model}"

    def start(self, env: CompassToolSession) -> None:
        self.env = env
        self.workspace = Workspace()  # the sandbox's files, kept across this episode's calls
        listing = describe_tools(env.registry)
        self.messages = [ChatMessage(role="system", content=system_prompt(listing))]

    def transcript(self) -> list[dict[str, Any]]:
        return [m.to_openai() for m in self.messages]

    async def reply(self, user_text: str, acts: list[DialogueAct]) -> AgentReply:
        self.messages.append(ChatMessage(role="user", content=user_text))
        usage, calls = Usage(), 0
        for _ in range(self.max_steps):
            response = await self.client.complete(
                self.messages, tools=[RUN_PYTHON_SCHEMA], **self.params
            )
            calls += 1
            usage = usage + response.usage
            message = response.message
            self.messages.append(message)
            if not message.tool_calls:
                text, recommendation, error = parse_reply(message.content)
                return AgentReply(text, recommendation, usage, calls, error)
            for call in message.tool_calls:
                content = await run_python_call(self.env, call.id, call.name, call.arguments,
                                                self.limits, self.workspace)  # fmt: skip
                self.messages.append(
                    ChatMessage(role="tool", tool_call_id=call.id, name=call.name, content=content)
                )
        return AgentReply("", None, usage, calls, step_limit_message(self.max_steps))
