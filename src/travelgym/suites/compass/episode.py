"""One COMPASS episode: the simulated user and the agent talk until acceptance or a turn limit.

``play_episode`` (every agent of a run) and ``run_episode`` (a turn agent) are pure functions
of their inputs (task, agent, user backend, seed, database): they return the whole trajectory
with its score and never raise for agent, tool or model failures; those are recorded in the
trajectory. Both play the one episode loop (:func:`travelgym.runner.loop.play`) over the
training environment (:mod:`travelgym.suites.compass.environment`), which drives the
bookkeeping of a conversation (the user simulator, the turns, the termination and the score),
:class:`CompassSession`, one model message or one agent turn at a time.
"""

from __future__ import annotations

import sqlite3
import time
import traceback
from typing import Any

from travelgym.core.outcomes import settle
from travelgym.llm.protocol import LLMError, Repair, Usage, count_repairs
from travelgym.suites.compass.agents.base import Agent, AgentReply
from travelgym.suites.compass.context import ToolCache
from travelgym.suites.compass.env import CompassToolSession
from travelgym.suites.compass.scoring import PlanScore, score_plan
from travelgym.suites.compass.solver import Ranking
from travelgym.suites.compass.tasks import GroundTruth, Persona, Task
from travelgym.suites.compass.trajectory import Episode, Turn
from travelgym.suites.compass.user.simulator import UserBackend, UserReply, UserSimulator

DEFAULT_MAX_TURNS = 30


class CompassSession:
    """One conversation's state: the tool environment, the user simulator and the
    :class:`Episode` being recorded. It is over when the user accepts, an error ends it, or the
    user has spoken ``max_turns`` times. The user takes ``persona`` (default: the task's), and
    the episode records it. The tools share ``tool_cache`` (a run's :class:`ToolCache`) when
    given."""

    def __init__(self, task: Task, user_backend: UserBackend, conn: sqlite3.Connection,
                 truth: GroundTruth, *, agent_name: str, seed: int = 0, trial: int = 0,
                 max_turns: int = DEFAULT_MAX_TURNS, user_name: str = "template",
                 keep_results: bool = True, persona: Persona | None = None,
                 tool_cache: ToolCache | None = None) -> None:  # fmt: skip
        self.started = time.perf_counter()
        self.task, self.conn, self.truth, self.max_turns = task, conn, truth, max_turns
        persona = persona if persona is not None else task.persona
        self.episode = Episode(episode_id=f"{task.task_id}#{trial}", task_id=task.task_id,
                               trial=trial, agent=agent_name, user=user_name, seed=seed,
                               persona=persona.model_dump())  # fmt: skip
        self.env = CompassToolSession(conn, keep_results=keep_results, cache=tool_cache)
        self.user = UserSimulator(task, user_backend, conn, seed=seed, max_turns=max_turns,
                                  trial=trial, persona=persona)  # fmt: skip
        self.said: UserReply | None = None

    @property
    def user_turns(self) -> int:
        return sum(t.role == "user" for t in self.episode.turns)

    @property
    def over(self) -> bool:
        """No agent turn follows: accepted, failed, or the user's turn limit is reached."""
        return self.episode.termination != "turn_limit" or self.user_turns >= self.max_turns

    async def open(self) -> UserReply:
        """The user's opening message (recorded as turn 0)."""
        self.said = await self.user.open()
        self.episode.turns.append(Turn(index=0, role="user", text=self.said.text,
                                       acts=self.said.acts, prompt=self.said.instruction,
                                       repairs=self._user_repairs()))  # fmt: skip
        return self.said

    def _user_repairs(self) -> list[Repair]:
        """The repairs of the LLM user's reply just written (taken once)."""
        repairs, self.user.state.last_repairs = self.user.state.last_repairs, []
        return repairs

    async def respond(self, reply: AgentReply, started: float) -> UserReply:
        """Record the agent's turn (with the tool calls made since the last one), let the user
        answer it and record that; acceptance ends the episode."""
        episode = self.episode
        episode.turns.append(Turn(index=len(episode.turns), role="agent", text=reply.text,
                                  tool_calls=self.env.take_calls(),
                                  recommendation=reply.recommendation, usage=reply.usage,
                                  duration_s=round(time.perf_counter() - started, 4),
                                  error=reply.error, repairs=reply.repairs))  # fmt: skip
        episode.usage = episode.usage + reply.usage
        episode.llm_calls += reply.llm_calls
        if reply.recommendation:
            episode.final_recommendation = reply.recommendation
        self.said = await self.user.respond(reply.text, reply.recommendation)
        episode.turns.append(Turn(index=len(episode.turns), role="user", text=self.said.text,
                                  acts=self.said.acts, prompt=self.said.instruction,
                                  usage=self.user.state.last_usage,
                                  repairs=self._user_repairs()))  # fmt: skip
        if self.said.done:
            episode.termination = "accepted"
        return self.said

    def agent_failed(self, exc: LLMError, partial: AgentReply | None = None) -> None:
        """The agent's model failed for good: record an error turn (with the usage, calls and
        repairs of the turn's earlier model calls, when the agent keeps them in ``partial``)
        and end the episode."""
        partial = partial if partial is not None else AgentReply("")
        self.episode.turns.append(Turn(index=len(self.episode.turns), role="agent",
                                       error=str(exc), tool_calls=self.env.take_calls(),
                                       usage=partial.usage, repairs=list(partial.repairs)))  # fmt: skip
        self.episode.usage = self.episode.usage + partial.usage
        self.episode.llm_calls += partial.llm_calls
        self.episode.termination, self.episode.error = "error", f"agent: {exc}"
        settle(self.episode, exc)

    def failed(self, exc: Exception) -> None:
        """Anything else went wrong (the LLM user backend, a bug): end the episode with it."""
        self.episode.termination = "error"
        if isinstance(exc, LLMError):
            self.episode.error = f"user: {exc}"
        else:
            self.episode.error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}"
        settle(self.episode, exc, role="user")

    def finish(self, messages: list[dict[str, Any]] | None = None,
               ranking: Ranking | None = None) -> PlanScore:  # fmt: skip
        """Score the final recommendation (with its exact rank when ``ranking`` is given) into
        the episode and return the score."""
        episode = self.episode
        episode.revealed_all_turn = self.user.revealed_all_turn
        episode.messages = messages or []
        score = score_plan(self.conn, self.task, self.truth, episode.final_recommendation or {},
                           ranking)  # fmt: skip
        episode.score = score.model_dump()
        settle(episode)
        episode.user_usage = sum((t.usage for t in episode.turns if t.role == "user" and t.usage),
                                 Usage())  # fmt: skip
        episode.duration_s = round(time.perf_counter() - self.started, 4)
        episode.repairs = {}
        for turn in episode.turns:
            count_repairs(turn.repairs, episode.repairs)
            for call in turn.tool_calls:
                count_repairs(call.repairs, episode.repairs)
        return score


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
    from travelgym.suites.compass.agents.turn_policy import turn_agent

    return await play_episode(task, turn_agent(agent), user_backend, conn, truth, seed=seed,
                              trial=trial, max_turns=max_turns, user_name=user_name,
                              persona=None if persona is None else lambda *_: persona,
                              tool_cache=tool_cache)  # fmt: skip


async def play_episode(task: Task, agent: Any, user_backend: UserBackend,
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
    from travelgym.runner.loop import play_agent, stored
    from travelgym.suites.compass.environment import CompassTrainingEnv

    started = time.perf_counter()
    env = CompassTrainingEnv(conn, [task], {task.task_id: truth}, user=user_backend,
                             max_turns=max_turns, max_steps_per_turn=agent.max_steps, rank=False,
                             agent_name=agent_name or agent.name, persona=persona,
                             tool_cache=tool_cache, user_name=user_name,
                             **agent.settings)  # fmt: skip
    return stored(await play_agent(env, agent, task.task_id, trial, seed), started)
