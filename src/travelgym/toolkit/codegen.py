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

from travelgym.sandbox.inside import stubs
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


def binding_spec(tool: Tool) -> dict[str, Any]:
    """The JSON description of a tool's binding (name, docstring, parameters), from which
    :mod:`travelgym.sandbox.inside.stubs` builds the function, in the parent or the sandbox."""
    schema = tool.json_schema()
    required = set(schema.get("required", []))
    params, kind, seen_default = [], "positional", False
    for name, prop in schema["properties"].items():
        if name in required and seen_default:
            kind = "keyword"  # a required parameter after an optional one
        seen_default |= name not in required
        params.append({"name": name, "kind": kind, "has_default": name not in required,
                       "default": prop.get("default"), "type": type_text(prop)})  # fmt: skip
    return {"name": tool.name, "doc": tool_docstring(tool), "params": params, "returns": "dict"}


def tool_signature(tool: Tool) -> inspect.Signature:
    """The signature of a tool's binding, derived from its JSON schema."""
    return stubs.signature(binding_spec(tool))


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


def call_arguments(tool: Tool, args: list | tuple, kwargs: dict[str, Any]) -> dict | str:
    """The arguments object of a binding call (positional ones named), or why it is invalid."""
    sig = tool_signature(tool)
    positional = [p.name for p in sig.parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD]
    if len(args) > len(positional):
        return f"takes at most {len(positional)} positional arguments ({len(args)} given)"
    named = dict(zip(positional, args, strict=False))
    twice = sorted(set(named) & set(kwargs))
    if twice:
        return f"got multiple values for {', '.join(twice)}"
    return {**named, **kwargs}


def invalid_call(tool: Tool, problem: str) -> ToolResult:
    """The parameter error of a binding call whose arguments do not fit its signature."""
    message = f"{tool.name}() {problem}; signature: {tool.name}{tool_signature(tool)}"
    return ToolResult.failure(tool.name, ErrorCategory.PARAMETER, message)


def make_function(tool: Tool, call: Caller) -> Callable[..., Any]:
    """A plain function for ``tool`` that forwards its arguments to ``call``."""

    def forward(name: str, args: list, kwargs: dict[str, Any]) -> Any:
        arguments = call_arguments(tool, args, kwargs)
        if isinstance(arguments, str):
            return invalid_call(tool, arguments).payload()
        return call(name, arguments)

    return stubs.make_binding(binding_spec(tool), forward)


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
