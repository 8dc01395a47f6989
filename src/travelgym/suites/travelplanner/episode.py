"""One TravelPlanner episode: the agent gets a query (sole-planning: with its reference
information; two-stage: the tools over the sandbox), answers with a plan, and the plan is
scored by the 8 commonsense and 5 hard constraints.

Every agent is played by the one episode loop (:func:`travelgym.runner.loop.play`) over
:class:`~travelgym.suites.travelplanner.environment.PlannerTrainingEnv`, the environment GRPO
trains on: a model agent (:class:`~travelgym.runner.loop.PolicyAgent`: ``llm:MODEL``,
``b2t:MODEL``, ``local:``, ``hf:``) message by message; an agent that works the tools itself
and answers once (``solve(request, session)``: the scripted baseline, ``react:MODEL``) as a
:class:`~travelgym.runner.loop.SolverPolicy` of one message, its tool calls going through the
episode's own tool session. ``run_planner_episode`` never raises for an agent's, a tool's or a
model's failure: they are recorded in the :class:`PlannerEpisode`, and an episode without a
plan scores as undelivered.
"""

from __future__ import annotations

import time

from travelgym.runner.loop import PolicyAgent, play_agent, solver_agent, stored
from travelgym.suites.travelplanner.environment import PlannerTrainingEnv
from travelgym.suites.travelplanner.planner_episode import PlannerEpisode as PlannerEpisode
from travelgym.suites.travelplanner.planner_episode import Termination as Termination
from travelgym.suites.travelplanner.planner_episode import build_episode as build_episode
from travelgym.suites.travelplanner.planner_episode import safe_score as safe_score
from travelgym.suites.travelplanner.records import Query
from travelgym.suites.travelplanner.sandbox import Sandbox
from travelgym.suites.travelplanner.session import Mode, PlannerAgent


async def run_planner_episode(query: Query, agent: PlannerAgent | PolicyAgent, mode: Mode,
                              tool_sandbox: Sandbox, check_sandbox: Sandbox, *, seed: int = 0,
                              trial: int = 0) -> PlannerEpisode:  # fmt: skip
    """Run ``agent`` on ``query`` in ``mode``: its tools search ``tool_sandbox``, its plan is
    checked against ``check_sandbox``."""
    started = time.perf_counter()
    played = agent if isinstance(agent, PolicyAgent) else solver_agent(agent)
    env = PlannerTrainingEnv(None, [query], max_turns=played.max_steps, mode=mode, seed=seed,
                             agent_name=played.name, sandboxes=(tool_sandbox, check_sandbox),
                             **played.settings)  # fmt: skip
    return stored(await play_agent(env, played, query.task_id, trial, seed), started)
