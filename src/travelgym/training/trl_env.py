"""The two suites as TRL ``environment_factory`` environments, for TRL's native tool loop.

``GRPOTrainer(..., environment_factory=trip_env_factory(...))`` (or
:func:`compass_env_factory`) gives every rollout its own environment: ``reset(**row)`` starts
the dataset row's instance / task and returns the task text (TRL appends it to the prompt's
last user message); every public method is a tool the model calls with its chat template's
native tool-call format (e.g. Qwen3); ``get_reward()`` scores the rollout when it ends. The
tool methods are generated from the suites' tool registries (:mod:`travelgym.toolkit.registry`)
with real type hints and Google-style docstrings, so ``transformers.utils.get_json_schema``
reads them; each runs through the training environments (:class:`TripEnv`, :class:`CompassEnv`),
so the reward is the same :mod:`~travelgym.training.rewards` as everywhere.

- Behavior2Trip: the 9 tools, ``memory`` (the B2T memory module) and ``submit_plan`` (the final
  ``<answer>``); the reward is ``R_total`` (an episode without a plan gets ``P_action``).
- COMPASS: the 17 tools and ``reply_to_user`` (the agent's words and recommendation; returns
  the simulated user's reply); the reward is the COMPASS reward of the final recommendation.

``travelgym train grpo`` does not use these: it runs its own rollouts
(:mod:`~travelgym.training.rollout`) for the exact B2T action format and loss mask. These are
for models trained with native tool calls; see ``docs/training/grpo.md``.
"""

from __future__ import annotations

import functools
import inspect
import json
import operator
import re
from collections.abc import Callable
from typing import Any, Literal

from travelgym.toolkit.registry import Tool, ToolRegistry
from travelgym.training.rewards import b2t_reward

_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool,
                               "object": dict, "array": list}  # fmt: skip
_RESPONSE = re.compile(r"^\s*<(tool_response|memory_response)>\s*(.*?)\s*</\1>\s*$", re.S)
TRIP_TOOL_PROMPT = """You are a seasoned travel planner. Read the user's behaviour trajectory and
instruction, gather information with the tools, keep key facts with the memory tool, and deliver a
complete plan covering every day of the trip with submit_plan.

# Plan format
{plan_format}"""


def type_hint(schema: dict[str, Any]) -> Any:
    """A Python type hint for a JSON-schema property (enums as ``Literal``; nested objects as
    ``dict``; ``anyOf`` as a union, ``null`` as ``None``)."""
    if "enum" in schema:
        return Literal[tuple(schema["enum"])]
    if "anyOf" in schema:
        parts = [type_hint(s) for s in schema["anyOf"] if s.get("type") != "null"]
        hint = functools.reduce(operator.or_, parts)
        return hint | None if any(s.get("type") == "null" for s in schema["anyOf"]) else hint
    kind = schema.get("type")
    if kind == "array" and "items" in schema:
        return list[type_hint(schema["items"])]
    if kind not in _JSON_TYPES:
        raise ValueError(f"no type hint for the schema {schema}")
    return _JSON_TYPES[kind]


def _argument_doc(tool: Tool, name: str, schema: dict[str, Any]) -> str:
    text = " ".join((tool.param_docs.get(name) or schema.get("description") or name).split())
    objects = [s for s in schema.get("anyOf", [schema]) if s.get("type") == "object"]
    for obj in objects:  # name the keys (and values) of a preferences object
        keys = []
        for key, sub in obj.get("properties", {}).items():
            values = sub.get("enum") or next((s.get("enum") for s in sub.get("anyOf", [])
                                              if s.get("enum")), None)  # fmt: skip
            keys.append(f"{key} (one or a list of: {', '.join(map(str, values))})" if values
                        else key)  # fmt: skip
        if keys:
            text += " Keys: " + "; ".join(keys) + "."
    return text


def tool_docstring(tool: Tool) -> str:
    """A Google-style docstring for a registry tool: description, ``Args:``, ``Returns:``."""
    description, _, returns = tool.description.partition("\n\nReturns: ")
    properties = tool.json_schema()["properties"]
    lines = [description.strip(), "", "Args:"]
    lines += [f"    {name}: {_argument_doc(tool, name, properties[name])}" for name in properties]
    lines += ["", "Returns:", f"    {' '.join(returns.split()) or 'The result as JSON text.'}"]
    return "\n".join(lines)


def tool_method(tool: Tool) -> Callable[..., str]:
    """A method ``(self, **arguments) -> str`` calling ``self._call_tool(name, arguments)``,
    with the tool's signature (keyword-only parameters), type hints and docstring."""
    schema = tool.json_schema()
    required = set(schema.get("required", []))
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    for name, prop in schema["properties"].items():
        hint = type_hint(prop)
        field = tool.args_model.model_fields[name]
        default = inspect.Parameter.empty if name in required else field.default
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=hint))  # fmt: skip
        annotations[name] = hint
    annotations["return"] = str

    def method(self: Any, **arguments: Any) -> str:
        return self._call_tool(tool.name, arguments)

    method.__name__ = method.__qualname__ = tool.name
    method.__doc__ = tool_docstring(tool)
    method.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    return method


def add_tools(cls: type, registry: ToolRegistry) -> type:
    """Give ``cls`` one generated method per tool of ``registry``."""
    for name in registry.names:
        setattr(cls, name, tool_method(registry[name]))
    return cls


def _unwrap(observation: str) -> str:
    """The payload of a single ``<tool_response>`` / ``<memory_response>`` block."""
    match = _RESPONSE.match(observation or "")
    return match.group(2) if match else observation


class TripToolEnv:
    """Behavior2Trip for TRL's tool loop over a :class:`TripEnv` (see the module docstring)."""

    def __init__(self, env: Any) -> None:
        self._env = env

    def reset(self, **kwargs: Any) -> str:
        """Start the row's instance (``instance_id``; else a random one); the task text."""
        options = {"instance_id": kwargs["instance_id"]} if kwargs.get("instance_id") else {}
        messages, _ = self._env.reset(seed=kwargs.get("seed"), options=options)
        return messages[-1]["content"]

    def _step(self, text: str) -> str:
        if self._env.done:
            return json.dumps({"error": "the episode is over: the plan was submitted"})
        observation, *_ = self._env.step(text)
        return _unwrap(observation) if observation else "The plan was submitted."

    def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        call = {"name": name, "arguments": {k: v for k, v in arguments.items() if v is not None}}
        return self._step(f"<tool_call>{json.dumps(call, ensure_ascii=False)}</tool_call>")

    def memory(self, action: Literal["read", "write"], key: str, value: str | None = None) -> str:
        """Read or write the session memory, a dictionary kept for this task.

        Args:
            action: "write" stores value under key; "read" returns the value of key ("all": everything).
            key: The memory key, e.g. "preferences".
            value: The value to store (text; JSON allowed), for "write" only.

        Returns:
            The stored value (read) or a confirmation (write), or an error.
        """
        op: dict[str, Any] = {"action": action, "key": key}
        if action == "write":
            op["value"] = value
        return self._step(f"<memory>{json.dumps(op, ensure_ascii=False)}</memory>")

    def submit_plan(self, plan: str) -> str:
        """Deliver the final travel plan; this ends the task.

        Args:
            plan: The plan as a JSON list with one object per day of the trip.

        Returns:
            A confirmation.
        """
        return self._step(f"<answer>{plan}</answer>")

    def get_reward(self) -> float:
        """R_total of the episode (without a submitted plan: the invalid-action penalty)."""
        if self._env.reward is not None:
            return float(self._env.reward.total)
        steps = self._env.tools.steps if self._env.tools is not None else []
        invalid = sum(len(s.invalid_actions) for s in steps)
        return b2t_reward(None, invalid, penalty=self._env.penalty, gate=self._env.gate).total


class CompassToolEnv:
    """COMPASS for TRL's tool loop over a :class:`CompassEnv` (see the module docstring)."""

    def __init__(self, env: Any) -> None:
        self._env = env
        self._calls = 0

    def reset(self, **kwargs: Any) -> str:
        """Start the row's task (``task_id``; else a random one); the user's opening words."""
        options = {"task_id": kwargs["task_id"]} if kwargs.get("task_id") else {}
        messages, _ = self._env.reset(seed=kwargs.get("seed"), options=options)
        return messages[-1]["content"]

    def _observe(self, action: dict[str, Any]) -> str:
        if self._env.done:
            return json.dumps({"error": "the conversation is over"})
        observation, *_ = self._env.step(action)
        parts = [m["content"] if m["role"] == "tool" else f"The user says: {m['content']}"
                 for m in observation]  # fmt: skip
        return "\n\n".join(parts) if parts else "The conversation is over."

    def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        self._calls += 1
        args = {k: v for k, v in arguments.items() if v is not None}
        call = {"id": f"call_{self._calls}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}  # fmt: skip
        return self._observe({"role": "assistant", "content": None, "tool_calls": [call]})

    def reply_to_user(self, message: str, hotel: str | None = None, flight: str | None = None,
                      permit: str | None = None) -> str:  # fmt: skip
        """Say something to the user, optionally recommending one complete itinerary.

        Args:
            message: What the user reads.
            hotel: The recommended hotel package ID (pkg_...), validated with recommend_hotel.
            flight: The recommended flight package ID (flight_...), validated with recommend_flight.
            permit: The recommended permit package ID (permit_...), validated with recommend_permit.

        Returns:
            The user's reply, or a note that the conversation is over.
        """
        picks = {"hotel": hotel, "flight": flight, "permit": permit}
        reply = {"message": message, "recommendation": picks if any(picks.values()) else None}
        return self._observe({"role": "assistant", "content": json.dumps(reply)})

    def get_reward(self) -> float:
        """The COMPASS reward of the final recommendation (0 before the conversation ends)."""
        return float(self._env.reward.total) if self._env.reward is not None else 0.0


def _tools() -> None:
    from travelgym.suites.behavior2trip.tools import trips_registry
    from travelgym.suites.compass.tools import compass_registry

    add_tools(TripToolEnv, trips_registry())
    add_tools(CompassToolEnv, compass_registry())


_tools()


def compass_tool_prompt() -> str:
    """The COMPASS system prompt for native tool calls: reply through ``reply_to_user``."""
    from travelgym.suites.compass.agents.llm_agent import SYSTEM_PROMPT
    from travelgym.suites.compass.agents.response_format import FORMAT_INSTRUCTIONS

    return SYSTEM_PROMPT.replace(FORMAT_INSTRUCTIONS, "Talk to the user only with the "
                                 "reply_to_user tool; recommend exactly one complete itinerary "
                                 "(the package IDs you validated).")  # fmt: skip


def trip_tool_prompt() -> str:
    """The Behavior2Trip system prompt for native tool calls (plan delivered by submit_plan)."""
    from travelgym.suites.behavior2trip.agents.prompts import plan_format

    return TRIP_TOOL_PROMPT.format(plan_format=plan_format())


def trip_env_factory(split: str = "train", *, difficulty: str | None = None,
                     limit: int | None = None, db_seed: int = 0, data_dir: Any = None,
                     **env_kwargs: Any) -> Callable[[], TripToolEnv]:  # fmt: skip
    """A zero-argument factory of :class:`TripToolEnv` (instances loaded once, one database
    connection per environment); ``env_kwargs`` go to :class:`TripEnv` (``memory``,
    ``penalty``, ``max_turns``; default 100 tool calls)."""
    from travelgym.suites.behavior2trip.runner import load_split, select_instances
    from travelgym.training.trip_env import TripEnv

    db, instances, _ = load_split(split, db_seed, data_dir)
    chosen = select_instances(instances, None, difficulty, limit)
    env_kwargs.setdefault("max_turns", 100)
    return lambda: TripToolEnv(TripEnv(db.path, chosen, **env_kwargs))


def compass_env_factory(*, level: int | None = None, limit: int | None = None,
                        db_seed: int = 0, data_dir: Any = None,
                        **env_kwargs: Any) -> Callable[[], CompassToolEnv]:  # fmt: skip
    """A zero-argument factory of :class:`CompassToolEnv` (tasks and ground truth loaded
    once); ``env_kwargs`` go to :class:`CompassEnv` (``user``, ``max_turns``, ...)."""
    from travelgym.runner.batch import select_tasks
    from travelgym.suites.compass.build import ensure_database
    from travelgym.suites.compass.ground_truth import ensure_ground_truth
    from travelgym.suites.compass.tasks import load_tasks
    from travelgym.training.compass_env import CompassEnv

    db = ensure_database(seed=db_seed, data_dir=data_dir)
    _, truths = ensure_ground_truth(seed=db_seed, data_dir=data_dir)
    tasks = select_tasks(load_tasks(), None, level, limit)
    return lambda: CompassToolEnv(CompassEnv(db.path, tasks, truths, **env_kwargs))


def trl_rows(suite: str, ids: list[str]) -> list[dict[str, Any]]:
    """Dataset rows for ``environment_factory`` training: the system prompt, an empty user
    message (``reset`` fills it) and the instance / task id."""
    system = trip_tool_prompt() if suite == "behavior2trip" else compass_tool_prompt()
    key = "instance_id" if suite == "behavior2trip" else "task_id"
    prompt = [{"role": "system", "content": system}, {"role": "user", "content": ""}]
    return [{"prompt": prompt, key: i} for i in ids]
