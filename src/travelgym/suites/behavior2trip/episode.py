"""One Behavior2Trip episode: an agent reads the request and the behaviour trajectory, uses the
tools (and its memory) and delivers a plan, which is scored by the 32 checks.

Every agent's episode is played by the one episode loop (:func:`travelgym.runner.loop.play`)
over :class:`~travelgym.suites.behavior2trip.environment.TripTrainingEnv`, the environment GRPO
trains on: a model agent (:class:`~travelgym.runner.loop.PolicyAgent`: ``b2t:MODEL``,
``llm:MODEL``, ``local:``, ``hf:``) one assistant message at a time; a solve-once agent (the
scripted baseline, the oracle, ``react:MODEL``) as a
:class:`~travelgym.runner.loop.SolverPolicy`, whose one act works the environment's own tool
session and delivers the plan. ``run_trip_episode`` never raises for agent, tool or model
failures: they are recorded in the :class:`TripEpisode`, and an episode without a plan scores
as undelivered.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from travelgym.runner.loop import PolicyAgent, play_agent, solver_agent, stored
from travelgym.suites.behavior2trip.agents.base import TripAgent
from travelgym.suites.behavior2trip.environment import TripTrainingEnv
from travelgym.suites.behavior2trip.trip_episode import Termination as Termination
from travelgym.suites.behavior2trip.trip_episode import TripEpisode as TripEpisode


async def run_trip_episode(
    instance: Any,
    agent: TripAgent | PolicyAgent,
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
    whose caches serve many episodes; default a fresh one over ``conn``). A solve-once agent's
    tool results are kept in the trajectory unless it says otherwise (``keep_results``
    attribute, e.g. the scripted baseline; the argument overrides it). RQ1:
    ``withhold_trajectory`` gives the agent the request without the behaviour trajectory;
    ``user`` (a :class:`~travelgym.suites.behavior2trip.clarify_user.SimulatedUser`) answers its
    ``AskUser`` questions."""
    started = time.perf_counter()
    if not isinstance(agent, PolicyAgent):
        agent = solver_agent(
            agent,
            keep_results=keep_results,
            reveal_profile=bool(getattr(agent, "reads_hidden_profile", False)),
        )
    env = TripTrainingEnv(conn, [instance], max_turns=agent.max_steps, seed=seed,
                          agent_name=agent.name, score_db=score_db,
                          withhold_trajectory=withhold_trajectory,
                          user_factory=(lambda _: user) if user is not None else None,
                          **agent.settings)  # fmt: skip
    episode = await play_agent(env, agent, instance.instance_id, trial, seed)
    if not score:
        episode.score = None
    return stored(episode, started)
