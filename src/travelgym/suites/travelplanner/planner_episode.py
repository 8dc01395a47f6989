"""The record of one TravelPlanner episode (:class:`PlannerEpisode`, one line of a run's
``episodes.jsonl``), built from what the episode's tool session recorded, and the constraints'
verdict on its plan. :mod:`~travelgym.suites.travelplanner.episode` runs episodes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from travelgym.core.episode import EpisodeBase
from travelgym.llm.protocol import step_repairs
from travelgym.suites.travelplanner.plans import score_plan
from travelgym.suites.travelplanner.records import Query
from travelgym.suites.travelplanner.sandbox import Sandbox
from travelgym.suites.travelplanner.session import (
    Mode,
    PlannerSession,
    PlannerStep,
)

Termination = Literal["answered", "step_limit", "error"]


class PlannerEpisode(EpisodeBase):
    """Everything one episode produced (one line of ``episodes.jsonl``); ``task_id`` is the
    query's ``"<split>-<idx>"``."""

    suite: Literal["travelplanner"] = "travelplanner"
    split: str
    idx: int
    level: str
    mode: Mode
    query: str = ""
    steps: list[PlannerStep] = Field(default_factory=list)
    final_answer: str | None = None  # the agent's answer text, holding the plan
    termination: Termination = "step_limit"
    invalid_actions: int = 0
    tool_calls: int = 0
    notebook: list[dict[str, str]] = Field(default_factory=list)


def build_episode(query: Query, env: PlannerSession, mode: Mode, agent: str,
                  answer: str | None, termination: Termination, error: str | None = None, *,
                  seed: int = 0, trial: int = 0) -> PlannerEpisode:  # fmt: skip
    """The (unscored) episode of what ``env`` recorded (shared with the training env)."""
    repairs = step_repairs(env.steps)
    return PlannerEpisode(
        episode_id=f"{query.task_id}#{trial}", task_id=query.task_id, split=query.split,
        idx=query.idx, level=query.level, mode=mode, query=query.query, trial=trial,
        agent=agent, seed=seed, steps=env.steps, messages=env.messages, final_answer=answer,
        termination=termination, error=error,
        invalid_actions=sum(len(s.invalid_actions) for s in env.steps),
        tool_calls=sum(len(s.tool_calls) for s in env.steps), notebook=env.notebook,
        usage=env.usage, llm_calls=env.llm_calls, repairs=repairs,
    )  # fmt: skip


def safe_score(query: Query, answer: str | None, sandbox: Sandbox | None) -> dict[str, Any] | None:
    """The plan's score (:func:`~travelgym.suites.travelplanner.plans.score_plan`); ``None``
    (recorded as unscored) if scoring itself fails."""
    try:
        return score_plan(query, answer, sandbox)
    except Exception:  # noqa: BLE001 - a scorer bug must not lose the episode
        return None
