"""One TravelPlanner episode: the agent gets a query (sole-planning: with its reference
information; two-stage: the tools over the sandbox), answers with a plan, and the plan is
scored by the 8 commonsense and 5 hard constraints.

A model agent in the B2T format (:class:`~travelgym.runner.loop.PolicyAgent`: ``b2t:MODEL``,
``local:``, ``hf:``) is played by the one episode loop (:func:`travelgym.runner.loop.play`)
over :class:`~travelgym.suites.travelplanner.environment.PlannerTrainingEnv`, the environment
GRPO trains on. ``run_planner_episode`` never raises for an agent's, a tool's or a model's
failure: they are recorded in the :class:`PlannerEpisode`, and an episode without a plan scores
as undelivered.
"""

from __future__ import annotations

import time
import traceback

from travelgym.core.outcomes import settle
from travelgym.llm.protocol import LLMError
from travelgym.runner.loop import PolicyAgent, play_agent, stored
from travelgym.suites.travelplanner.environment import PlannerTrainingEnv
from travelgym.suites.travelplanner.planner_episode import PlannerEpisode as PlannerEpisode
from travelgym.suites.travelplanner.planner_episode import Termination as Termination
from travelgym.suites.travelplanner.planner_episode import build_episode as build_episode
from travelgym.suites.travelplanner.planner_episode import safe_score as safe_score
from travelgym.suites.travelplanner.records import Query
from travelgym.suites.travelplanner.sandbox import Sandbox
from travelgym.suites.travelplanner.session import (
    Mode,
    PlannerAgent,
    PlannerRequest,
    PlannerSession,
)


async def run_planner_episode(query: Query, agent: PlannerAgent, mode: Mode,
                              tool_sandbox: Sandbox, check_sandbox: Sandbox, *, seed: int = 0,
                              trial: int = 0) -> PlannerEpisode:  # fmt: skip
    """Run ``agent`` on ``query`` in ``mode``: its tools search ``tool_sandbox``, its plan is
    checked against ``check_sandbox``."""
    started = time.perf_counter()
    if isinstance(agent, PolicyAgent):
        env = PlannerTrainingEnv(None, [query], max_turns=agent.max_steps, mode=mode, seed=seed,
                                 agent_name=agent.name, sandboxes=(tool_sandbox, check_sandbox),
                                 **agent.settings)  # fmt: skip
        return stored(await play_agent(env, agent, query.task_id, trial, seed), started)
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
    return stored(episode, started)
