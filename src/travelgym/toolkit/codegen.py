"""Python bindings derived from a registry: one plain function per tool, for code agents.

Each generated function has the tool's parameter names (required ones first may be passed by
position), its description as docstring, and returns the payload of ``ToolRegistry.call``: the
content, or an ``{"error": {...}}`` dict; a binding never raises for a bad call. No source text
is generated or evaluated: functions are closures with an ``inspect.Signature`` attached.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

from travelgym.toolkit.errors import ErrorCategory, ToolResult
from travelgym.toolkit.registry import Tool, ToolRegistry

Caller = Callable[[str, dict[str, Any]], Any]  # (tool name, arguments) -> payload

_JSON_TYPES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
    "object": "dict",
}


class _Annotation:
    """An annotation shown as plain text in signatures (``int | None``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def type_text(schema: dict[str, Any]) -> str:
    """A Python-looking type for a JSON schema (``str``, ``list[str]``, ``int | None``...)."""
    if "anyOf" in schema:
        parts = [type_text(s) for s in schema["anyOf"]]
        return " | ".join(dict.fromkeys(parts))
    if "enum" in schema:
        return f"Literal[{', '.join(repr(v) for v in schema['enum'])}]"
    if schema.get("type") == "array":
        return f"list[{type_text(schema.get('items', {}))}]"
    return _JSON_TYPES.get(schema.get("type", ""), "Any")


def tool_signature(tool: Tool) -> inspect.Signature:
    """The signature of a tool's binding, derived from its JSON schema."""
    schema = tool.json_schema()
    required = set(schema.get("required", []))
    params, kind, seen_default = [], inspect.Parameter.POSITIONAL_OR_KEYWORD, False
    for name, prop in schema["properties"].items():
        if name in required and seen_default:
            kind = inspect.Parameter.KEYWORD_ONLY  # a required parameter after an optional one
        default = inspect.Parameter.empty if name in required else prop.get("default")
        seen_default |= name not in required
        annotation = _Annotation(type_text(prop))
        params.append(inspect.Parameter(name, kind, default=default, annotation=annotation))
    return inspect.Signature(params, return_annotation=_Annotation("dict"))


def tool_docstring(tool: Tool) -> str:
    """The tool's description, its parameters' descriptions, then what it returns."""
    description, _, returns = tool.description.partition("\n\nReturns: ")
    lines = [description]
    docs = [(n, tool.param_docs.get(n, "")) for n in tool.args_model.model_fields]
    if docs:
        lines += ["", "Args:"] + [f"    {n}: {d}".rstrip() for n, d in docs]
    if returns:
        lines += ["", "Returns:", f"    {returns}"]
    return "\n".join(lines)


def _arguments(sig: inspect.Signature, args: tuple, kwargs: dict[str, Any]) -> dict | str:
    positional = [p.name for p in sig.parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD]
    if len(args) > len(positional):
        return f"takes at most {len(positional)} positional arguments ({len(args)} given)"
    named = dict(zip(positional, args, strict=False))
    twice = sorted(set(named) & set(kwargs))
    if twice:
        return f"got multiple values for {', '.join(twice)}"
    return {**named, **kwargs}


def make_function(tool: Tool, call: Caller) -> Callable[..., Any]:
    """A plain function for ``tool`` that forwards its arguments to ``call``."""
    sig = tool_signature(tool)
    name = tool.name

    def binding(*args: Any, **kwargs: Any) -> Any:
        arguments = _arguments(sig, args, kwargs)
        if isinstance(arguments, str):
            message = f"{name}() {arguments}; signature: {name}{sig}"
            return ToolResult.failure(name, ErrorCategory.PARAMETER, message).payload()
        return call(name, arguments)

    binding.__name__ = binding.__qualname__ = name
    binding.__doc__ = tool_docstring(tool)
    binding.__signature__ = sig  # type: ignore[attr-defined]
    return binding


def build_module(registry: ToolRegistry, call: Caller, name: str = "tools") -> types.ModuleType:
    """A module holding one binding per tool of ``registry`` (``from tools import ...``)."""
    module = types.ModuleType(name, "Tools callable as Python functions; each returns a dict.")
    for tool_name in registry.names:
        function = make_function(registry[tool_name], call)
        function.__module__ = name
        setattr(module, tool_name, function)
    module.__all__ = list(registry.names)
    return module


def registry_caller(registry: ToolRegistry, context: Any = None) -> Caller:
    """A ``Caller`` that runs tools through ``registry.call`` and returns their payloads."""
    return lambda name, arguments: registry.call(name, arguments, context).payload()


def describe_tools(registry: ToolRegistry, module: str = "tools") -> str:
    """What a code agent's prompt lists: each binding's signature and one-line description."""
    lines = [f"Functions of the `{module}` module (each returns a dict; errors are dicts too):"]
    for tool_name in registry.names:
        tool = registry[tool_name]
        summary = tool.description.strip().splitlines()[0] if tool.description else ""
        lines += [f"- {tool_name}{tool_signature(tool)}", f"    {summary}"]
    return "\n".join(lines)
