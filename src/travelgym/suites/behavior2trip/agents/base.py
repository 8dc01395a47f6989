"""What a Behavior2Trip agent sees and does: the public request, the per-episode tool
environment that records every step, and the agent protocol."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from travelgym.agents.observation import observation_json
from travelgym.agents.step_session import StepSession
from travelgym.core.records import ToolCallRecord
from travelgym.llm.protocol import Repair, Usage
from travelgym.suites.behavior2trip.actions import Action
from travelgym.suites.behavior2trip.context import TripsContext
from travelgym.suites.behavior2trip.instruction import Instruction
from travelgym.suites.behavior2trip.tools import trips_registry
from travelgym.toolkit.budget import RESULT_BUDGET_CHARS

DEFAULT_MAX_STEPS = 25  # Figure 6: ReAct runs out at 25 turns
MAX_RESULT_CHARS = RESULT_BUDGET_CHARS
CUT_NOTE = "ask for fewer results (a smaller n)"  # the hint of a result shortened to fit
OFF_LOOP_TOOLS = frozenset({"Python"})


class TripRequest(BaseModel):
    """The public side of an instance: the request and the behaviour trajectory, never the
    hidden profile. ``instruction.text`` is what LLM agents read; its fields restate it."""

    model_config = ConfigDict(frozen=True)
    instance_id: str
    instruction: Instruction
    trajectory: list[Action]
    # RQ1 (docs/behavior2trip/rq1.md): the trajectory withheld (``trajectory`` is then empty)
    # and how many AskUser questions the simulated user answers (0: no AskUser tool)
    trajectory_withheld: bool = False
    ask_limit: int = 0

    @classmethod
    def of(cls, instance: Any, withhold: bool = False, ask_limit: int = 0) -> TripRequest:
        return cls(instance_id=instance.instance_id, instruction=instance.instruction,
                   trajectory=[] if withhold else instance.trajectory,
                   trajectory_withheld=withhold, ask_limit=ask_limit)  # fmt: skip


class InvalidAction(BaseModel):
    """An invalid action (Section 4.2): a malformed action, or a tool or memory call whose
    response carried an error. ``source`` is format, tool or memory."""

    step: int
    source: Literal["format", "tool", "memory"]
    kind: str
    message: str
    raw: str = ""


class MemoryOpRecord(BaseModel):
    action: Literal["read", "write"]
    key: str
    value: Any = None
    ok: bool = True
    response: str = ""


class TripStep(BaseModel):
    """One agent step: the model's output, the actions it took and what went back."""

    index: int
    text: str = ""  # the model's raw message (scripted agents: a note)
    think: str | None = None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    memory_ops: list[MemoryOpRecord] = Field(default_factory=list)
    invalid_actions: list[InvalidAction] = Field(default_factory=list)
    observation: str | None = None  # the next user message (responses)
    answer: bool = False  # this step delivered the final answer
    delivered: str | None = None  # the answer it delivered, as the episode keeps it
    usage: Usage = Field(default_factory=Usage)
    duration_s: float = 0.0
    repairs: list[Repair] = Field(default_factory=list)  # what was repaired in the model's reply


class TripToolSession(StepSession):
    """The Behavior2Trip tools over one episode's context; records steps and never raises."""

    ensure_ascii = False

    def __init__(self, conn: sqlite3.Connection, keep_results: bool = True,
                 max_result_chars: int = MAX_RESULT_CHARS,
                 context: TripsContext | None = None) -> None:  # fmt: skip
        """``context`` (over ``conn``) may be shared by sessions that follow one another (its
        caches of a read-only database's places then serve them all)."""
        super().__init__(trips_registry(), context or TripsContext(conn), keep_results)
        self.max_result_chars = max_result_chars
        self.memory: dict[str, Any] = {}
        self.user: Any = None  # RQ1's simulated user (clarify.enable_clarification)
        self._thought: str | None = None  # begin_step's thought for the step it opens
        # step index -> how many of the step's calls had run when its thought was written
        # (0: before all of them); kept off the episode, read by Chain-of-Action annotation
        self.thought_at: dict[int, int] = {}

    async def acall(self, name: Any, arguments: Any, call_id: str | None = None) -> ToolCallRecord:
        """:meth:`call` for async agents: the sandboxed Python tool (seconds, no database) runs
        in a worker thread so that other episodes go on meanwhile."""
        if name in OFF_LOOP_TOOLS:
            return await asyncio.to_thread(self.call, name, arguments, call_id)
        if name == "AskUser" and self.user is not None:  # RQ1: the simulated user answers
            return await self.user.acall(self, arguments, call_id)
        return self.call(name, arguments, call_id)

    def observation_text(self, record: ToolCallRecord) -> str:
        """The JSON text an agent reads for a call: complete, within ``max_result_chars``."""
        return observation_json(self.payload(record), self.max_result_chars, CUT_NOTE)

    def begin_step(self, think: str) -> None:
        """Open a step with its thought, written before the calls it describes; the next
        :meth:`add_step` records it as the step's ``think`` (and where it came among the step's
        calls in :attr:`thought_at`)."""
        self._thought = think
        self.thought_at[len(self.steps)] = len(self.calls)

    def add_step(self, **fields: Any) -> TripStep:
        """Close a step: it takes the tool calls made since the previous one and the repairs of
        the model replies counted since (:meth:`count_llm`); each failed call is an invalid
        action (its response carries an error)."""
        if self._thought is not None:
            fields.setdefault("think", self._thought)
            self._thought = None
        return self.close_step(list(fields.pop("invalid_actions", [])), **fields)

    def make_step(self, **fields: Any) -> TripStep:
        return TripStep(**fields)

    def invalid_call(self, index: int, call: ToolCallRecord) -> InvalidAction:
        raw = json.dumps(call.arguments, default=str, ensure_ascii=False)[:500]
        return InvalidAction(step=index, source="tool", raw=raw, kind=call.error_category or "error",
                             message=call.error_message or "")  # fmt: skip


class TripAgent(Protocol):
    name: str

    async def solve(self, request: TripRequest, env: TripToolSession) -> str | None:
        """Plan the trip; return the final answer (the plan text inside ``<answer>``) or None.
        Steps, chat and usage go into ``env`` as they happen (kept when the agent fails)."""
        ...
