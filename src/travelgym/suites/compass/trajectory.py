"""Trajectories: everything an episode produced, as versioned, JSON-serialisable data.

An episode is a list of turns (user and agent) with the agent's tool calls, the user's
structured dialogue acts, recommendations, usage and timings. Metrics are computed from these
records after the fact, never from live objects.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from travelgym.core.episode import EpisodeBase
from travelgym.core.records import ToolCallRecord
from travelgym.llm.protocol import Repair, Usage

ActType = Literal[
    "open",  # the opening request: initial constraints and the objective
    "reveal",  # a progressive constraint revealed this turn
    "flag_violation",  # the user points out a violated (revealed) constraint
    "question",  # the user asks the agent to double-check / justify
    "ask_recommendation",  # the user asks for a formal recommendation
    "accept",  # the user accepts the formal recommendation: the episode ends
    "restate",  # the user repeats an already revealed constraint
    "acknowledge",  # the user takes note without deciding (requirements still to come)
    "answer",  # answering the agent's question, the user reveals the hidden constraint asked about
    "no_preference",  # the agent asked about something the user has no requirement on (detail)
    "restate_objective",  # the agent asked about something the objective ranks by
    "revise",  # the user changes a stated constraint: constraint = the new version, detail = old
    "nothing_more",  # a generic "anything else?" and no requirement to give this turn
    "undecided",  # asked about a topic (detail) whose requirement the schedule holds back
    "end_conversation",  # the user gives up: its requests for a recommendation went unanswered
]


class DialogueAct(BaseModel):
    """A structured act of the user simulator (read by oracle-NLU baselines only)."""

    type: ActType
    constraint_index: int | None = None  # index into task.constraints
    constraint: dict[str, Any] | None = None  # the constraint's JSON as the user states it
    objective: dict[str, Any] | None = None  # for open
    detail: str | None = None  # the violation text, the topic asked about, the revised sentence


class Turn(BaseModel):
    index: int
    role: Literal["user", "agent"]
    text: str = ""
    acts: list[DialogueAct] = Field(default_factory=list)
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    recommendation: dict[str, Any] | None = None  # formal recommendation given this turn
    usage: Usage = Field(default_factory=Usage)
    duration_s: float = 0.0
    error: str | None = None  # e.g. an unparseable agent reply or a provider failure
    prompt: str | None = None  # the simulator's dynamic instruction (LLM user / annotation)
    repairs: list[Repair] = Field(default_factory=list)  # what was repaired in this turn's replies


class Episode(EpisodeBase):
    """One conversation between a simulated user and an agent on one task, plus its score."""

    suite: str = "compass"
    user: str
    seed: int
    persona: dict[str, Any] = Field(default_factory=dict)
    turns: list[Turn] = Field(default_factory=list)
    final_recommendation: dict[str, Any] | None = None
    # user_ended: the user gave up after its requests for a formal recommendation went
    # unanswered (the user simulator's MAX_UNANSWERED_REQUESTS); scored like any other ending
    termination: Literal["accepted", "turn_limit", "user_ended", "error"] = "turn_limit"
    revealed_all_turn: int | None = None  # t*: the user turn at which every constraint is known

    @property
    def recommendation(self) -> dict[str, Any] | None:
        return self.final_recommendation
