"""One Behavior2Trip episode: an agent reads the request and the behaviour trajectory, uses the
tools (and its memory) and delivers a plan, which is scored by the 32 checks.

A model agent's episode (:class:`~travelgym.runner.loop.PolicyAgent`: ``b2t:MODEL``,
``llm:MODEL``, ``local:``, ``hf:``) is played by the one episode loop
(:func:`travelgym.runner.loop.play`) over
:class:`~travelgym.suites.behavior2trip.environment.TripTrainingEnv`, the environment GRPO
trains on; the scripted, oracle and ReAct agents run their own ``solve``.
``run_trip_episode`` never raises for agent, tool or model failures: they are recorded in the
:class:`TripEpisode`, and an episode without a plan scores as undelivered.
"""

from __future__ import annotations

import sqlite3
import time
import traceback
from typing import Any

from travelgym.core.outcomes import settle
from travelgym.llm.protocol import LLMError
from travelgym.runner.loop import PolicyAgent, play_agent, stored
from travelgym.suites.behavior2trip.agents.base import TripAgent, TripRequest, TripToolSession
from travelgym.suites.behavior2trip.environment import TripTrainingEnv
from travelgym.suites.behavior2trip.trip_episode import Termination as Termination
from travelgym.suites.behavior2trip.trip_episode import TripEpisode as TripEpisode
from travelgym.suites.behavior2trip.trip_episode import build_trip_episode as build_trip_episode
from travelgym.suites.behavior2trip.trip_episode import score_answer as score_answer


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
    if isinstance(agent, PolicyAgent):
        env = _policy_env(instance, agent, conn, seed, score_db, withhold_trajectory, user)
        episode = await play_agent(env, agent, instance.instance_id, trial, seed)
        return _finished(episode, started, score)
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
    return _finished(episode, started, score)


def _policy_env(instance: Any, agent: PolicyAgent, conn: sqlite3.Connection, seed: int,
                score_db: Any, withhold: bool, user: Any) -> TripTrainingEnv:  # fmt: skip
    """The training environment a policy agent's evaluation episode is played in."""
    return TripTrainingEnv(conn, [instance], max_turns=agent.max_steps, seed=seed,
                           agent_name=agent.name, score_db=score_db, withhold_trajectory=withhold,
                           user_factory=(lambda _: user) if user is not None else None,
                           **agent.settings)  # fmt: skip


def _finished(episode: TripEpisode, started: float, score: bool) -> TripEpisode:
    """The episode as stored (unscored when ``score`` is off)."""
    if not score:
        episode.score = None
    return stored(episode, started)
