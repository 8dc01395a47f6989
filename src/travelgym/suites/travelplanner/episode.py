"""One TravelPlanner episode: the agent gets a query (sole-planning: with its reference
information; two-stage: the tools over the sandbox), answers with a plan, and the plan is
scored by the 8 commonsense and 5 hard constraints.

``run_planner_episode`` never raises for an agent's, a tool's or a model's failure: they are
recorded in the :class:`PlannerEpisode`, and an episode without a plan scores as undelivered.
"""

from __future__ import annotations

import time
import traceback
from typing import Any, Literal

from pydantic import Field

from travelgym.core.episode import EpisodeBase
from travelgym.core.outcomes import settle
from travelgym.llm.protocol import LLMError, count_repairs
from travelgym.llm.text import serialisable
from travelgym.suites.travelplanner.plans import score_plan
from travelgym.suites.travelplanner.records import Query
from travelgym.suites.travelplanner.sandbox import Sandbox
from travelgym.suites.travelplanner.session import (
    Mode,
    PlannerAgent,
    PlannerRequest,
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
    repairs: dict[str, int] = {}
    for step in env.steps:
        count_repairs(step.repairs, repairs)
        for call in step.tool_calls:
            count_repairs(call.repairs, repairs)
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


async def run_planner_episode(query: Query, agent: PlannerAgent, mode: Mode,
                              tool_sandbox: Sandbox, check_sandbox: Sandbox, *, seed: int = 0,
                              trial: int = 0) -> PlannerEpisode:  # fmt: skip
    """Run ``agent`` on ``query`` in ``mode``: its tools search ``tool_sandbox``, its plan is
    checked against ``check_sandbox``."""
    started = time.perf_counter()
    env = PlannerSession(tool_sandbox, keep_results=getattr(agent, "keep_results", True))
    answer, termination, error, failure = None, "step_limit", None, None
    try:
        answer = await agent.solve(PlannerRequest.of(query, mode), env)
        if answer is not None:
            termination = "answered"
    except LLMError as exc:
        termination, error, failure = "error", f"agent: {exc}", exc
    except Exception as exc:  # noqa: BLE001 - an episode must never take the run down
        termination, failure = "error", exc
        error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}"
    episode = build_episode(query, env, mode, agent.name, answer, termination, error,
                            seed=seed, trial=trial)  # fmt: skip
    settle(episode, failure)
    episode.score = safe_score(query, answer, check_sandbox)
    episode.duration_s = round(time.perf_counter() - started, 4)
    episode, replaced = serialisable(episode)
    if replaced:
        episode.repairs["invalid_unicode"] = episode.repairs.get("invalid_unicode", 0) + 1
    return episode
