"""One COMPASS episode: the simulated user and the agent talk until acceptance or a turn limit.

``run_episode`` is a pure function of its inputs (task, agent, user backend, seed, database):
it returns the whole trajectory with its score and never raises for agent, tool or model
failures; those are recorded in the trajectory.
"""

from __future__ import annotations

import sqlite3
import time
import traceback

from travelgym.agents.base import Agent
from travelgym.llm.protocol import LLMError
from travelgym.parks.env import CompassEnv
from travelgym.parks.scoring import score_plan
from travelgym.parks.tasks import GroundTruth, Task
from travelgym.parks.user.simulator import UserBackend, UserSimulator
from travelgym.trajectory import Episode, Turn

DEFAULT_MAX_TURNS = 30


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
) -> Episode:
    """Run one conversation and score its final recommendation."""
    started = time.perf_counter()
    episode = Episode(episode_id=f"{task.task_id}#{trial}", task_id=task.task_id, trial=trial,
                      agent=agent.name, user=user_name, seed=seed,
                      persona=task.persona.model_dump())  # fmt: skip
    env = CompassEnv(conn, keep_results=not agent.reads_dialogue_acts)
    user = UserSimulator(task, user_backend, conn, seed=seed, max_turns=max_turns, trial=trial)
    try:
        agent.start(env)
        said = await user.open()
        episode.turns.append(
            Turn(index=0, role="user", text=said.text, acts=said.acts, prompt=said.instruction)
        )
        while len([t for t in episode.turns if t.role == "user"]) < max_turns:
            tick = time.perf_counter()
            acts = said.acts if agent.reads_dialogue_acts else []
            try:
                reply = await agent.reply(said.text, acts)
            except LLMError as exc:
                episode.turns.append(Turn(index=len(episode.turns), role="agent", error=str(exc),
                                          tool_calls=env.take_calls()))  # fmt: skip
                episode.termination, episode.error = "error", f"agent: {exc}"
                break
            turn = Turn(index=len(episode.turns), role="agent", text=reply.text,
                        tool_calls=env.take_calls(), recommendation=reply.recommendation,
                        usage=reply.usage, duration_s=round(time.perf_counter() - tick, 4),
                        error=reply.error)  # fmt: skip
            episode.turns.append(turn)
            episode.usage = episode.usage + reply.usage
            episode.llm_calls += reply.llm_calls
            if reply.recommendation:
                episode.final_recommendation = reply.recommendation
            said = await user.respond(reply.text, reply.recommendation)
            episode.turns.append(Turn(index=len(episode.turns), role="user", text=said.text,
                                      acts=said.acts, prompt=said.instruction,
                                      usage=user.state.last_usage))  # fmt: skip
            if said.done:
                episode.termination = "accepted"
                break
    except LLMError as exc:  # the LLM user backend failed for good
        episode.termination, episode.error = "error", f"user: {exc}"
    except Exception as exc:  # noqa: BLE001 - an episode must never take the run down
        episode.termination = "error"
        episode.error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}"
    episode.revealed_all_turn = user.revealed_all_turn
    episode.messages = agent.transcript() if hasattr(agent, "transcript") else []
    episode.score = score_plan(conn, task, truth, episode.final_recommendation or {}).model_dump()
    episode.duration_s = round(time.perf_counter() - started, 4)
    return episode
