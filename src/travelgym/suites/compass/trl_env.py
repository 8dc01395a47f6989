"""COMPASS as a TRL ``environment_factory`` environment, for TRL's native tool loop (see
:mod:`travelgym.training.trl_env`): the 17 tools and ``reply_to_user`` (the agent's words and
recommendation; returns the simulated user's reply); the reward is the COMPASS reward of the
final recommendation. Reached through
:meth:`~travelgym.suites.compass.suite.CompassSuite.trl_environment`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from travelgym.suites.compass.tools import compass_registry
from travelgym.training.trl_env import add_tools


class CompassToolEnv:
    """COMPASS for TRL's tool loop over a
    :class:`~travelgym.suites.compass.training_env.CompassTrainingEnv` (see the module docstring)."""

    def __init__(self, env: Any) -> None:
        self._env = env
        self._calls = 0

    def reset(self, **kwargs: Any) -> str:
        """Start the row's task (``task_id``; else a random one); the user's opening words."""
        options = {"task_id": kwargs["task_id"]} if kwargs.get("task_id") else {}
        messages, _ = self._env.reset(seed=kwargs.get("seed"), options=options)
        return messages[-1]["content"]

    def _observe(self, action: dict[str, Any]) -> str:
        if self._env.done:
            return json.dumps({"error": "the conversation is over"})
        observation, *_ = self._env.step(action)
        parts = [m["content"] if m["role"] == "tool" else f"The user says: {m['content']}"
                 for m in observation]  # fmt: skip
        return "\n\n".join(parts) if parts else "The conversation is over."

    def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        self._calls += 1
        args = {k: v for k, v in arguments.items() if v is not None}
        call = {"id": f"call_{self._calls}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}  # fmt: skip
        return self._observe({"role": "assistant", "content": None, "tool_calls": [call]})

    def reply_to_user(self, message: str, hotel: str | None = None, flight: str | None = None,
                      permit: str | None = None) -> str:  # fmt: skip
        """Say something to the user, optionally recommending one complete itinerary.

        Args:
            message: What the user reads.
            hotel: The recommended hotel package ID (pkg_...), validated with recommend_hotel.
            flight: The recommended flight package ID (flight_...), validated with recommend_flight.
            permit: The recommended permit package ID (permit_...), validated with recommend_permit.

        Returns:
            The user's reply, or a note that the conversation is over.
        """
        picks = {"hotel": hotel, "flight": flight, "permit": permit}
        reply = {"message": message, "recommendation": picks if any(picks.values()) else None}
        return self._observe({"role": "assistant", "content": json.dumps(reply)})

    def get_reward(self) -> float:
        """The COMPASS reward of the final recommendation (0 before the conversation ends)."""
        return float(self._env.reward.total) if self._env.reward is not None else 0.0


add_tools(CompassToolEnv, compass_registry())


def compass_tool_prompt() -> str:
    """The COMPASS system prompt for native tool calls: reply through ``reply_to_user``."""
    from travelgym.suites.compass.agents.llm_agent import SYSTEM_PROMPT
    from travelgym.suites.compass.agents.response_format import FORMAT_INSTRUCTIONS

    return SYSTEM_PROMPT.replace(FORMAT_INSTRUCTIONS, "Talk to the user only with the "
                                 "reply_to_user tool; recommend exactly one complete itinerary "
                                 "(the package IDs you validated).")  # fmt: skip


def compass_env_factory(*, level: int | None = None, limit: int | None = None,
                        db_seed: int = 0, data_dir: Any = None,
                        **env_kwargs: Any) -> Callable[[], CompassToolEnv]:  # fmt: skip
    """A zero-argument factory of :class:`CompassToolEnv` (tasks and ground truth loaded
    once); ``env_kwargs`` go to :class:`~travelgym.suites.compass.training_env.CompassTrainingEnv`
    (``user``, ``max_turns``, ...)."""
    from travelgym.suites.compass.build import ensure_database
    from travelgym.suites.compass.ground_truth import ensure_ground_truth
    from travelgym.suites.compass.task_sets import task_file_for
    from travelgym.suites.compass.tasks import load_tasks, select_tasks
    from travelgym.suites.compass.training_env import CompassTrainingEnv

    db = ensure_database(seed=db_seed, data_dir=data_dir)
    _, truths = ensure_ground_truth(seed=db_seed, data_dir=data_dir)
    tasks = select_tasks(load_tasks(task_file_for(db_seed, data_dir)), None, level, limit)
    return lambda: CompassToolEnv(CompassTrainingEnv(db.path, tasks, truths, **env_kwargs))
