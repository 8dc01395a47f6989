"""Every installed suite as a verifiers environment (verifiers 0.4, ``verifiers.v1``).

verifiers finds an environment as a package exporting a ``Taskset`` (and optionally an ``Env``
and a ``Harness``) through ``__all__``; the ``travelgym-env`` package
(``environments/travelgym_env``) re-exports the three classes here, so ``vf-eval travelgym-env
--env.taskset.suite SUITE`` runs any suite, and :func:`load_environment` builds one in Python.

- :class:`TravelgymTaskset`: the suite's tasks (``suite.training_env(**options)``'s items), one
  :class:`TravelgymTask` per task: the prompt is the environment's opening messages, ``id`` and
  ``info`` name the task.
- :class:`TravelgymEnv`: one episode is one conversation with a fresh training environment of
  the suite (one environment state per rollout: verifiers runs rollouts concurrently). The
  model's message goes to the environment, which runs its tool calls and, when the agent's
  turn ends, the simulated user; what comes back (tool results, the user's reply) is the next
  turn, until the environment ends the episode.
- :class:`TravelgymHarness`: the agent program, in-process: each segment is one chat
  completion through verifiers' interception endpoint (so the trace records every model call),
  with the suite's tool schemas where its actions are native tool calls
  (:attr:`~travelgym.core.suite.Suite.training_tool_calls`).
- The rubric is :meth:`TravelgymTask.suite_reward`: the suite's reward
  (:meth:`~travelgym.core.suite.Suite.reward`) of the episode the environment played.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import verifiers.v1 as vf
from pydantic import Field, field_validator
from verifiers.v1.dialects.chat import message_to_wire
from verifiers.v1.runtimes import ProgramResult, SubprocessConfig

from travelgym.core.registry import all_suites, get_suite
from travelgym.runner.loop import Conversation

TASKSET_ID = "travelgym-env"
EPISODE_KEY = "travelgym_episode"  # trace.info: the episode the environment played (JSON)
CUT_KEY = "travelgym_cut_reward"  # trace.info: the reward of a conversation cut short


class TravelgymTasksetConfig(vf.TasksetConfig):
    """``--env.taskset.*``: the suite and the keyword arguments of its training environment."""

    suite: str = Field(default_factory=lambda: default_suite())
    """An installed suite with a training environment (``travelgym suites``); default: the
    one ``travelgym train grpo`` trains."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments of ``suite.training_env``: e.g. ``limit``, ``split``, ``level``,
    ``difficulty``, ``user``, ``data_dir``, ``db_seed`` (the suite's own)."""
    seed: int = 0
    """The seed every episode resets its environment with (the simulated user's draws)."""

    @field_validator("suite")
    @classmethod
    def _installed(cls, name: str) -> str:
        from travelgym.core.errors import UserError

        try:
            return check_suite(name)
        except UserError as exc:
            raise ValueError(str(exc)) from None


def default_suite() -> str:
    """The suite ``travelgym train grpo`` trains by default (else the first trainable one)."""
    trainable = [s for s in all_suites() if s.trainable]
    if not trainable:
        return ""
    return next((s for s in trainable if s.training_default), trainable[0]).name


def check_suite(name: str) -> str:
    """``name`` when it is an installed suite with a training environment (a
    :class:`~travelgym.core.errors.UserError` naming the ones there are otherwise)."""
    from travelgym.core.errors import UserError

    if not get_suite(name).trainable:
        usable = ", ".join(s.name for s in all_suites() if s.trainable) or "none"
        raise UserError(f"suite {name!r} has no training environment (suites that do: {usable})")
    return name


class TravelgymData(vf.TaskData):
    info: dict[str, Any] = Field(default_factory=dict)
    """``suite``, ``task_id`` and the seed the episode resets with."""


class TravelgymTask(vf.Task[TravelgymData, vf.State, vf.TaskConfig]):
    """One task of a suite; its reward is the suite's reward of the episode played."""

    @property
    def key(self) -> str:
        return f"{self.data.info['suite']}:{self.data.info['task_id']}"

    @vf.reward
    async def suite_reward(self, trace: vf.Trace) -> float:
        """The suite's reward (``suite.reward(episode).total``) of the episode the
        environment played; a conversation cut short gets the suite's reward for no plan."""
        return episode_reward(self.data.info["suite"], trace.info)


def episode_reward(suite_name: str, info: dict[str, Any]) -> float:
    """The reward recorded in a trace's ``info`` by :class:`TravelgymEnv`."""
    if EPISODE_KEY in info:
        return float(get_suite(suite_name).reward(info[EPISODE_KEY]).total)
    return float(info.get(CUT_KEY, 0.0))


class TravelgymTaskset(vf.Taskset[TravelgymTask, TravelgymTasksetConfig]):
    """The suite's tasks, in the training environment's order."""

    def load(self) -> Iterator[TravelgymTask]:
        config = self.config
        env = open_training_env(config.suite, config.options)
        try:
            for task_id in env.item_ids:
                messages, _ = off_loop(env.reset, seed=config.seed,
                                       options={env.task_key: task_id})  # fmt: skip
                info = {"suite": config.suite, "task_id": task_id, "seed": config.seed}
                data = TravelgymData(id=task_id, name=task_id, prompt=messages, info=info)
                yield TravelgymTask(data, config.task)
        finally:
            env.close()


def off_loop(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a worker thread when an event loop runs here (``vf-eval``
    loads the tasks inside its loop, where the environments' synchronous API refuses to run)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return fn(*args, **kwargs)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args, **kwargs).result()


def open_training_env(suite_name: str, options: dict[str, Any]) -> Any:
    """A fresh training environment of the suite with the options (options it does not take,
    or values it refuses, are a :class:`~travelgym.core.errors.UserError` saying so)."""
    from travelgym.core.errors import UserError

    try:
        return get_suite(suite_name).training_env(**options)
    except (TypeError, ValueError) as exc:
        raise UserError(f"{suite_name} training environment options {options}: {exc}") from None


class TravelgymHarnessConfig(vf.HarnessConfig):
    pass


class TravelgymHarness(vf.Harness[TravelgymHarnessConfig]):
    """One chat completion per segment, made in-process through the interception endpoint:
    the conversation so far, with the suite's tool schemas when its actions call tools."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx, trace, runtime, endpoint, secret, mcp_urls, data,
                     tool_interception_url=None) -> ProgramResult:  # fmt: skip
        """One model call on ``data``'s conversation (the task's opening messages, then each
        turn's): the trace records it through the interception at ``endpoint``."""
        from openai import AsyncOpenAI

        system, prompt = self.resolve_prompt(data)
        messages = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        else:
            messages += [message_to_wire(m) for m in prompt or []]
        request: dict[str, Any] = {"model": ctx.model, "messages": messages}
        tools = suite_tools(trace.task.data.info["suite"])
        if tools:
            request["tools"] = tools
        sampling = ctx.sampling.model_dump(exclude_none=True)
        request.update(sampling)
        async with AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0) as client:
            await client.chat.completions.create(**request)
        return ProgramResult(exit_code=0, stdout="", stderr="")


def suite_tools(suite_name: str) -> list[dict[str, Any]]:
    """The OpenAI tool schemas offered to the model: the suite's tools where its training
    environment takes native tool calls, else none (its tools are called in the text)."""
    suite = get_suite(suite_name)
    return suite.tool_registry().openai_schemas() if suite.training_tool_calls else []


class TravelgymEnvConfig(vf.EnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig(runtime=SubprocessConfig())
    """The policy; its harness runs in-process, so the local runtime holds nothing."""
    max_steps: int = Field(400, ge=1)
    """A cap on the model messages of one episode (the suites end their episodes first)."""


class TravelgymEnv(vf.Env[TravelgymEnvConfig]):
    """One conversation between the policy and a fresh training environment of the suite."""

    async def run(self, task: TravelgymTask, agents: vf.Agents) -> None:
        info = task.data.info
        env = open_training_env(info["suite"], self.taskset.config.options)
        episode = Conversation(env)  # the one episode loop's body, driven by the agent's turns
        try:
            messages, _ = await episode.astart(seed=info["seed"],
                                               options={env.task_key: info["task_id"]})  # fmt: skip
            if json.dumps(messages, sort_keys=True) != json.dumps(
                [message_to_wire(m) for m in task.data.prompt], sort_keys=True
            ):
                raise RuntimeError(f"task {info['task_id']}: the environment opened differently")
            async with agents.agent.interaction(task) as interaction:
                segment = await interaction.turn()
                for _ in range(self.config.max_steps):
                    if segment.terminated or not segment.messages:
                        break
                    action = message_to_wire(segment.messages[-1])
                    if not env.native_tools:
                        action = action.get("content") or ""
                    moved = await episode.aapply(action)
                    if moved.ended:
                        break
                    segment = await interaction.turn(moved.messages)
                record_outcome(interaction.trace.info, env)
        finally:
            env.close()


def record_outcome(info: dict[str, Any], env: Any) -> None:
    """Keep the ended episode (or the reward of one cut short) on the trace for the rubric, with
    its outcome (``completed`` or ``model_error``: an infra error raises out of the rollout,
    which verifiers counts as an error)."""
    if env.reward is not None:
        info[EPISODE_KEY] = env.episode().model_dump(mode="json")
        info["travelgym_outcome"] = info[EPISODE_KEY]["outcome"]
        info["travelgym_reward"] = env.reward.model_dump(mode="json")
    else:
        info[CUT_KEY], info["travelgym_reward"] = env.cut()


def load_environment(suite: str | None = None, *, seed: int = 0, max_steps: int = 400,
                     **options: Any) -> TravelgymEnv:  # fmt: skip
    """The verifiers environment of ``suite`` (default: :func:`default_suite`); ``options``:
    the keyword arguments of the suite's training environment (``limit``, ``user``, ``split``,
    ``data_dir``...). An unknown suite is a :class:`~travelgym.core.errors.UserError` here."""
    suite = check_suite(suite if suite is not None else default_suite())
    config = TravelgymEnvConfig(
        taskset=TravelgymTasksetConfig(id=TASKSET_ID, suite=suite, options=options, seed=seed),
        max_steps=max_steps,
    )
    return vf.load_environment(config)
