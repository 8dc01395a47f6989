"""The environment protocol: one suite's episodes as a chat between a policy and the suite.

Every way travelgym plays an episode of a model-driven agent goes through this protocol and the
one loop that drives it (:func:`travelgym.runner.loop.play`): evaluation of the suite's model
agents, GRPO rollouts (:mod:`travelgym.training.rollout`), the Gymnasium environments, the
verifiers environment. A suite's environment (``Suite.training_env``) owns the episode: the
prompt, how an assistant message is applied (tool calls, memory, the answer), the simulated
user, the episode record and its score; a policy only writes assistant messages.

- ``await env.areset(seed, options) -> (messages, info)``: the opening chat (OpenAI-style
  message dicts) and facts about the task (``info[env.task_key]`` names it). ``options``:
  ``{env.task_key: ID}`` or ``{"index": i}`` (else a seeded random task) and ``trial``.
- ``await env.atransition(action, usage=None) -> Transition``: apply one assistant message
  (its text, or for ``env.native_tools`` environments an assistant message dict with tool
  calls); ``usage``: the model's accounting for it, recorded on the step. The transition holds
  the messages the environment adds to the chat (tool results, the user's reply; none once the
  episode has ended), the reward (0 until the end, then the episode's reward) and whether the
  episode ended (``terminated``: it finished; ``truncated``: a turn limit cut it).
- ``env.fail(exc)``: end the episode on a failure of the policy's model (an endpoint down, a
  policy that raised): recorded with its outcome, never scored as an answer.
- ``env.breakdown()``: the ended episode's reward parts; ``env.cut()``: ``(reward, parts)`` of
  an episode stopped from outside before it ended (a token budget).
- ``env.episode()``: the episode record (the suite's ``EpisodeBase`` model, as ``travelgym run``
  stores it), scored once it has ended.
- ``env.tool_schemas``: the OpenAI tool schemas a native-tools policy may call (``None`` for a
  text-format environment); ``env.close()`` releases what it opened.

The synchronous forms ``env.transition(...)`` and ``env.reset(...)`` run the coroutines on the
environment's own event loop (:class:`travelgym.training.base.SyncAPI`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass
class Transition:
    """What one assistant message did: the messages the environment adds, the reward and
    whether the episode ended (``info``: the suite's details of the step)."""

    messages: list[dict[str, Any]]
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def ended(self) -> bool:
        return self.terminated or self.truncated

    def gym(self, observation: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Gymnasium's ``(observation, reward, terminated, truncated, info)`` of this step."""
        return observation, self.reward, self.terminated, self.truncated, self.info


@runtime_checkable
class Environment(Protocol):
    """See the module docstring."""

    task_key: str
    native_tools: bool

    @property
    def item_ids(self) -> list[str]: ...

    @property
    def done(self) -> bool: ...

    @property
    def tool_schemas(self) -> list[dict[str, Any]] | None: ...

    async def areset(self, seed: int | None = None,
                     options: dict[str, Any] | None = None) -> tuple[list[dict[str, Any]], dict]: ...  # fmt: skip

    async def atransition(self, action: Any, usage: Any = None) -> Transition: ...

    def fail(self, exc: BaseException) -> None: ...

    def breakdown(self) -> dict[str, Any] | None: ...

    def cut(self) -> tuple[float, dict[str, Any]]: ...

    def episode(self) -> Any: ...

    def close(self) -> None: ...
