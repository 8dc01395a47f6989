"""The record of one Behavior2Trip episode (:class:`TripEpisode`, one line of a run's
``episodes.jsonl``), built from what the episode's tool session recorded, and the checks'
verdict on its answer. :mod:`~travelgym.suites.behavior2trip.episode` runs episodes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from travelgym.core.episode import EpisodeBase
from travelgym.llm.protocol import step_repairs
from travelgym.suites.behavior2trip.agents.base import (
    InvalidAction,
    MemoryOpRecord,
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


def build_trip_episode(instance: Any, env: TripToolSession, agent: str, answer: str | None,
                       termination: Termination, error: str | None = None, *, seed: int = 0,
                       trial: int = 0) -> TripEpisode:  # fmt: skip
    """The (unscored) :class:`TripEpisode` of what ``env`` recorded; ``answer`` is the delivered
    ``<answer>...</answer>`` text or ``None``. The training environment's record of every
    episode, evaluation's (:func:`~travelgym.suites.behavior2trip.episode.run_trip_episode`)
    included."""
    invalid = sum(len(s.invalid_actions) for s in env.steps)
    repairs = step_repairs(env.steps)
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
