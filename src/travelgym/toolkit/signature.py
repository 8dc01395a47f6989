"""A registry tool as a plain typed Python function: real parameters with type hints and a
Google-style docstring, so that readers of Python signatures (``transformers``'
``get_json_schema``, TRL's tool loop) see the schema the registry gives a model."""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Callable
from typing import Any, Literal

from travelgym.toolkit.registry import Tool

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


def typed_function(tool: Tool, body: Callable[[str, dict[str, Any]], Any]) -> Callable[..., Any]:
    """A function ``(**arguments)`` returning ``body(tool.name, arguments)`` (the arguments
    left unset dropped), with the tool's keyword-only parameters, type hints and docstring."""
    schema = tool.json_schema()
    required = set(schema.get("required", []))
    params, annotations = [], {}
    for name, prop in schema["properties"].items():
        hint = type_hint(prop)
        default = (inspect.Parameter.empty if name in required
                   else tool.args_model.model_fields[name].default)  # fmt: skip
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=hint))  # fmt: skip
        annotations[name] = hint

    def function(**arguments: Any) -> Any:
        return body(tool.name, {k: v for k, v in arguments.items() if v is not None})

    function.__name__ = function.__qualname__ = tool.name
    function.__doc__ = tool_docstring(tool)
    function.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    function.__annotations__ = {**annotations, "return": str}
    return function


def typed_functions(
    registry: Any, body: Callable[[str, dict[str, Any]], Any]
) -> list[Callable[..., Any]]:
    """:func:`typed_function` of every tool of ``registry``, in its order."""
    return [typed_function(registry[name], body) for name in registry.names]
