"""The code agent: its one tool runs Python in the sandbox, where the COMPASS tools are
importable functions (``from tools import search_hotel``)."""

from __future__ import annotations

from typing import Any

from travelgym.agents.code_exec import run_python_call, run_python_schema
from travelgym.agents.tool_calling import step_limit_message
from travelgym.llm.protocol import ChatClient, ChatMessage, Usage
from travelgym.sandbox import SandboxLimits, Workspace
from travelgym.suites.compass.agents.base import AgentReply
from travelgym.suites.compass.agents.llm_agent import PROMPT_VARIANTS, ROLE, VALIDATION
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


def system_prompt(tool_listing: str, variant: str = "paper") -> str:
    """The code agent's system prompt of ``variant`` (see
    :data:`~travelgym.suites.compass.agents.llm_agent.PROMPT_VARIANTS`): the role, the
    ``run_python`` tool and the tools it can import, the JSON response format and validation
    before recommending; ``search-hints`` adds a search strategy."""
    if variant not in PROMPT_VARIANTS:
        raise ValueError(f"unknown prompt variant {variant!r}: choose {', '.join(PROMPT_VARIANTS)}")
    hints = f"\n\n{CODE_SEARCH_HINTS}" if variant == "search-hints" else ""
    return f"""{ROLE}
Write Python with the run_python tool to search the booking database.{hints}

{tool_listing}

{VALIDATION}

{FORMAT_INSTRUCTIONS}"""


CODE_SEARCH_HINTS = """Search systematically instead of guessing: loop over dates, airports and
result pages, compute totals and compare the options."""


class CodeAgent:
    """An OpenAI-compatible model that acts by writing sandboxed Python."""

    reads_dialogue_acts = False

    def __init__(self, client: ChatClient, max_steps: int = MAX_STEPS_PER_TURN,
                 limits: SandboxLimits | None = None, prompt: str = "paper",
                 **params: Any) -> None:  # fmt: skip
        self.client = client
        if prompt not in PROMPT_VARIANTS:
            raise ValueError(f"unknown prompt variant {prompt!r}: choose "
                             f"{', '.join(PROMPT_VARIANTS)}")  # fmt: skip
        self.prompt = prompt
        self.max_steps = max_steps
        self.limits = limits or SandboxLimits()
        self.params = params
        self.name = f"code:{client.model}"

    def start(self, env: CompassToolSession) -> None:
        self.env = env
        self.workspace = Workspace()  # the sandbox's files, kept across this episode's calls
        listing = describe_tools(env.registry)
        self.messages = [ChatMessage(role="system", content=system_prompt(listing, self.prompt))]

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
