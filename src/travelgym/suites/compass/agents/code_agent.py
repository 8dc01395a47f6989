"""The code agent: its one tool runs Python in the sandbox, where the COMPASS tools are
importable functions (``from tools import search_hotel``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from travelgym.core.records import ToolCallRecord
from travelgym.llm.protocol import ChatClient, ChatMessage, Usage
from travelgym.sandbox import SandboxLimits, SandboxUnavailable, Workspace, run_code
from travelgym.suites.compass.agents.base import AgentReply
from travelgym.suites.compass.agents.response_format import FORMAT_INSTRUCTIONS, parse_reply
from travelgym.suites.compass.env import CompassEnv
from travelgym.suites.compass.trajectory import DialogueAct
from travelgym.toolkit.codegen import describe_tools

MAX_STEPS_PER_TURN = 16
MAX_OUTPUT_CHARS = 12_000

RUN_PYTHON_SCHEMA = {
    "type": "function",
    "function": {
        "name": "run_python",
        "description": (
            "Run a Python program in a sandbox (no network, no subprocesses, files only in its "
            "working directory, time and memory limits). The booking tools are importable from "
            "the `tools` module. Print what you want to see: stdout and stderr come back."
        ),
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string", "description": "The Python source to run."}},
            "required": ["code"],
            "additionalProperties": False,
        },
    },
}


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

    def start(self, env: CompassEnv) -> None:
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
                content = await self._run(call.id, call.name, call.arguments)
                self.messages.append(
                    ChatMessage(role="tool", tool_call_id=call.id, name=call.name, content=content)
                )
        return AgentReply(
            "", None, usage, calls, f"step limit of {self.max_steps} tool rounds reached"
        )

    async def _run(self, call_id: str, name: str, arguments: str) -> str:
        """Run one run_python call in the sandbox (off the event loop) and record it."""
        try:
            code = json.loads(arguments).get("code") if name == "run_python" else None
        except (ValueError, AttributeError):
            code = None
        if not isinstance(code, str):
            error = ("unknown tool; the only tool is run_python" if name != "run_python"
                     else "run_python needs a JSON object {\"code\": \"...\"}")  # fmt: skip
            category = "tool_name" if name != "run_python" else "parameter"
            self.env.calls.append(ToolCallRecord(id=call_id, name=name, arguments=arguments, ok=False,
                                                 error_category=category, error_message=error))  # fmt: skip
            return json.dumps({"error": {"category": category, "message": error}})
        position = len(self.env.calls)  # the container goes before the calls its code made
        try:
            result = await asyncio.to_thread(run_code, code, tools=self.env.tool_bridge(call_id),
                                             limits=self.limits, workspace=self.workspace)  # fmt: skip
        except SandboxUnavailable as exc:
            payload = {"ok": False, "stdout": "", "stderr": "", "error": "unavailable",
                       "message": str(exc)}  # fmt: skip
            self.env.calls.insert(position, ToolCallRecord(
                id=call_id, name=name, arguments={"code": code}, ok=False, result=payload,
                error_category="sandbox", error_message=str(exc), container=True))  # fmt: skip
            return json.dumps(payload)
        payload = {"ok": result.ok, "stdout": result.stdout[-MAX_OUTPUT_CHARS:],
                   "stderr": result.stderr[-4000:], "error": result.error.value if result.error else None}  # fmt: skip
        if result.traceback:
            payload["traceback"] = result.traceback[-4000:]
        self.env.calls.insert(position, ToolCallRecord(
            id=call_id, name=name, arguments={"code": code}, ok=result.ok, result=payload,
            result_chars=len(result.stdout), error_category=None if result.ok else "sandbox",
            error_message=None if result.ok else str(payload["error"]),
            duration_ms=round(result.wall_seconds * 1000, 1), container=True,
        ))  # fmt: skip
        return json.dumps(payload)
