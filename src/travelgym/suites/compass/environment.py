"""``CompassTrainingEnv``: COMPASS as a Gymnasium-style chat environment with native tool calls.

An action is one assistant message, as an OpenAI-style dict (``{"role": "assistant",
"content": ..., "tool_calls": [...]}``), a :class:`~travelgym.llm.protocol.ChatMessage` or a
plain string. It is applied by :func:`~travelgym.suites.compass.agents.llm_agent.apply_assistant_message`, the
code the LLM tool-calling agent runs: tool calls are executed and answered with tool messages;
a message without tool calls ends the agent's turn, is read in the JSON response format
(message + recommendation) and goes to the simulated user, whose reply is the next observation.
A turn agent (:mod:`~travelgym.suites.compass.agents.base`: the scripted baselines, the code
agent) is :meth:`~CompassTrainingEnv.seat`-ed on the episode and its action is a whole turn, its
:class:`~travelgym.suites.compass.agents.base.AgentReply` (see
:class:`~travelgym.suites.compass.agents.turn_policy.TurnPolicy`).
The conversation is a :class:`~travelgym.suites.compass.session.CompassSession`, as in ``travelgym run
compass``: it ends when the user accepts (terminated), on an error (terminated) or at the user's
turn limit (truncated). The reward is 0 until then, then
:func:`~travelgym.suites.compass.training.compass_reward` of the scored final recommendation
(with its exact rank unless ``rank=False``). The tool calls go through the episode's
:class:`~travelgym.suites.compass.env.CompassToolSession`. The suite gives it to the shared
training code through :meth:`~travelgym.core.suite.Suite.training_env`.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from travelgym.agents.tool_calling import native_call
from travelgym.core.environment import Transition
from travelgym.llm.protocol import ChatMessage, LLMError, ToolCall
from travelgym.suites.compass.agents.base import Agent, AgentReply
from travelgym.suites.compass.agents.llm_agent import (
    MAX_STEPS_PER_TURN,
    apply_assistant_message,
    step_limit_reply,
    system_prompt,
)
from travelgym.suites.compass.agents.response_format import FORMAT_INSTRUCTIONS
from travelgym.suites.compass.scoring import PlanScore
from travelgym.suites.compass.session import DEFAULT_MAX_TURNS, CompassSession
from travelgym.suites.compass.solver import Ranking, build_components
from travelgym.suites.compass.tasks import GroundTruth, Task
from travelgym.suites.compass.tools import compass_registry
from travelgym.suites.compass.training import CompassReward, compass_reward
from travelgym.suites.compass.trajectory import Episode
from travelgym.toolkit.signature import typed_functions
from travelgym.training.base import EnvStateError, SyncAPI, open_database


class CompassTrainingEnv(SyncAPI):
    """COMPASS conversations over ``tasks`` with their ground ``truths`` (task id -> truth) on
    the database ``db`` (a connection, a path or what ``ensure_database`` returns).

    ``user``: ``"template"`` (default, offline), ``"llm:MODEL"`` or a user backend object.
    ``reset(seed=None, options=None) -> (observation, info)``: the observation is
    ``[system, user]`` chat messages; the tools the model may call are ``env.tools`` (also in
    ``info["tools"]``). ``options``: ``task_id`` or ``index`` (else a seeded random task) and
    ``trial``. ``step(action) -> (observation, reward, terminated, truncated, info)``: the
    observation is the list of new messages (tool messages, and the user's reply when the
    turn ended)."""

    task_key = "task_id"  # the reset option naming a task (the training-env interface)
    native_tools = True  # an action is an assistant message with native tool calls

    def __init__(self, db: Any, tasks: Sequence[Task], truths: dict[str, GroundTruth], *,
                 user: Any = "template", max_turns: int = DEFAULT_MAX_TURNS,
                 max_steps_per_turn: int = MAX_STEPS_PER_TURN, rank: bool = True, seed: int = 0,
                 base_url: str | None = None, agent_name: str = "policy",
                 prompt: str = "paper", persona: Any = None, tool_cache: Any = None,
                 user_name: str | None = None, tools_only: bool = False,
                 keep_results: bool = True) -> None:  # fmt: skip
        """``prompt``: the system prompt variant; ``persona``: the user's persona of each
        conversation, ``persona(task, trial, seed)`` (default: the task's); ``tool_cache``: a
        run's shared tool results (evaluation episodes); ``user_name``: how the episode names a
        user backend given as an object (default: its ``name``); ``tools_only``: every action
        a tool call (:meth:`tool_functions`; the agent talks with ``reply_to_user``);
        ``keep_results``: the tool calls' results kept in the episode (off for the agents that
        read the user's dialogue acts, the scripted baselines)."""
        self.tasks, self.truths = self._hold(tasks, seed, "task"), truths
        missing = [t.task_id for t in tasks if t.task_id not in truths]
        if missing:
            raise ValueError(f"no ground truth for {', '.join(missing[:5])}")
        self.conn, self._owns_conn = open_database(db)
        if isinstance(user, str):
            from travelgym.suites.compass.specs import user_backend

            self.user_backend, self.user_name = user_backend(user, base_url), user
            self._owned_client = getattr(self.user_backend, "client", None)
        else:
            self.user_backend = user
            self.user_name = user_name or getattr(user, "name", "custom")
            self._owned_client = None
        self.max_turns, self.max_steps_per_turn, self.rank = max_turns, max_steps_per_turn, rank
        self.agent_name = agent_name
        self.system_prompt = tools_only_prompt() if tools_only else system_prompt(prompt)
        self.persona_of, self.tool_cache, self.keep_results = persona, tool_cache, keep_results
        self.tools: list[dict[str, Any]] = compass_registry().openai_schemas()
        self.session: CompassSession | None = None
        self.agent: Agent | None = None  # the turn agent seated on the episode, if any
        self._steps_in_turn, self._turn_started = 0, time.perf_counter()
        self._messages: list[ChatMessage] = []
        self.score: PlanScore | None = None
        self.reward: CompassReward | None = None

    @classmethod
    def from_data(cls, *, db_seed: int = 0, data_dir: str | Path | None = None,
                  level: int | None = None, task_ids: list[str] | None = None,
                  limit: int | None = None, **kwargs: Any) -> CompassTrainingEnv:  # fmt: skip
        """An environment over the shipped tasks (database and ground truth built when
        missing), optionally one level, explicit ids and the first ``limit`` tasks."""
        from travelgym.suites.compass.build import ensure_database
        from travelgym.suites.compass.ground_truth import ensure_ground_truth
        from travelgym.suites.compass.task_sets import task_set

        db = ensure_database(seed=db_seed, data_dir=data_dir)
        every = task_set(db_seed, data_dir)
        # only the chosen tasks are drawn and their ground truth computed where the full files
        # are not built
        tasks = every.select(task_ids, level, limit)
        _, truths = ensure_ground_truth(seed=db_seed, data_dir=data_dir, tasks=every,
                                        task_ids=[t.task_id for t in tasks])  # fmt: skip
        return cls(db, tasks, truths, **kwargs)

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The 18 tools' OpenAI schemas (the environment protocol's name for :attr:`tools`)."""
        return self.tools

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The agent's chat of the current episode, as the LLM agent's transcript (a seated
        turn agent's own transcript)."""
        if self.agent is not None:
            return self.agent.transcript()
        return [m.to_openai() for m in self._messages]

    @property
    def done(self) -> bool:
        return self.session is None or self.reward is not None

    async def areset(self, seed: int | None = None,
                     options: dict[str, Any] | None = None) -> tuple[list[dict[str, Any]], dict]:  # fmt: skip
        """:meth:`reset` for async code."""
        task, trial, seed = self._draw(seed, options)
        persona = self.persona_of(task, trial, seed) if self.persona_of is not None else None
        self.session = CompassSession(task, self.user_backend, self.conn,
                                      self.truths[task.task_id], agent_name=self.agent_name,
                                      seed=seed, trial=trial, max_turns=self.max_turns,
                                      user_name=self.user_name, persona=persona,
                                      tool_cache=self.tool_cache,
                                      keep_results=self.keep_results)  # fmt: skip
        self.score, self.reward, self.agent = None, None, None
        self._steps_in_turn, self._turn_started = 0, time.perf_counter()
        self._turn = AgentReply("")  # the model calls of the agent's turn so far
        try:
            said = await self.session.open()
        except Exception as exc:  # noqa: BLE001 - the LLM user failed: the episode records it
            self.session.failed(exc)
            self._messages = [ChatMessage(role="system", content=self.system_prompt)]
            self._end()
            return self.messages, {"task_id": task.task_id}
        self._messages = [ChatMessage(role="system", content=self.system_prompt),
                          ChatMessage(role="user", content=said.text)]  # fmt: skip
        info = {"task_id": task.task_id, "level": task.level, "max_turns": self.max_turns,
                "user": self.user_name, "tools": self.tools}  # fmt: skip
        return self.messages, info

    def seat(self, agent: Agent) -> None:
        """Let the turn agent ``agent`` play the episode just opened: it starts on the
        episode's tool session, its transcript is the episode's messages, and its ``partial``
        turn (when it keeps one) is what a failure of its model records. Its actions are its
        replies (:class:`~travelgym.suites.compass.agents.turn_policy.TurnPolicy`)."""
        if self.session is None or self.done:
            raise EnvStateError("seat an agent on an open episode (call reset() first)")
        self.agent = agent
        agent.start(self.session.env)

    def user_acts(self) -> list[Any]:
        """The dialogue acts of the user's latest message (what oracle-NLU agents read)."""
        if self.session is None or self.session.said is None:
            raise EnvStateError("the user has not spoken yet: call reset() first")
        return self.session.said.acts

    async def astep(self, action: Any, usage: Any = None, repairs: Any = None,
                    started: float | None = None) -> tuple[list[dict[str, Any]], float, bool, bool, dict]:  # fmt: skip
        """:meth:`step` for async code (``usage``/``repairs``: the model call's, counted in the
        agent's turn). An :class:`~travelgym.suites.compass.agents.base.AgentReply` is a seated
        agent's whole turn (begun at ``started``), recorded as it is."""
        session = self.session
        if session is None or self.done:
            raise EnvStateError("call reset() before step() (the episode has ended)")
        if isinstance(action, AgentReply):
            info = {"tool_calls": len(session.env.calls), "turn_ended": False}
            begun = self._turn_started if started is None else started
            return await self._respond(action, begun, [], info)
        if usage is not None:
            self._turn.usage = self._turn.usage + usage
        self._turn.repairs.extend(repairs or ())
        message = to_assistant_message(action, f"call_{len(self._messages)}")
        self._messages.append(message)
        tool_messages, reply = apply_assistant_message(session.env, message)
        self._steps_in_turn += 1
        self._messages.extend(tool_messages)
        observation = [m.to_openai() for m in tool_messages]
        info: dict[str, Any] = {"tool_calls": len(message.tool_calls), "turn_ended": False}
        if reply is None and self._steps_in_turn >= self.max_steps_per_turn:
            reply = step_limit_reply(self.max_steps_per_turn)
        if reply is None:
            return observation, 0.0, False, False, info
        reply.llm_calls = self._steps_in_turn  # one model message per step
        reply.usage, reply.repairs = self._turn.usage, list(self._turn.repairs)
        return await self._respond(reply, self._turn_started, observation, info)

    async def _respond(self, reply: AgentReply, started: float, observation: list[dict[str, Any]],
                       info: dict[str, Any]) -> tuple[list[dict[str, Any]], float, bool, bool, dict]:  # fmt: skip
        """End the agent's turn (begun at ``started``) with ``reply``: the user answers it."""
        session = self.session
        info.update(turn_ended=True, reply_error=reply.error, recommendation=reply.recommendation)
        try:
            said = await session.respond(reply, started)
            observation.append({"role": "user", "content": said.text})
            if not session.over:
                self._messages.append(ChatMessage(role="user", content=said.text))
        except Exception as exc:  # noqa: BLE001 - the user failed: recorded in the episode
            session.failed(exc)
        self._steps_in_turn, self._turn_started = 0, time.perf_counter()
        self._turn = AgentReply("")
        if not session.over:
            return observation, 0.0, False, False, info
        self._end()
        termination = session.episode.termination
        info.update(termination=termination, reward=self.reward.model_dump(),
                    score=self.score.model_dump())  # fmt: skip
        truncated = termination == "turn_limit"
        return observation, self.reward.total, not truncated, truncated, info

    def _end(self) -> None:
        """Score the final recommendation (ranked unless ``rank`` is off) and set the reward."""
        task = self.session.task
        ranking = Ranking(task, build_components(self.conn, task)) if self.rank else None
        self.score = self.session.finish(self.messages, ranking)
        self.reward = compass_reward(self.score)

    async def atransition(self, action: Any, usage: Any = None, repairs: Any = None,
                          started: float | None = None) -> Transition:  # fmt: skip
        """Apply one assistant message (the environment protocol,
        :mod:`travelgym.core.environment`): the tool messages and the user's reply, none once
        the conversation has ended."""
        observation, reward, terminated, truncated, info = await self.astep(action, usage,
                                                                            repairs, started)  # fmt: skip
        return Transition([] if terminated or truncated else observation, reward, terminated,
                          truncated, info)  # fmt: skip

    def tool_functions(self) -> list[Any]:
        """Every action as a typed function returning the assistant message it stands for, for
        a policy that only calls tools (:mod:`travelgym.training.trl_env`): the 17 tools and
        :func:`reply_to_user`."""
        return [*typed_functions(compass_registry(), native_call), reply_to_user]

    def fail(self, exc: BaseException) -> None:
        """End the conversation on the policy's failure: its model's (an error turn with the
        turn's earlier calls), or anything else; recorded in the episode."""
        if self.session is None or self.done:
            return
        if isinstance(exc, LLMError) and self.agent is not None:
            self.session.agent_failed(exc, getattr(self.agent, "partial", None))
        elif isinstance(exc, LLMError):
            self._turn.llm_calls = self._steps_in_turn
            self.session.agent_failed(exc, self._turn)
        else:
            self.session.failed(exc)
        self._end()

    def cut(self) -> tuple[float, dict[str, Any]]:
        """``(reward, parts)`` of a conversation stopped before it ended: no plan."""
        reward = compass_reward(None)
        return reward.total, reward.model_dump()

    def episode(self) -> Episode:
        """The current conversation as an :class:`~travelgym.suites.compass.trajectory.Episode` (what
        ``travelgym run compass`` stores), scored once it has ended: the record itself, which
        the environment no longer changes (a copy of one still going on)."""
        if self.session is None:
            raise EnvStateError("no episode yet: call reset()")
        if self.reward is not None:
            return self.session.episode
        episode = self.session.episode.model_copy(deep=True)
        episode.messages = self.messages
        return episode

    def close(self) -> None:
        """Release the event loop, the LLM user's client and the database connection the
        environment opened (the client only outside a running event loop)."""
        client, self._owned_client = self._owned_client, None
        if client is not None and hasattr(client, "aclose"):
            with contextlib.suppress(EnvStateError):
                self._run(client.aclose())
        self._close_loop()
        if self._owns_conn:
            self.conn.close()
            self._owns_conn = False


def reply_to_user(message: str, hotel: str | list[str] | None = None, flight: str | None = None,
                  permit: str | None = None) -> dict[str, Any]:  # fmt: skip
    """Say something to the user, optionally recommending one complete itinerary.

    Args:
        message: What the user reads.
        hotel: The recommended hotel package ID (pkg_...), validated with recommend_hotel; for a
            hotel-only trip (no flights, no permit) a list of up to 3 options, the best counts.
        flight: The recommended flight package ID (flight_...), validated with recommend_flight.
        permit: The recommended permit package ID (permit_...), validated with recommend_permit.

    Returns:
        The user's reply, or a note that the conversation is over.
    """
    picks = {"hotel": hotel, "flight": flight, "permit": permit}
    reply = {"message": message, "recommendation": picks if any(picks.values()) else None}
    return {"role": "assistant", "content": json.dumps(reply)}


def tools_only_prompt() -> str:
    """The system prompt of the tools-only mode: the paper's, talking through
    :func:`reply_to_user`."""
    return system_prompt("paper").replace(FORMAT_INSTRUCTIONS, "Talk to the user only with the "
                                          "reply_to_user tool; recommend one complete "
                                          "itinerary (the package IDs you validated), or for a "
                                          "hotel-only trip up to 3 hotel options as a list, the "
                                          "best of which counts.")  # fmt: skip


def to_assistant_message(action: Any, id_prefix: str = "call") -> ChatMessage:
    """An assistant :class:`ChatMessage` from a string, a ChatMessage or an OpenAI-style dict
    (tool calls ``{"id", "type": "function", "function": {"name", "arguments"}}`` or flat
    ``{"id", "name", "arguments"}``; arguments as JSON text or an object; missing ids are
    made up from ``id_prefix``)."""
    if isinstance(action, ChatMessage):
        if action.role != "assistant":
            raise ValueError(f"an action is an assistant message, not a {action.role!r} one")
        return action
    if isinstance(action, str):
        return ChatMessage(role="assistant", content=action)
    if not isinstance(action, dict):
        raise TypeError(f"an action is a string or an assistant message dict, not {type(action)}")
    if action.get("role", "assistant") != "assistant":
        raise ValueError(f"an action is an assistant message, not a {action.get('role')!r} one")
    calls = []
    for i, raw in enumerate(action.get("tool_calls") or []):
        fn = raw.get("function", raw) if isinstance(raw, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise ValueError(f"tool call {i} has no function name: {raw!r}")
        args = fn.get("arguments", "{}")
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        calls.append(ToolCall(id=str(raw.get("id") or f"{id_prefix}_{i}"), name=fn["name"],
                              arguments=args))  # fmt: skip
    content = action.get("content")
    return ChatMessage(role="assistant", content=content if isinstance(content, str) else None,
                       tool_calls=calls)  # fmt: skip
