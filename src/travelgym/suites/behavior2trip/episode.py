"""One Behavior2Trip episode: an agent reads the request and the behaviour trajectory, uses the
tools (and its memory) and delivers a plan, which is scored by the 32 checks.

``run_trip_episode`` never raises for agent, tool or model failures: they are recorded in the
:class:`TripEpisode`, and an episode without a plan scores as undelivered.
"""

from __future__ import annotations

import sqlite3
import time
import traceback
from typing import Any, Literal

from pydantic import Field

from travelgym.core.episode import EpisodeBase
from travelgym.core.outcomes import settle
from travelgym.llm.protocol import LLMError, count_repairs
from travelgym.llm.text import serialisable
from travelgym.suites.behavior2trip.agents.base import (
    InvalidAction,
    MemoryOpRecord,
    TripAgent,
    TripRequest,
    TripStep,
    TripToolSession,
)
from travelgym.suites.behavior2trip.clarify import Clarification

Termination = Literal["answered", "step_limit", "error"]


class TripEpisode(EpisodeBase):
    """Everything one episode produced, JSON-serialisable (one line of ``episodes.jsonl``).

    ``task_id`` repeats ``instance_id`` (the run store keys episodes by task and trial).
    ``p_action`` is the paper's incorrect-action penalty: -1 when any action was invalid.
    """

    suite: Literal["behavior2trip"] = "behavior2trip"
    instance_id: str
    split: str
    difficulty: str
    instruction: str = ""
    steps: list[TripStep] = Field(default_factory=list)
    final_answer: str | None = None  # the delivered plan as "<answer>...</answer>"
    termination: Termination = "step_limit"
    invalid_actions: int = 0
    p_action: int = 0
    memory: dict[str, Any] = Field(default_factory=dict)  # the memory at the end
    tool_calls: int = 0
    # RQ1 (docs/behavior2trip/rq1.md): the trajectory withheld; the clarification dialogue
    # with the simulated user (None: no AskUser), its ``turns`` the interaction burden
    trajectory_withheld: bool = False
    clarification: Clarification | None = None

    @property
    def invalid_action_log(self) -> list[InvalidAction]:
        return [a for s in self.steps for a in s.invalid_actions]

    @property
    def memory_ops(self) -> list[MemoryOpRecord]:
        return [op for s in self.steps for op in s.memory_ops]


async def run_trip_episode(
    instance: Any,
    agent: TripAgent,
    conn: sqlite3.Connection,
    *,
    seed: int = 0,
    trial: int = 0,
    keep_results: bool | None = None,
    score: bool = True,
    score_db: Any = None,
    withhold_trajectory: bool = False,
    user: Any = None,
) -> TripEpisode:
    """Run ``agent`` on ``instance`` (an :class:`~travelgym.suites.behavior2trip.instances.Instance`) and score
    its answer with the 32 checks (``score_db``: a shared :class:`~travelgym.suites.behavior2trip.checks.PlanDB`
    whose caches serve many episodes; default a fresh one over ``conn``). Tool results are kept
    in the trajectory unless the agent says otherwise (``keep_results`` attribute, e.g. the
    scripted baseline). RQ1: ``withhold_trajectory`` gives the agent the request without the
    behaviour trajectory; ``user`` (a :class:`~travelgym.suites.behavior2trip.clarify_user.SimulatedUser`)
    answers its ``AskUser`` questions."""
    started = time.perf_counter()
    keep = keep_results if keep_results is not None else getattr(agent, "keep_results", True)
    env = TripToolSession(conn, keep_results=keep)
    if user is not None:
        from travelgym.suites.behavior2trip.clarify import enable_clarification

        enable_clarification(env, user)
    request = TripRequest.of(instance, withhold=withhold_trajectory,
                             ask_limit=user.log.limit if user is not None else 0)  # fmt: skip
    answer, termination, error, failure = None, "step_limit", None, None
    try:
        if getattr(agent, "reads_hidden_profile", False):  # the oracle, a reference agent
            plan = await agent.solve(request, env, profile=instance.profile)
        else:
            plan = await agent.solve(request, env)
        if plan is not None:
            answer, termination = f"<answer>{plan}</answer>", "answered"
    except LLMError as exc:
        termination, error, failure = "error", f"agent: {exc}", exc
    except Exception as exc:  # noqa: BLE001 - an episode must never take the run down
        termination, failure = "error", exc
        error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}"
    episode = build_trip_episode(instance, env, agent.name, answer, termination, error,
                                 seed=seed, trial=trial)  # fmt: skip
    settle(episode, failure)
    episode.trajectory_withheld = withhold_trajectory
    episode.clarification = user.log if user is not None else None
    if user is not None:
        episode.user_usage = user.usage
    if score:
        episode.score = score_answer(instance, answer, score_db if score_db is not None else conn)
    episode.duration_s = round(time.perf_counter() - started, 4)
    episode, replaced = serialisable(episode)  # whatever slipped past the boundary
    if replaced:
        episode.repairs["invalid_unicode"] = episode.repairs.get("invalid_unicode", 0) + 1
    return episode


def build_trip_episode(instance: Any, env: TripToolSession, agent: str, answer: str | None,
                       termination: Termination, error: str | None = None, *, seed: int = 0,
                       trial: int = 0) -> TripEpisode:  # fmt: skip
    """The (unscored) :class:`TripEpisode` of what ``env`` recorded; ``answer`` is the delivered
    ``<answer>...</answer>`` text or ``None``. Shared by :func:`run_trip_episode` and the training
    environment."""
    invalid = sum(len(s.invalid_actions) for s in env.steps)
    repairs: dict[str, int] = {}
    for step in env.steps:
        count_repairs(step.repairs, repairs)
        for call in step.tool_calls:
            count_repairs(call.repairs, repairs)
    return TripEpisode(
        episode_id=f"{instance.instance_id}#{trial}", task_id=instance.instance_id,
        instance_id=instance.instance_id, split=instance.split, difficulty=instance.difficulty,
        trial=trial, agent=agent, seed=seed, instruction=instance.instruction.text,
        steps=env.steps, messages=env.messages, final_answer=answer, termination=termination,
        error=error, invalid_actions=invalid, p_action=-1 if invalid else 0, memory=env.memory,
        usage=env.usage, llm_calls=env.llm_calls,
        tool_calls=sum(len(s.tool_calls) for s in env.steps), repairs=repairs,
    )  # fmt: skip


def score_answer(instance: Any, answer: str | None, db: Any) -> dict[str, Any] | None:
    """The checks' verdict on an answer (``None``: nothing delivered); ``None`` (recorded as
    unscored) if scoring itself fails."""
    from travelgym.suites.behavior2trip.scoring import score_plan

    try:
        return score_plan(instance, answer, db)
    except Exception:  # noqa: BLE001 - a scorer bug must not lose the episode
        return None
