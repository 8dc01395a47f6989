"""``PlannerTrainingEnv``: TravelPlanner as a Gymnasium-style text environment for RL.

An action is one assistant message in the B2T action format, applied by
:func:`~travelgym.suites.travelplanner.agents.b2t_step.apply_b2t_message`, the same code the
``b2t:MODEL`` agent runs, so a rollout and an episode of ``travelgym run travelplanner --agent
b2t:MODEL`` record the same steps. The reward is 0 until the episode ends (an ``<answer>``, or
``max_turns`` messages), then :func:`~travelgym.suites.travelplanner.training.planner_reward`
of the plan's constraint verdicts. Sole-planning mode by default (the reference information in
the prompt); ``mode="two-stage"`` offers the tools.

A solve-once agent (the scripted baseline, ReAct: :class:`~travelgym.runner.loop.SolverPolicy`)
plays an episode of one message: :meth:`PlannerTrainingEnv.solver_inputs` hands it the request
and the episode's own tool session, which records its steps, chat and model usage, and
:meth:`PlannerTrainingEnv.answer_message` is the message that delivers its answer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from travelgym.agents.b2t_format import Memory, format_tool_call, submit_plan
from travelgym.agents.tool_calling import apply_native_message, as_assistant
from travelgym.core.environment import Transition
from travelgym.core.outcomes import settle
from travelgym.suites.travelplanner.agents.b2t_step import apply_b2t_message
from travelgym.suites.travelplanner.agents.llm import opening
from travelgym.suites.travelplanner.planner_episode import (
    PlannerEpisode,
    build_episode,
    safe_score,
)
from travelgym.suites.travelplanner.prompts import TOOL_SYSTEM
from travelgym.suites.travelplanner.records import Query
from travelgym.suites.travelplanner.sandbox import Sandbox
from travelgym.suites.travelplanner.session import PlannerRequest, PlannerSession
from travelgym.suites.travelplanner.source import PlannerData, reference_sandbox
from travelgym.suites.travelplanner.tools import planner_registry
from travelgym.suites.travelplanner.training import planner_reward
from travelgym.toolkit.signature import typed_functions
from travelgym.training.base import AnswerEnv, EnvStateError

DEFAULT_MAX_TURNS = 8  # messages per episode
TOOLS_ONLY_MAX_TURNS = 100  # tools-only mode: one message a tool call


class PlannerTrainingEnv(AnswerEnv):
    """Episodes over ``queries`` of ``data`` (a :class:`PlannerData`, closed by :meth:`close`).
    ``reset(seed=None, options=None)``: options ``task_id`` or ``index`` (else a seeded random
    query) and ``trial``; ``step(action) -> (observation, reward, terminated, truncated, info)``."""

    task_key = "task_id"

    def __init__(self, data: PlannerData | None, queries: Sequence[Query], *,
                 max_turns: int | None = None,
                 mode: str = "sole-planning", seed: int = 0, agent_name: str = "policy",
                 sandboxes: tuple[Sandbox, Sandbox] | None = None,
                 native: bool = False, tools_only: bool = False,
                 keep_results: bool = True) -> None:  # fmt: skip
        """``data``: where the queries' tools search and plans are checked, closed by
        :meth:`close`; or ``sandboxes``, ``(tools, checks)`` for every query (an evaluation
        episode, whose run holds the data). ``max_turns``: the most messages an episode takes
        (default 8; tools-only: 100, one a call); ``tools_only``: two-stage mode with every
        action a tool call (:meth:`tool_functions`), the B2T format underneath;
        ``keep_results``: the tool session keeps each call's result in the episode."""
        if (data is None) == (sandboxes is None):
            raise ValueError("give the data or the sandboxes, one of them")
        self.data, self.sandboxes = data, sandboxes
        self.queries = self._hold(queries, seed, "query")
        # an action is a B2T-format message's text, or (``native``) an assistant message with
        # native tool calls, its text without them the plan (the ``llm:MODEL`` agent)
        self.native_tools, self.tools_only = native and not tools_only, tools_only
        if tools_only:
            mode = "two-stage"
        if max_turns is None:
            max_turns = TOOLS_ONLY_MAX_TURNS if tools_only else DEFAULT_MAX_TURNS
        self.max_turns, self.mode, self.agent_name = max_turns, mode, agent_name
        self.keep_results = keep_results
        self.query: Query | None = None
        self.tools: PlannerSession | None = None
        self._reset_state()

    @classmethod
    def from_split(cls, split: str = "train", *, data_dir: str | Path | None = None,
                   difficulty: str | None = None, limit: int | None = None,
                   data: str | None = None, database: str | None = None,
                   **kwargs: Any) -> PlannerTrainingEnv:  # fmt: skip
        """An environment over an ingested split (or ``data``/``database`` files)."""
        from travelgym.suites.travelplanner.records import select_queries

        source = PlannerData.open(data, database, Path(data_dir) if data_dir else None, split)
        try:
            queries = select_queries(source.queries(split), None, difficulty, limit)
            return cls(source, queries, **kwargs)
        except BaseException:
            source.close()
            raise

    def _reset_state(self) -> None:
        super()._reset_state()
        self.memory = Memory()

    def _sandboxes(self, query: Query) -> tuple[Sandbox, Sandbox]:
        """``(the tools' sandbox, the checks' sandbox)`` of ``query``."""
        if self.sandboxes is not None:
            return self.sandboxes
        data = self.data
        tools = data.database if data.database is not None else reference_sandbox(query)
        return tools, data.sandbox_for(query)

    @property
    def tool_schemas(self) -> list[dict[str, Any]] | None:
        """The 7 tools' schemas a native-tools policy calls (two-stage mode only)."""
        if not self.native_tools or self.tools is None or self.mode != "two-stage":
            return None
        return self.tools.tool_schemas

    async def areset(self, seed: int | None = None,
                     options: dict[str, Any] | None = None) -> tuple[list[dict[str, Any]], dict]:  # fmt: skip
        """:meth:`reset` for async code."""
        query, trial, seed = self._draw(seed, options)
        self._reset_state()
        self.query, self.trial, self.seed = query, trial, seed
        self.tools = PlannerSession(self._sandboxes(query)[0], keep_results=self.keep_results)
        request = PlannerRequest.of(query, self.mode)
        self.tools.messages = opening(request, "tool" if self.native_tools else "b2t", self.tools)
        if self.tools_only:
            self.tools.messages[0]["content"] = (f"{TOOL_SYSTEM}\n\nWhen done, deliver the plan's "
                                                 "JSON list with submit_plan; this ends the task.")  # fmt: skip
        info = {"task_id": query.task_id, "level": query.level, "mode": self.mode,
                "max_turns": self.max_turns}  # fmt: skip
        return [dict(m) for m in self.tools.messages], info

    def _end(self) -> float:
        """Score the episode's answer (or its absence) and set its reward."""
        self.done = True
        self.score = safe_score(self.query, self.answer, self._sandboxes(self.query)[1])
        self.reward = planner_reward(self.score)
        return self.reward.total

    def solver_inputs(self) -> tuple[PlannerRequest, PlannerSession, dict[str, Any]]:
        """``(request, session, {})`` for a solve-once agent
        (:class:`~travelgym.runner.loop.SolverPolicy`): the query's request in the episode's mode
        and the episode's tool session, its chat left to the solver (it writes its own prompt)."""
        self._take_for_solver()
        return PlannerRequest.of(self.query, self.mode), self.tools, {}

    async def atransition(self, action: str, usage: Any = None, repairs: Any = None,
                          started: float | None = None) -> Transition:  # fmt: skip
        """Apply one B2T-format message (the environment protocol,
        :mod:`travelgym.core.environment`): the next user message unless the episode ended;
        ``usage``/``repairs``: the model call's, counted and recorded on the step."""
        if self.tools is None or self.done:
            raise EnvStateError("call reset() before step() (the episode has ended)")
        if self.solving:
            return self._solver_delivered(action)
        if not self.native_tools and not isinstance(action, str):
            raise TypeError(f"an action is the assistant message text, not {type(action)}")
        if usage is not None:
            self.tools.count_llm(usage, repairs)
        if self.native_tools:
            replies, answer = await apply_native_message(self.tools, as_assistant(action), usage,
                                                         started)  # fmt: skip
            info: dict[str, Any] = {"invalid_actions": 0, "observation": replies}
        else:
            result = await apply_b2t_message(self.tools, self.memory, action,
                                             tools=self.mode == "two-stage", usage=usage,
                                             started=started)  # fmt: skip
            answer, replies = result.answer, [{"role": "user", "content": result.observation or ""}]
            info = {"invalid_actions": len(result.step.invalid_actions),
                    "observation": result.observation or ""}  # fmt: skip
        terminated, truncated = self._count_turn(answer is not None)
        info.update(turn=self.turn, answered=terminated)
        reward = 0.0
        if terminated or truncated:
            if answer is not None:
                self._record_answer(answer)
            reward = self._end()
            info.update(reward_breakdown=self.reward.model_dump(), score=self.score)
        return Transition([] if terminated or truncated else replies, reward, terminated,
                          truncated, info)  # fmt: skip

    def tool_functions(self) -> list[Any]:
        """Every action as a typed function returning the B2T-format message it stands for, for
        a policy that only calls tools (:mod:`travelgym.training.trl_env`): the 7 tools and
        ``submit_plan``."""
        return [*typed_functions(planner_registry(), format_tool_call), submit_plan]

    def cut(self) -> tuple[float, dict[str, Any]]:
        """``(reward, parts)`` of an episode stopped before it ended: nothing delivered (the
        episode itself goes on)."""
        reward = planner_reward(safe_score(self.query, None, self._sandboxes(self.query)[1]))
        return reward.total, reward.model_dump()

    def episode(self) -> PlannerEpisode:
        """The current episode (scored once ended)."""
        if self.tools is None or self.query is None:
            raise EnvStateError("no episode yet: call reset()")
        episode = build_episode(self.query, self.tools, self.mode, self.agent_name, self.answer,
                                self.termination, self.error, seed=self.seed,
                                trial=self.trial)  # fmt: skip
        episode.score = self.score
        if self.done:  # ended: its outcome, as a run would record it
            settle(episode, self.failure)
        episode.duration_s = round(time.perf_counter() - self._started, 4)
        return episode

    def close(self) -> None:
        """Release the event loop and the data's connection."""
        self._close_loop()
        if self.data is not None:
            self.data.close()
