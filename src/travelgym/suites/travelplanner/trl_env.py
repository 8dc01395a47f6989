"""TravelPlanner as a TRL ``environment_factory`` environment, for TRL's native tool loop (see
:mod:`travelgym.training.trl_env`): two-stage mode, the 7 tools and ``submit_plan`` (the final
plan; it ends the task); the reward is the suite's reward of the scored episode
(:func:`~travelgym.suites.travelplanner.training.episode_reward`). Each call is one message of
the training environment, so the turn limit counts tool calls. Reached through
:meth:`~travelgym.suites.travelplanner.suite.TravelPlannerSuite.trl_environment`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from travelgym.agents.b2t_format import TOOL_RESPONSE, format_tool_call
from travelgym.suites.travelplanner.tools import planner_registry
from travelgym.suites.travelplanner.training import episode_reward
from travelgym.training.trl_env import add_tools

DEFAULT_MAX_TURNS = 100  # tool calls (and the submission) per task


def _payload(observation: str) -> str:
    """The text inside the single ``<tool_response>`` block of an observation."""
    head, tail = f"<{TOOL_RESPONSE}>", f"</{TOOL_RESPONSE}>"
    if observation.startswith(head) and observation.endswith(tail):
        return observation[len(head) : -len(tail)]
    return observation


class PlannerToolEnv:
    """TravelPlanner for TRL's tool loop over a two-stage
    :class:`~travelgym.suites.travelplanner.training_env.PlannerTrainingEnv` (see the module
    docstring)."""

    def __init__(self, env: Any) -> None:
        self._env = env

    def reset(self, **kwargs: Any) -> str:
        """Start the row's query (``task_id``; else a random one); the query text."""
        options = {"task_id": kwargs["task_id"]} if kwargs.get("task_id") else {}
        messages, _ = self._env.reset(seed=kwargs.get("seed"), options=options)
        return messages[-1]["content"]

    def _step(self, text: str) -> str:
        env = self._env
        if env.done:
            why = "the plan was submitted" if env.termination == "answered" else (
                f"the limit of {env.max_turns} calls was reached")  # fmt: skip
            return json.dumps({"error": f"the task is over: {why}"})
        observation, _, terminated, truncated, _ = env.step(text)
        if terminated:
            return "The plan was submitted."
        if truncated:
            return f"{_payload(observation)} The call limit is reached: the task is over."
        return _payload(observation)

    def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        args = {k: v for k, v in arguments.items() if v is not None}
        return self._step(format_tool_call(name, args))

    def submit_plan(self, plan: str) -> str:
        """Deliver the final travel plan; this ends the task.

        Args:
            plan: The plan as a JSON list with one object per day of the trip.

        Returns:
            A confirmation.
        """
        text = plan if isinstance(plan, str) else json.dumps(plan, ensure_ascii=False)
        return self._step(f"<answer>{text}</answer>")

    def get_reward(self) -> float:
        """The suite's reward of the scored episode (0 before it ends or when unscored)."""
        if not self._env.done:
            return 0.0
        episode = self._env.episode()
        return float(episode_reward(episode).total) if episode.score is not None else 0.0


add_tools(PlannerToolEnv, planner_registry())


def planner_tool_prompt() -> str:
    """The TravelPlanner system prompt for native tool calls (plan delivered by submit_plan)."""
    from travelgym.suites.travelplanner.prompts import TOOL_SYSTEM

    return (f"{TOOL_SYSTEM}\n\nWhen done, deliver the plan's JSON list with submit_plan; "
            "this ends the task.")  # fmt: skip


def planner_env_factory(split: str = "train", *, difficulty: str | None = None,
                        limit: int | None = None, data_dir: Any = None, data: str | None = None,
                        database: str | None = None,
                        **env_kwargs: Any) -> Callable[[], PlannerToolEnv]:  # fmt: skip
    """A zero-argument factory of :class:`PlannerToolEnv` over an ingested split (or
    ``data``/``database`` files): queries loaded once, one connection per environment;
    ``env_kwargs`` go to
    :class:`~travelgym.suites.travelplanner.training_env.PlannerTrainingEnv` (``max_turns``,
    default 100 calls; ``seed``)."""
    from travelgym.suites.travelplanner.records import select_queries
    from travelgym.suites.travelplanner.source import PlannerData
    from travelgym.suites.travelplanner.training_env import PlannerTrainingEnv

    source = PlannerData.open(data, database, Path(data_dir) if data_dir else None, split)
    try:
        queries = select_queries(source.queries(split), None, difficulty, limit)
    finally:
        source.close()
    if not queries:
        raise ValueError(f"no TravelPlanner queries in the {split} split to train on")
    env_kwargs.setdefault("max_turns", DEFAULT_MAX_TURNS)
    path, meta = source.path, source.meta

    def make() -> PlannerToolEnv:
        return PlannerToolEnv(PlannerTrainingEnv(PlannerData(path, meta), queries,
                                                 mode="two-stage", **env_kwargs))  # fmt: skip

    return make
