"""One COMPASS episode: the simulated user and the agent talk until acceptance or a turn limit.

``play_episode`` (every agent of a run) and ``run_episode`` (a turn agent) are pure functions
of their inputs (task, agent, user backend, seed, database): they return the whole trajectory
with its score and never raise for agent, tool or model failures; those are recorded in the
trajectory. Both play the one episode loop (:func:`travelgym.runner.loop.play`) over the
training environment (:mod:`travelgym.suites.compass.environment`), which keeps the
conversation in a :class:`~travelgym.suites.compass.session.CompassSession` (the user
simulator, the turns, the termination and the score), one model message or one agent turn at a
time.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from travelgym.runner.loop import PolicyAgent, play_agent, stored
from travelgym.suites.compass.agents.base import Agent
from travelgym.suites.compass.agents.turn_policy import turn_agent
from travelgym.suites.compass.context import ToolCache
from travelgym.suites.compass.environment import CompassTrainingEnv
from travelgym.suites.compass.session import DEFAULT_MAX_TURNS
from travelgym.suites.compass.tasks import GroundTruth, Persona, Task
from travelgym.suites.compass.trajectory import Episode
from travelgym.suites.compass.user.simulator import UserBackend


async def run_episode(
    task: Task,
    agent: Agent,
    user_backend: UserBackend,
    conn: sqlite3.Connection,
    truth: GroundTruth,
    *,
    seed: int = 0,
    trial: int = 0,
    max_turns: int = DEFAULT_MAX_TURNS,
    user_name: str = "template",
    persona: Persona | None = None,
    tool_cache: ToolCache | None = None,
) -> Episode:
    """Run one conversation of the turn agent ``agent`` (the user with ``persona``, default
    the task's) and score its final recommendation; the tools share ``tool_cache`` when given
    (see :class:`ToolCache`). The agent is played by the one episode loop
    (:func:`play_episode`)."""
    return await play_episode(task, turn_agent(agent), user_backend, conn, truth, seed=seed,
                              trial=trial, max_turns=max_turns, user_name=user_name,
                              persona=None if persona is None else lambda *_: persona,
                              tool_cache=tool_cache)  # fmt: skip


async def play_episode(task: Task, agent: PolicyAgent, user_backend: UserBackend,
                       conn: sqlite3.Connection, truth: GroundTruth, *, seed: int = 0,
                       trial: int = 0, max_turns: int = DEFAULT_MAX_TURNS,
                       user_name: str = "template", persona: Any = None,
                       tool_cache: ToolCache | None = None,
                       agent_name: str | None = None) -> Episode:  # fmt: skip
    """One evaluation conversation of ``agent`` (a :class:`~travelgym.runner.loop.PolicyAgent`:
    a policy and its environment settings), played by :func:`travelgym.runner.loop.play` over
    :class:`~travelgym.suites.compass.environment.CompassTrainingEnv` and scored unranked;
    ``persona``: the user's persona of each conversation, ``persona(task, trial, seed)``
    (default: the task's); ``agent_name``: the episode's (default: the agent's)."""
    started = time.perf_counter()
    env = CompassTrainingEnv(conn, [task], {task.task_id: truth}, user=user_backend,
                             max_turns=max_turns, max_steps_per_turn=agent.max_steps, rank=False,
                             agent_name=agent_name or agent.name, persona=persona,
                             tool_cache=tool_cache, user_name=user_name,
                             **agent.settings)  # fmt: skip
    return stored(await play_agent(env, agent, task.task_id, trial, seed), started)
