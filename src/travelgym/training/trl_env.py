"""The suites as TRL ``environment_factory`` environments, for TRL's native tool loop.

``GRPOTrainer(..., environment_factory=environment_factory(SUITE, ...))`` gives every rollout
its own environment: ``reset(**row)`` starts the dataset row's instance / task and returns the
task text (TRL appends it to the prompt's last user message); every public method is a tool the
model calls with its chat template's native tool-call format (e.g. Qwen3); ``get_reward()``
scores the rollout when it ends. Each suite writes its environment class
(:meth:`~travelgym.core.suite.Suite.trl_environment`) and gets its tool methods from this module
(:func:`add_tools`): they are generated from the suite's tool registry
(:mod:`travelgym.toolkit.registry`) with real type hints and Google-style docstrings, so
``transformers.utils.get_json_schema`` reads them; each runs through the suite's training
environment (:meth:`~travelgym.core.suite.Suite.training_env`), so the reward is the suite's
reward as everywhere. :func:`trl_rows` makes the dataset rows.

``travelgym train grpo`` does not use these: it runs its own rollouts
(:mod:`~travelgym.training.rollout`) for the exact B2T action format and loss mask. These are
for models trained with native tool calls; see ``docs/training/grpo.md``.
"""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Callable
from typing import Any, Literal

from travelgym.core.registry import get_suite
from travelgym.toolkit.registry import Tool, ToolRegistry

_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool,
                               "object": dict, "array": list}  # fmt: skip


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


def environment_factory(suite: str, **kwargs: Any) -> Callable[[], Any]:
    """A zero-argument factory of ``suite``'s TRL environments, for ``GRPOTrainer(...,
    environment_factory=...)``; ``kwargs`` choose the instances / tasks and go to the suite's
    training environment (:meth:`~travelgym.core.suite.Suite.trl_environment`)."""
    return get_suite(suite).trl_environment(**kwargs)


def trl_rows(suite: str, ids: list[str]) -> list[dict[str, Any]]:
    """Dataset rows for ``environment_factory`` training: the suite's system prompt for native
    tool calls, an empty user message (``reset`` fills it) and the instance / task id."""
    chosen = get_suite(suite)
    prompt = [{"role": "system", "content": chosen.trl_system_prompt()},
              {"role": "user", "content": ""}]  # fmt: skip
    return [{"prompt": prompt, chosen.training_task_key: i} for i in ids]
