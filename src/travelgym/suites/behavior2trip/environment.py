"""``TripTrainingEnv``: Behavior2Trip as a Gymnasium-style text environment for RL (paper Section 4).

An action is one assistant message in the B2T-Agent format (``<think>``, parallel
``<tool_call>``, ``<memory>``, ``<answer>``). It is applied by
:func:`~travelgym.suites.behavior2trip.agents.b2t_step.apply_b2t_message`, the very code the B2T-Agent uses at
inference, so a rollout here and an episode of ``travelgym run behavior2trip --agent b2t:MODEL``
record the same steps. The reward is 0 until the episode ends (an ``<answer>``, or ``max_turns``
messages), then the B2T ``R_total`` of :func:`~travelgym.suites.behavior2trip.training.b2t_reward`.
The suite gives it to the shared training code through
:meth:`~travelgym.core.suite.Suite.training_env`.

Ablation switches: ``memory=False`` leaves the memory module out of the system prompt and makes
every ``<memory>`` operation an invalid action (answered with an error, so ``P_action`` = -1);
``penalty=False`` drops ``P_action`` from the reward. See ``docs/training/environments.md``.

A solve-once agent (the scripted baseline, the oracle, ReAct) is played here too, by the loop's
:class:`~travelgym.runner.loop.SolverPolicy`: :meth:`TripTrainingEnv.solver_inputs` hands it the
request and the episode's own tool session (each of its calls recorded in the episode), and its
one message, :meth:`TripTrainingEnv.answer_message`, delivers the plan and ends the episode.
``reveal_profile`` hands the hidden profile to a reference agent that reads it (the oracle).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from travelgym.agents.b2t_format import Memory, format_tool_call, submit_plan
from travelgym.agents.b2t_format import memory as memory_tool
from travelgym.agents.tool_calling import apply_native_message, as_assistant
from travelgym.core.environment import Transition
from travelgym.core.outcomes import settle
from travelgym.suites.behavior2trip.agents.b2t_agent import initial_messages
from travelgym.suites.behavior2trip.agents.b2t_step import apply_b2t_message
from travelgym.suites.behavior2trip.agents.base import (
    DEFAULT_MAX_STEPS,
    TripRequest,
    TripToolSession,
)
from travelgym.suites.behavior2trip.agents.prompts import plan_format
from travelgym.suites.behavior2trip.checks import PlanDB
from travelgym.suites.behavior2trip.training import Gate, b2t_reward, cut_reward
from travelgym.suites.behavior2trip.trip_episode import (
    TripEpisode,
    build_trip_episode,
    score_answer,
)
from travelgym.toolkit.signature import typed_functions
from travelgym.training.base import AnswerEnv, EnvStateError, open_database

TOOLS_ONLY_MAX_TURNS = 100  # tools-only mode: one message a tool call
TOOLS_ONLY_PROMPT = """You are a seasoned travel planner. Read the user's behaviour trajectory and
instruction, gather information with the tools, keep key facts with the memory tool, and deliver a
complete plan covering every day of the trip with submit_plan.

# Plan format
{plan_format}"""


class TripTrainingEnv(AnswerEnv):
    """Behavior2Trip episodes over ``instances`` (a list of
    :class:`~travelgym.suites.behavior2trip.instances.Instance`) and the POI database ``db`` (a connection, a
    path or what ``ensure_database`` returns).

    ``reset(seed=None, options=None) -> (observation, info)``: the observation is the chat so
    far, ``[system, user]`` messages (the B2T prompt, then the behaviour trajectory and the
    instruction). ``options``: ``instance_id`` or ``index`` (else a seeded random instance) and
    ``trial``. ``step(action) -> (observation, reward, terminated, truncated, info)``: the
    observation is the next user message's text (empty after an answer)."""

    task_key = "instance_id"  # the reset option naming an instance (the training-env interface)

    def __init__(self, db: Any, instances: Sequence[Any], *, max_turns: int | None = None,
                 memory: bool = True, penalty: bool = True, gate: Gate = "format",
                 keep_results: bool = True, seed: int = 0, agent_name: str = "policy",
                 score_db: Any = None, withhold_trajectory: bool = False,
                 user_factory: Any = None, native: bool = False,
                 tools_only: bool = False, reveal_profile: bool = False) -> None:  # fmt: skip
        """``max_turns``: the most messages an episode takes (default
        ``DEFAULT_MAX_STEPS``; tools-only: 100, one a call); ``tools_only``: every action a tool
        call (:meth:`tool_functions`), the B2T format underneath; ``reveal_profile``: a solver's
        inputs carry the instance's hidden profile (the oracle's, never a policy's)."""
        if max_turns is None:
            max_turns = TOOLS_ONLY_MAX_TURNS if tools_only else DEFAULT_MAX_STEPS
        self.instances = self._hold(instances, seed, "instance")
        if max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        self.conn, self._owns_conn = open_database(db)
        # its caches serve every episode (a run shares one across its environments)
        self.score_db = score_db if score_db is not None else PlanDB(self.conn)
        # RQ1 (docs/behavior2trip/rq1.md): the request without its trajectory, and a simulated
        # user per episode (``user_factory(instance)``) answering AskUser
        self.withhold, self.user_factory = withhold_trajectory, user_factory
        # an action is a B2T-format message's text, or (``native``) an assistant message with
        # native tool calls, its text without them the plan (the ``llm:MODEL`` agent)
        self.native_tools, self.tools_only = native and not tools_only, tools_only
        self.max_turns, self.memory_enabled = max_turns, memory
        self.penalty, self.gate = penalty, gate
        self.keep_results, self.agent_name = keep_results, agent_name
        self.reveal_profile = reveal_profile
        self.instance: Any = None
        self._reset_state()

    @classmethod
    def from_split(cls, split: str = "train", *, db_seed: int = 0,
                   data_dir: str | Path | None = None, difficulty: str | None = None,
                   limit: int | None = None, scale: str = "small",
                   **kwargs: Any) -> TripTrainingEnv:  # fmt: skip
        """An environment over a split of the shipped instances at database ``scale`` (database
        and instances built when missing), optionally one difficulty and the first ``limit``
        instances."""
        from travelgym.suites.behavior2trip.instance_sets import load_split, select_instances

        db, instances, _ = load_split(split, db_seed, Path(data_dir) if data_dir else None, scale,
                                      difficulty=difficulty, limit=limit)  # fmt: skip
        return cls(db, select_instances(instances, None, difficulty, limit), **kwargs)

    def _reset_state(self) -> None:
        super()._reset_state()
        self.tools: TripToolSession | None = None
        self.memory: Memory | None = None
        self.user: Any = None
        self.request: TripRequest | None = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The whole chat of the current episode (system, user, assistant, user, ...)."""
        return self.tools.messages if self.tools is not None else []

    @property
    def tool_schemas(self) -> list[dict[str, Any]] | None:
        """The tools' OpenAI schemas a native-tools policy calls (with RQ1's ``AskUser`` where
        the user answers); ``None`` for the B2T text format."""
        if not self.native_tools or self.tools is None:
            return None
        from travelgym.suites.behavior2trip.agents.tool_agent import tool_schemas

        return tool_schemas(self.tools, self.user is not None)

    @property
    def tool_names(self) -> list[str]:
        """The names of the 9 tools an action may call."""
        from travelgym.suites.behavior2trip.tools import trips_registry

        return trips_registry().names

    async def areset(self, seed: int | None = None,
                     options: dict[str, Any] | None = None) -> tuple[list[dict[str, Any]], dict]:  # fmt: skip
        """:meth:`reset` for async code."""
        instance, trial, seed = self._draw(seed, options)
        self._reset_state()
        self.instance, self.trial, self.seed = instance, trial, seed
        self.tools = TripToolSession(self.conn, keep_results=self.keep_results)
        self.memory = Memory() if self.memory_enabled else None
        self.tools.memory = self.memory.data if self.memory is not None else {}
        if self.user_factory is not None:
            from travelgym.suites.behavior2trip.clarify import enable_clarification

            self.user = self.user_factory(instance)
            enable_clarification(self.tools, self.user)
        request = TripRequest.of(instance, withhold=self.withhold,
                                 ask_limit=self.user.log.limit if self.user is not None else 0)  # fmt: skip
        self.request = request
        if self.native_tools:
            from travelgym.suites.behavior2trip.agents.tool_agent import opening

            self.tools.messages = opening(request)
        else:
            self.tools.messages = initial_messages(request, self.memory_enabled)
        if self.tools_only:
            self.tools.messages[0]["content"] = TOOLS_ONLY_PROMPT.format(plan_format=plan_format())
        info = {"instance_id": instance.instance_id, "difficulty": instance.difficulty,
                "split": instance.split, "max_turns": self.max_turns,
                "memory": self.memory_enabled, "penalty": self.penalty}  # fmt: skip
        return [dict(m) for m in self.tools.messages], info

    async def atransition(self, action: str, usage: Any = None, repairs: Any = None,
                          started: float | None = None) -> Transition:  # fmt: skip
        """Apply one B2T-format message (the environment protocol,
        :mod:`travelgym.core.environment`): the next user message (its tool and memory
        responses) unless the episode ended; ``usage``/``repairs``: the model call's, counted
        and recorded on the step (``started``: when the call began, for the step's duration)."""
        if self.tools is None or self.done:
            raise EnvStateError("call reset() before step() (the episode has ended)")
        if self.solving:
            return self._solver_delivered(action)
        if not self.native_tools and not isinstance(action, str):
            raise TypeError(
                f"a TripTrainingEnv action is the assistant message text, not {type(action)}"
            )
        if usage is not None:
            self.tools.count_llm(usage, repairs)
        if self.native_tools:
            replies, answer = await apply_native_message(self.tools, as_assistant(action), usage,
                                                         started)  # fmt: skip
            info: dict[str, Any] = {"tool_calls": len(replies), "observation": replies}
        else:
            result = await apply_b2t_message(self.tools, self.memory, action, usage=usage,
                                             started=started)  # fmt: skip
            answer, replies = result.answer, [{"role": "user", "content": result.observation or ""}]
            info = {"invalid_actions": [a.model_dump() for a in result.invalid_actions],
                    "tool_calls": len(result.step.tool_calls), "from_tools": result.from_tools,
                    "from_memory": result.from_memory, "observation": result.observation or ""}  # fmt: skip
        terminated, truncated = self._count_turn(answer is not None)
        info.update(turn=self.turn, answered=terminated)
        reward = 0.0
        if terminated or truncated:
            if terminated:
                self._record_answer(answer)
            reward = self._end()
            info["reward_breakdown"] = self.reward.model_dump()
            info["score"] = self.score
        return Transition([] if terminated or truncated else replies, reward, terminated,
                          truncated, info)  # fmt: skip

    def solver_inputs(self) -> tuple[TripRequest, TripToolSession, dict[str, Any]]:
        """What a solve-once agent works from (:class:`~travelgym.runner.loop.SolverPolicy`):
        the request, the episode's own tool session (every call it makes recorded in the
        episode) and its extra inputs, ``profile`` where the environment reveals it. The
        episode is then the solver's: its chat is the one the solver writes (none for the
        scripted baseline), and its one message (:meth:`answer_message`) ends it."""
        self._take_for_solver()
        inputs = {"profile": self.instance.profile} if self.reveal_profile else {}
        return self.request, self.tools, inputs

    def _record_answer(self, answer: str) -> None:
        """A Behavior2Trip episode keeps its answer with the tags, as the agent wrote it."""
        super()._record_answer(f"{self.ANSWER_OPEN}{answer}{self.ANSWER_CLOSE}")

    def _end(self) -> float:
        """Score the episode's answer (or its absence) and set its reward."""
        self.done = True
        self.score = score_answer(self.instance, self.answer, self.score_db)
        invalid = sum(len(s.invalid_actions) for s in self.tools.steps)
        self.reward = b2t_reward(self.score, invalid, penalty=self.penalty, gate=self.gate)
        return self.reward.total

    def tool_functions(self) -> list[Any]:
        """Every action as a typed function returning the B2T-format message it stands for, for
        a policy that only calls tools (:mod:`travelgym.training.trl_env`): the 9 tools (and
        RQ1's ``AskUser``), ``memory`` (when on) and ``submit_plan``."""
        from travelgym.suites.behavior2trip.clarify import clarify_registry
        from travelgym.suites.behavior2trip.tools import trips_registry

        registry = clarify_registry() if self.user_factory is not None else trips_registry()
        answers = [memory_tool, submit_plan] if self.memory_enabled else [submit_plan]
        return [*typed_functions(registry, format_tool_call), *answers]

    def cut(self) -> tuple[float, dict[str, Any]]:
        """``(reward, parts)`` of an episode stopped before it ended: nothing delivered, only
        the invalid-action penalty."""
        reward = cut_reward(self)
        return reward.total, reward.model_dump()

    def episode(self) -> TripEpisode:
        """The current episode as a :class:`TripEpisode` (what ``travelgym run`` stores), scored
        once it has ended; an episode in progress is unscored."""
        if self.tools is None:
            raise EnvStateError("no episode yet: call reset()")
        episode = build_trip_episode(self.instance, self.tools, self.agent_name, self.answer,
                                     self.termination, self.error, seed=self.seed,
                                     trial=self.trial)  # fmt: skip
        episode.score = self.score
        if self.done:  # ended: its outcome, as a run would record it
            settle(episode, self.failure)
        episode.trajectory_withheld = self.withhold
        if self.user is not None:
            episode.clarification, episode.user_usage = self.user.log, self.user.usage
        episode.duration_s = round(time.perf_counter() - self._started, 4)
        return episode

    def close(self) -> None:
        """Release the event loop and the database connection the environment opened."""
        self._close_loop()
        if self._owns_conn:
            self.conn.close()
            self._owns_conn = False
