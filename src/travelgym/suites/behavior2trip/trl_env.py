"""Behavior2Trip as a TRL ``environment_factory`` environment, for TRL's native tool loop (see
:mod:`travelgym.training.trl_env`): the 9 tools, ``memory`` (the B2T memory module) and
``submit_plan`` (the final ``<answer>``); the reward is ``R_total`` (an episode without a plan
gets ``P_action``). Reached through
:meth:`~travelgym.suites.behavior2trip.suite.Behavior2TripSuite.trl_environment`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal

from travelgym.suites.behavior2trip.tools import trips_registry
from travelgym.suites.behavior2trip.training import cut_reward
from travelgym.training.trl_env import add_tools

_RESPONSE = re.compile(r"^\s*<(tool_response|memory_response)>\s*(.*?)\s*</\1>\s*$", re.S)
TRIP_TOOL_PROMPT = """You are a seasoned travel planner. Read the user's behaviour trajectory and
instruction, gather information with the tools, keep key facts with the memory tool, and deliver a
complete plan covering every day of the trip with submit_plan.

# Plan format
{plan_format}"""


def _unwrap(observation: str) -> str:
    """The payload of a single ``<tool_response>`` / ``<memory_response>`` block."""
    match = _RESPONSE.match(observation or "")
    return match.group(2) if match else observation


class TripToolEnv:
    """Behavior2Trip for TRL's tool loop over a
    :class:`~travelgym.suites.behavior2trip.training_env.TripTrainingEnv` (see the module docstring)."""

    def __init__(self, env: Any) -> None:
        self._env = env

    def reset(self, **kwargs: Any) -> str:
        """Start the row's instance (``instance_id``; else a random one); the task text."""
        options = {"instance_id": kwargs["instance_id"]} if kwargs.get("instance_id") else {}
        messages, _ = self._env.reset(seed=kwargs.get("seed"), options=options)
        return messages[-1]["content"]

    def _step(self, text: str) -> str:
        if self._env.done:
            return json.dumps({"error": "the episode is over: the plan was submitted"})
        observation, *_ = self._env.step(text)
        return _unwrap(observation) if observation else "The plan was submitted."

    def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        call = {"name": name, "arguments": {k: v for k, v in arguments.items() if v is not None}}
        return self._step(f"<tool_call>{json.dumps(call, ensure_ascii=False)}</tool_call>")

    def memory(self, action: Literal["read", "write"], key: str, value: str | None = None) -> str:
        """Read or write the session memory, a dictionary kept for this task.

        Args:
            action: "write" stores value under key; "read" returns the value of key ("all": everything).
            key: The memory key, e.g. "preferences".
            value: The value to store (text; JSON allowed), for "write" only.

        Returns:
            The stored value (read) or a confirmation (write), or an error.
        """
        op: dict[str, Any] = {"action": action, "key": key}
        if action == "write":
            op["value"] = value
        return self._step(f"<memory>{json.dumps(op, ensure_ascii=False)}</memory>")

    def submit_plan(self, plan: str) -> str:
        """Deliver the final travel plan; this ends the task.

        Args:
            plan: The plan as a JSON list with one object per day of the trip.

        Returns:
            A confirmation.
        """
        return self._step(f"<answer>{plan}</answer>")

    def get_reward(self) -> float:
        """R_total of the episode (without a submitted plan: the invalid-action penalty)."""
        if self._env.reward is not None:
            return float(self._env.reward.total)
        return cut_reward(self._env).total


add_tools(TripToolEnv, trips_registry())


def trip_tool_prompt() -> str:
    """The Behavior2Trip system prompt for native tool calls (plan delivered by submit_plan)."""
    from travelgym.suites.behavior2trip.agents.prompts import plan_format

    return TRIP_TOOL_PROMPT.format(plan_format=plan_format())


def trip_env_factory(split: str = "train", *, difficulty: str | None = None,
                     limit: int | None = None, db_seed: int = 0, data_dir: Any = None,
                     scale: str = "small", **env_kwargs: Any) -> Callable[[], TripToolEnv]:  # fmt: skip
    """A zero-argument factory of :class:`TripToolEnv` (instances loaded once, one database
    connection per environment); ``env_kwargs`` go to
    :class:`~travelgym.suites.behavior2trip.training_env.TripTrainingEnv` (``memory``, ``penalty``,
    ``max_turns``; default 100 tool calls)."""
    from travelgym.suites.behavior2trip.instance_sets import load_split, select_instances
    from travelgym.suites.behavior2trip.training_env import TripTrainingEnv

    db, instances, _ = load_split(split, db_seed, data_dir, scale)
    chosen = select_instances(instances, None, difficulty, limit)
    env_kwargs.setdefault("max_turns", 100)
    return lambda: TripToolEnv(TripTrainingEnv(db.path, chosen, **env_kwargs))
