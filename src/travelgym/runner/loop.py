"""The one episode loop: an environment (:mod:`travelgym.core.environment`) and a policy.

:func:`play` resets the environment, asks the policy for each assistant message and applies
it, until the episode ends; a failure of the policy's model (or of a Python policy's code) ends
the episode through ``env.fail`` and is recorded, never raised. Evaluation runs the suites'
model agents through it, and the same environments serve GRPO rollouts, the Gymnasium and the
verifiers environments, so a model is trained on the episodes it is scored on.

A policy is any object with ``async act(messages, tools) -> Action``: :class:`ChatPolicy`
drives a chat client (an endpoint, a local model, a person at the terminal, a Python policy);
a scripted policy replays messages (tests). A policy that works the episode's tools itself (the
scripted baselines, the oracle, ReAct and code agents: :class:`SolverPolicy`, COMPASS's turn
agents) also has ``bind(env)``, called once the episode has opened: its tool calls go through
the environment's own tool session, so they are recorded in the episode like any other.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from travelgym.core.environment import Environment, Transition
from travelgym.llm.protocol import ChatClient, ChatMessage, Repair, Usage


@dataclass
class Action:
    """One assistant message of a policy: the action the environment takes (the text, or for a
    native-tools environment the message dict) and the model call's accounting."""

    message: Any
    usage: Usage | None = None
    repairs: list[Repair] = field(default_factory=list)


class Policy(Protocol):
    async def act(self, messages: list[dict[str, Any]],
                  tools: list[dict[str, Any]] | None) -> Action: ...  # fmt: skip


class ChatPolicy:
    """A chat client as a policy: each act is one completion of the chat so far (with the
    environment's tools for a native-tools environment); ``params`` go with every call."""

    def __init__(self, client: ChatClient, native_tools: bool = False, **params: Any) -> None:
        self.client, self.native_tools, self.params = client, native_tools, params

    async def act(self, messages: list[dict[str, Any]],
                  tools: list[dict[str, Any]] | None) -> Action:  # fmt: skip
        chat = [ChatMessage.from_openai(m) for m in messages]
        if tools is not None:
            response = await self.client.complete(chat, tools=tools, **self.params)
        else:
            response = await self.client.complete(chat, **self.params)
        message = response.message
        action = message.to_openai() if self.native_tools else (message.content or "")
        return Action(action, response.usage, list(response.repairs))


@dataclass
class PolicyAgent:
    """An agent that is a policy played by :func:`play` over the suite's environment (its
    ``name`` recorded in the episode; ``max_steps``: the most assistant messages an episode
    takes; ``settings``: the suite environment's own switches, e.g. ``memory``)."""

    policy: Any
    name: str
    max_steps: int
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass
class Played:
    """A finished episode: its record, the reward and its parts, how many actions it took."""

    episode: Any
    reward: float
    breakdown: dict[str, Any] | None
    turns: int
    messages: list[dict[str, Any]]


class Conversation:
    """One episode of an environment as every driver plays it: the loop's one body. It opens
    the episode, applies each assistant message through ``env.atransition`` and keeps the chat
    (the opening, then each message and the messages the environment added), the count of
    actions and the reward; :meth:`result` is the finished episode (the reward of one stopped
    early is the environment's ``cut``). :func:`play` (evaluation, ``play``, the inspect solver)
    drives it with a policy; GRPO rollouts and the Gymnasium environment step it one message at
    a time (the synchronous forms), the verifiers environment with its own agent."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.chat: list[dict[str, Any]] = []
        self.turns, self.reward = 0, 0.0

    @property
    def ended(self) -> bool:
        return bool(self.env.done)

    @property
    def tools(self) -> list[dict[str, Any]] | None:
        """The tool schemas a policy may call (``None`` for a text-format environment)."""
        return self.env.tool_schemas if self.env.native_tools else None

    def _opened(
        self, opened: tuple[list[dict[str, Any]], dict]
    ) -> tuple[list[dict[str, Any]], dict]:
        messages, info = opened
        self.chat, self.turns, self.reward = [dict(m) for m in messages], 0, 0.0
        return messages, info

    async def astart(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], dict]:
        """Open an episode: ``env.areset``'s ``(messages, info)``."""
        return self._opened(await self.env.areset(seed=seed, options=options))

    def start(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], dict]:
        """:meth:`astart` on the environment's own event loop."""
        return self._opened(self.env.reset(seed=seed, options=options))  # type: ignore[attr-defined]

    def _applied(self, message: Any, moved: Transition) -> Transition:
        self.turns += 1
        self.reward = moved.reward
        if isinstance(message, str):
            message = {"role": "assistant", "content": message}
        elif not isinstance(message, dict):  # a ChatMessage, a suite's reply (COMPASS's turns)
            message = message.to_openai()
        self.chat.append(message)
        self.chat += moved.messages
        return moved

    async def aapply(self, message: Any, **meta: Any) -> Transition:
        """Apply one assistant message (``meta``: the model call's ``usage``, ``repairs`` and
        ``started``, recorded on the step)."""
        return self._applied(message, await self.env.atransition(message, **meta))

    def apply(self, message: Any) -> Transition:
        """:meth:`aapply` on the environment's own event loop."""
        return self._applied(message, self.env.transition(message))  # type: ignore[attr-defined]

    def fail(self, exc: BaseException) -> None:
        """End the episode on the policy's failure (recorded, never scored as an answer)."""
        self.env.fail(exc)

    def result(self) -> Played:
        """The episode as it stands: ended, its reward and parts; else stopped here, the
        environment's ``cut``."""
        if self.ended:
            reward, breakdown = self.reward, self.env.breakdown()
        else:
            reward, breakdown = self.env.cut()
        return Played(self.env.episode(), reward, breakdown, self.turns, self.chat)


async def play(env: Environment, policy: Policy, *, seed: int | None = None,
               options: dict[str, Any] | None = None) -> Played:  # fmt: skip
    """Play one episode of ``env`` with ``policy`` (``seed``/``options``: ``env.areset``'s)."""
    episode = Conversation(env)
    await episode.astart(seed=seed, options=options)
    bind = getattr(policy, "bind", None)
    try:
        if bind is not None and not episode.ended:
            bind(env)
        while not episode.ended:
            started = time.perf_counter()
            action = await policy.act(episode.chat, episode.tools)
            await episode.aapply(action.message, usage=action.usage, repairs=action.repairs,
                                 started=started)  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - recorded in the episode (its outcome says whose)
        episode.fail(exc)
    return episode.result()


class Solver(Protocol):
    """An agent that works a suite's tools itself and answers once (Behavior2Trip's and
    TravelPlanner's scripted baselines, oracle and ReAct agents)."""

    name: str

    async def solve(self, request: Any, session: Any, **inputs: Any) -> Any: ...


class SolverEnvironment(Environment, Protocol):
    def solver_inputs(self) -> tuple[Any, Any, dict[str, Any]]: ...

    def answer_message(self, answer: Any) -> Any: ...


def solver_agent(solver: Solver, **settings: Any) -> PolicyAgent:
    """``solver`` as the loop plays it: a :class:`SolverPolicy`, one act (``settings``: the
    environment's switches; its tool session keeps results unless ``keep_results``, default
    the solver's attribute, says otherwise)."""
    if settings.get("keep_results") is None:
        settings["keep_results"] = getattr(solver, "keep_results", True)
    return PolicyAgent(SolverPolicy(solver), solver.name, 1, settings)


class SolverPolicy:
    """A :class:`Solver` as a policy of the loop. Bound to the episode's environment, its one act
    runs ``solver.solve(request, session, **inputs)`` on what ``env.solver_inputs()`` gives (the
    request, the environment's own tool session, the solver's extra inputs) and returns
    ``env.answer_message(answer)``: the assistant message that delivers the answer (``None``:
    the solver gave up). A failure of the solver is the episode's, recorded by ``env.fail``."""

    def __init__(self, solver: Solver) -> None:
        self.solver = solver
        self.env: SolverEnvironment | None = None

    def bind(self, env: SolverEnvironment) -> None:
        self.env = env

    async def act(self, messages: list[dict[str, Any]],
                  tools: list[dict[str, Any]] | None) -> Action:  # fmt: skip
        if self.env is None:
            raise RuntimeError("a solver policy acts only once bound to an episode's environment")
        request, session, inputs = self.env.solver_inputs()
        return Action(self.env.answer_message(await self.solver.solve(request, session, **inputs)))


async def play_agent(env: Any, agent: PolicyAgent, task_id: str, trial: int, seed: int) -> Any:
    """The episode record of ``agent`` on the task ``task_id`` of ``env`` (an evaluation
    episode: the environment is closed after it)."""
    try:
        played = await play(env, agent.policy, seed=seed,
                            options={env.task_key: task_id, "trial": trial})  # fmt: skip
    finally:
        env.close()
    return played.episode


def stored(episode: Any, started: float) -> Any:
    """``episode`` as a run stores it: its wall time since ``started`` (``perf_counter``) and
    serialisable (whatever invalid text slipped past the boundary replaced and counted)."""
    from travelgym.llm.text import serialisable

    episode.duration_s = round(time.perf_counter() - started, 4)
    episode, replaced = serialisable(episode)
    if replaced:
        episode.repairs["invalid_unicode"] = episode.repairs.get("invalid_unicode", 0) + 1
    return episode
