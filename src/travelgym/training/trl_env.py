"""Every suite as a TRL ``environment_factory`` environment, for TRL's native tool loop.

``GRPOTrainer(..., environment_factory=environment_factory(SUITE, ...))`` gives every rollout
its own environment: ``reset(**row)`` starts the dataset row's task and returns its text (TRL
appends it to the prompt's last user message); every public method is a tool the model calls
with its chat template's native tool-call format (e.g. Qwen3); ``get_reward()`` is the reward
of the episode when the rollout ends. One class serves every suite: it drives the suite's own
environment (:mod:`travelgym.core.environment`, ``Suite.training_env(tools_only=True)``), the
one that evaluation plays, so the episode, its score and its reward are the suite's as
everywhere. TRL's loop ends at the first message without a tool call, so in its tools-only mode
an environment offers every action as a typed function (``env.tool_functions()``: the suite's
tools, and the calls that answer, e.g. ``submit_plan``), each returning the assistant message it
stands for; the methods here wrap them. :meth:`ToolEnvironmentFactory.rows` makes the dataset
rows.

``travelgym train grpo`` does not use these: it runs its own rollouts
(:mod:`~travelgym.training.rollout`) for the exact B2T action format and loss mask. These are
for models trained with native tool calls; see ``docs/training/grpo.md``.
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Callable
from typing import Any

from travelgym.agents.b2t_format import MEMORY_RESPONSE, TOOL_RESPONSE
from travelgym.runner.loop import Conversation
from travelgym.toolkit.signature import type_hint as type_hint

_RESPONSE = re.compile(rf"^\s*<({TOOL_RESPONSE}|{MEMORY_RESPONSE})>\s*(.*?)\s*</\1>\s*$", re.S)


def observation_text(messages: list[dict[str, Any]], native_tools: bool) -> str:
    """What a tool call returns to the model: the tool messages' contents; in a native-tools
    environment a user message is the (simulated) user speaking, in a text environment it carries
    the tool responses (a single ``<tool_response>``/``<memory_response>`` block unwrapped)."""
    parts = []
    for message in messages:
        text = message.get("content") or ""
        if message["role"] == "tool":
            parts.append(text)
        elif native_tools:
            parts.append(f"The user says: {text}")
        else:
            match = _RESPONSE.match(text)
            parts.append(match.group(2) if match else text)
    return "\n\n".join(parts)


class ToolEnvironment:
    """A suite's environment for TRL's tool loop (see the module docstring); the methods that
    are tools are added per environment by :func:`tool_environment`."""

    def __init__(self, env: Any) -> None:
        self._env, self._episode = env, Conversation(env)  # the episode loop's one body

    def reset(self, **row: Any) -> str:
        """Start the row's task (its ``env.task_key`` column; else a random one): its text."""
        key = self._env.task_key
        options = {key: row[key]} if row.get(key) else {}
        messages, _ = self._episode.start(seed=row.get("seed"), options=options)
        return messages[-1]["content"]

    def _over(self) -> str:
        return f"the task is over ({self._env.episode().termination})"

    def _act(self, action: Any) -> str:
        env = self._env
        if env.done:
            return json.dumps({"error": self._over()})
        moved = self._episode.apply(action)
        if moved.ended:
            over = self._over()  # builds the episode record: once
            return f"{over[0].upper()}{over[1:]}."
        return observation_text(moved.messages, env.native_tools)

    def get_reward(self) -> float:
        """The episode's reward once it has ended; before, that of an episode stopped there
        (the environment's ``cut``)."""
        if self._env.done:
            return float(self._episode.reward)
        return float(self._env.cut()[0])


def _method(function: Callable[..., Any]) -> Callable[..., str]:
    """A method applying the action ``function`` returns, with its name, parameters and
    docstring (``self`` first)."""

    def method(self: ToolEnvironment, *args: Any, **kwargs: Any) -> str:
        return self._act(function(*args, **kwargs))

    signature = inspect.signature(function)
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    method.__name__ = method.__qualname__ = function.__name__
    method.__doc__ = function.__doc__
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[self_param, *signature.parameters.values()], return_annotation=str
    )
    # resolved where ``function`` was written (its module's names), not here
    method.__annotations__ = {**typing.get_type_hints(function), "return": str}
    return method


def tool_environment(env: Any) -> ToolEnvironment:
    """``env`` (an environment in its tools-only mode) as a :class:`ToolEnvironment` whose class
    has one method per function of ``env.tool_functions()``."""
    methods = {f.__name__: _method(f) for f in env.tool_functions()}
    clash = set(methods) & {"reset", "get_reward"}
    if clash:
        raise ValueError(f"an environment tool may not be named {', '.join(sorted(clash))}")
    cls = type(f"{type(env).__name__}Tools", (ToolEnvironment,), methods)
    return cls(env)


class ToolEnvironmentFactory:
    """A zero-argument factory of a suite's :class:`ToolEnvironment` objects, for
    ``GRPOTrainer(..., environment_factory=...)``; ``options`` go to ``Suite.training_env``
    (which tasks, ``max_turns``, ...)."""

    def __init__(self, suite: Any, **options: Any) -> None:
        self.suite, self.options = suite, options

    def __call__(self) -> ToolEnvironment:
        return tool_environment(self.suite.training_env(tools_only=True, **self.options))

    def rows(self, ids: list[str] | None = None) -> list[dict[str, Any]]:
        """Dataset rows: the environment's system prompt, an empty user message (``reset``
        fills it) and the task id (default: every task of the environment)."""
        env = self.suite.training_env(tools_only=True, **self.options)
        try:
            messages, _ = env.reset(options={"index": 0})
            ids, key = list(ids) if ids is not None else env.item_ids, env.task_key
        finally:
            env.close()
        prompt = [{"role": "system", "content": messages[0]["content"]},
                  {"role": "user", "content": ""}]  # fmt: skip
        return [{"prompt": prompt, key: i} for i in ids]


def environment_factory(suite: str, **options: Any) -> ToolEnvironmentFactory:
    """:class:`ToolEnvironmentFactory` of the installed suite named ``suite``."""
    from travelgym.core.registry import get_suite

    return ToolEnvironmentFactory(get_suite(suite), **options)


def trl_rows(suite: str, ids: list[str] | None = None, **options: Any) -> list[dict[str, Any]]:
    """The dataset rows of ``environment_factory(suite, **options)`` for ``ids``."""
    return environment_factory(suite, **options).rows(ids)
