"""The bookkeeping of one COMPASS conversation, :class:`CompassSession`: the tool session, the
simulated user, the turns, the termination and the score. The training environment
(:mod:`travelgym.suites.compass.environment`) drives it one model message or one agent turn at a
time; every episode is played through it (:mod:`travelgym.suites.compass.episode`).
"""

from __future__ import annotations

import sqlite3
import time
import traceback
from typing import Any

from travelgym.core.outcomes import settle
from travelgym.llm.protocol import LLMError, Repair, Usage, count_repairs
from travelgym.suites.compass.agents.base import AgentReply
from travelgym.suites.compass.context import ToolCache
from travelgym.suites.compass.env import CompassToolSession
from travelgym.suites.compass.options import DEFAULT_MAX_TURNS as DEFAULT_MAX_TURNS
from travelgym.suites.compass.scoring import PlanScore, score_recommendation
from travelgym.suites.compass.solver import Ranking
from travelgym.suites.compass.tasks import GroundTruth, Persona, Task
from travelgym.suites.compass.trajectory import Episode, Turn
from travelgym.suites.compass.user.simulator import UserBackend, UserReply, UserSimulator


class CompassSession:
    """One conversation's state: the tool environment, the user simulator and the
    :class:`Episode` being recorded. It is over when the user accepts, the user ends it (its
    requests for a recommendation went unanswered: termination ``user_ended``, a model error
    whose cause is ``user_ended``, scored like every episode), an error ends it, or the user
    has spoken ``max_turns`` times. The user takes ``persona`` (default: the task's), and
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
        """No agent turn follows: accepted, ended by the user, failed, or the user's turn limit
        is reached."""
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
        answer it and record that; acceptance, or the user ending the conversation, ends the
        episode."""
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
        elif self.said.ended:
            # like running out of turns, the agent's own failure: it never recommended
            episode.termination = "user_ended"
            episode.outcome, episode.cause = "model_error", "user_ended"
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
        score = score_recommendation(self.conn, self.task, self.truth,
                                     episode.final_recommendation or {}, ranking)  # fmt: skip
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
