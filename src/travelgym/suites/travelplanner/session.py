"""What a TravelPlanner agent sees and does: the public request (the query; in sole-planning
mode also the reference information) and the per-episode session over the 7 tools that records
every step, in the shape the shared agent loops (:mod:`travelgym.agents`) drive."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from travelgym.agents.observation import observation_json
from travelgym.agents.step_session import StepSession
from travelgym.core.records import ToolCallRecord
from travelgym.llm.protocol import Repair, Usage
from travelgym.suites.travelplanner.records import LocalConstraint, Query
from travelgym.suites.travelplanner.sandbox import Sandbox
from travelgym.suites.travelplanner.tools import PlannerContext, planner_registry
from travelgym.toolkit.budget import RESULT_BUDGET_CHARS

Mode = Literal["sole-planning", "two-stage"]
MAX_RESULT_CHARS = RESULT_BUDGET_CHARS
CUT_HINT = "NotebookWrite still records the whole listing"  # a listing shortened to fit


class PlannerRequest(BaseModel):
    """The public side of a query: never its annotated plan; ``reference_information`` only in
    sole-planning mode (tool-mode agents gather it with the tools)."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    mode: Mode
    query: str
    org: str
    dest: str
    days: int
    visiting_city_number: int
    date: list[str]
    people_number: int
    local_constraint: LocalConstraint
    budget: float
    reference_information: list[dict[str, str]] | None = None

    @classmethod
    def of(cls, query: Query, mode: Mode) -> PlannerRequest:
        """The request an agent gets for ``query`` in ``mode``."""
        fields = query.model_dump(include=set(cls.model_fields) - {"mode", "reference_information"})
        reference = query.reference_information if mode == "sole-planning" else None
        return cls(mode=mode, reference_information=reference, **fields)

    def as_query(self) -> Query:
        """The request as a :class:`Query` (level unknown to the agent: ``"easy"``)."""
        fields = self.model_dump(exclude={"mode"}, by_alias=False)
        idx = int(self.task_id.rsplit("-", 1)[-1]) if self.task_id[-1:].isdigit() else 1
        return Query(split="test", idx=idx, level="easy", **fields)


class PlannerStep(BaseModel):
    """One agent step: the model's message, its tool calls, malformed actions and what went back."""

    index: int
    text: str = ""  # the model's raw message (scripted agents: a note)
    think: str | None = None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    invalid_actions: list[dict[str, Any]] = Field(default_factory=list)
    observation: str | None = None
    answer: bool = False
    delivered: str | None = None  # the answer it delivered, as the episode keeps it
    usage: Usage = Field(default_factory=Usage)
    duration_s: float = 0.0
    repairs: list[Repair] = Field(default_factory=list)


class PlannerSession(StepSession):
    """The TravelPlanner tools over one episode's :class:`PlannerContext`; records steps, the
    chat and model usage; never raises."""

    ensure_ascii = False

    def __init__(self, sandbox: Sandbox, keep_results: bool = True,
                 max_result_chars: int = MAX_RESULT_CHARS) -> None:  # fmt: skip
        super().__init__(planner_registry(), PlannerContext(sandbox), keep_results)
        self.max_result_chars = max_result_chars

    @property
    def notebook(self) -> list[dict[str, str]]:
        """The notebook the tools filled (reference-information entries)."""
        return self.context.reference_information()

    async def acall(self, name: Any, arguments: Any, call_id: str | None = None) -> ToolCallRecord:
        """:meth:`call` for async agents (the tools are quick lookups)."""
        return self.call(name, arguments, call_id)

    def observation_text(self, record: ToolCallRecord) -> str:
        """The JSON text an agent reads for a call: complete, within ``max_result_chars``."""
        return observation_json(self.payload(record), self.max_result_chars, CUT_HINT)

    def add_step(self, **fields: Any) -> PlannerStep:
        """Close a step with the tool calls made since the previous one (a failed call is an
        invalid action) and the repairs of the model replies counted since."""
        index = len(self.steps)
        invalid = [_invalid_dict(a, index) for a in fields.pop("invalid_actions", [])]
        return self.close_step(invalid, **fields)

    def make_step(self, **fields: Any) -> PlannerStep:
        return PlannerStep(**fields)

    def invalid_call(self, index: int, call: ToolCallRecord) -> dict[str, Any]:
        return {"step": index, "source": "tool", "kind": call.error_category or "error",
                "message": call.error_message or ""}  # fmt: skip


def _invalid_dict(action: Any, step: int) -> dict[str, Any]:
    if isinstance(action, dict):
        return action
    raw = str(getattr(action, "raw", ""))[:500]
    return {"step": step, "source": "format", "kind": getattr(action, "kind", "invalid"),
            "message": getattr(action, "message", str(action)), "raw": raw}  # fmt: skip


def invalid_action(step: int, error: Any) -> dict[str, Any]:
    """The record of a malformed action (the ``invalid_action`` hook of the ReAct loop)."""
    return _invalid_dict(error, step)


class PlannerAgent(Protocol):
    """A TravelPlanner agent: ``solve`` returns the answer text (holding the plan) or None."""

    name: str

    async def solve(self, request: PlannerRequest, env: PlannerSession) -> str | None:
        """Plan the trip; steps, chat and usage go into ``env`` as they happen."""
        ...
