"""What a person types as the agent (``travelgym play --as agent``), read into a message, tool
calls or a command, with the tool schemas the agent offers as the reference.

One line is one turn:

- ``/NAME [ARG]``: a command (``/help``, ``/tools``, ``/quit``, ...), answered at once;
- ``TOOL key=value ...`` or ``TOOL {"key": ...}``: a tool call; several separated by ``;``.
  ``key=value`` values are typed by the tool's schema: ``nights=2`` is the integer 2 where the
  parameter is an integer, ``park=2`` the string ``"2"`` where it is a string; quote a value with
  spaces (``location="Grand Canyon"``);
- anything else: the message that ends the agent's step (its text, in the format the agent's
  system prompt asks for).

Mistakes the person can fix at once (an unknown tool, bad JSON, a missing required argument)
are an :class:`InputError` with a one-line message; everything else goes to the tools, whose
own validation answers as it would answer a model.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_CALL = re.compile(r"^([A-Za-z_][\w.\-]*)(?:\s+(.*))?$", re.S)
_KEY_VALUE = re.compile(r"^[A-Za-z_]\w*=")
_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
               (list, "array"), (dict, "object"), (type(None), "null"))  # fmt: skip


class InputError(ValueError):
    """A line that cannot be sent as typed (the message is one line, for the person)."""


@dataclass
class Entry:
    """One line read: ``kind`` is ``message`` (``text``), ``calls`` (``(name, arguments)``
    pairs) or ``command`` (``name`` without the slash, ``text`` its argument)."""

    kind: str
    text: str = ""
    name: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def tools_by_name(tools: list[dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """The OpenAI function schemas of ``tools`` by function name (malformed entries skipped)."""
    out: dict[str, dict[str, Any]] = {}
    for tool in tools or ():
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            out[function["name"]] = function
    return out


def parse_line(line: str, tools: dict[str, dict[str, Any]]) -> Entry | None:
    """``line`` as an :class:`Entry` (``None`` for a blank line); :class:`InputError` for a tool
    call that cannot be made as typed."""
    text = line.strip()
    if not text:
        return None
    if text.startswith("/"):
        name, _, rest = text[1:].partition(" ")
        return Entry("command", text=rest.strip(), name=name.lower())
    if not tools:
        return Entry("message", text=line.rstrip("\n"))
    segments = split_calls(text)
    if not looks_like_call(segments[0], tools):
        return Entry("message", text=line.rstrip("\n"))
    return Entry("calls", calls=[parse_call(s, tools) for s in segments])


def looks_like_call(segment: str, tools: dict[str, dict[str, Any]]) -> bool:
    """Whether ``segment`` is meant as a tool call: it starts with a tool's name, or with a
    name followed by JSON or ``key=value`` arguments, or is one name with an underscore
    (``search_hotel``); plain sentences are messages."""
    match = _CALL.match(segment)
    if match is None:
        return False
    name, rest = match.group(1), (match.group(2) or "").strip()
    if name in tools:
        return True
    if not rest:
        return "_" in name
    return rest.startswith("{") or bool(_KEY_VALUE.match(rest))


def split_calls(text: str) -> list[str]:
    """``text`` split at the ``;`` that are outside quotes and brackets (blank parts dropped)."""
    return _split_top(text, ";") or [text]


def _split_top(text: str, separators: str) -> list[str]:
    """``text`` split at the ``separators`` characters outside quotes and brackets (quotes and
    brackets kept; blank parts dropped)."""
    parts, start, depth, quote, escaped = [], 0, 0, "", False
    for i, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth = max(0, depth - 1)
        elif char in separators and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def parse_call(segment: str, tools: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """One ``TOOL args`` segment as ``(name, arguments)``; :class:`InputError` when the tool is
    unknown, the arguments are not JSON / ``key=value`` pairs, or a required one is missing."""
    match = _CALL.match(segment)
    if match is None:
        raise InputError(f"not a tool call: {segment!r}")
    name, rest = match.group(1), (match.group(2) or "").strip()
    schema = tools.get(name)
    if schema is None:
        raise InputError(f"unknown tool {name!r} (/tools lists them; /say TEXT sends a message "
                         "that looks like a call)")  # fmt: skip
    params = schema.get("parameters") or {}
    properties = params.get("properties") or {}
    if rest.startswith("{"):
        try:
            arguments = json.loads(rest)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise InputError(f"bad JSON arguments for {name}: {exc}") from None
        if not isinstance(arguments, dict):
            raise InputError(f"the JSON arguments of {name} must be an object")
    else:
        arguments = _key_values(name, rest, properties)
    missing = [p for p in params.get("required") or () if p not in arguments]
    if missing:
        raise InputError(f"{name} needs {', '.join(missing)} (/tools {name} shows its "
                         "parameters)")  # fmt: skip
    return name, arguments


def _key_values(name: str, rest: str, properties: dict[str, Any]) -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    for token in _split_top(rest, " \t\n"):
        key, sep, raw = token.partition("=")
        if not sep or not key:
            raise InputError(f"argument {token!r} of {name} is not key=value (or give the "
                             "arguments as one JSON object)")  # fmt: skip
        arguments[key] = typed_value(raw, properties.get(key) or {})
    return arguments


def schema_types(schema: dict[str, Any]) -> set[str]:
    """The JSON types a parameter schema allows (``type``, also inside ``anyOf``/``oneOf``)."""
    found: set[str] = set()
    kind = schema.get("type")
    if isinstance(kind, str):
        found.add(kind)
    elif isinstance(kind, list):
        found.update(k for k in kind if isinstance(k, str))
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key) or ():
            if isinstance(option, dict):
                found |= schema_types(option)
    if "enum" in schema and not found:
        found.update(json_type(v) for v in schema["enum"])
    return found


def json_type(value: Any) -> str:
    """The JSON type name of a decoded JSON value."""
    for kind, name in _JSON_TYPES:
        if isinstance(value, kind):
            return name
    return "string"


def typed_value(raw: str, schema: dict[str, Any]) -> Any:
    """A ``key=value`` value typed by the parameter's schema: a quoted value is a string
    (``"Grand Canyon"``, ``'2'``); otherwise JSON where it decodes to a type the schema allows
    (an integer for ``integer``, ``true`` for ``boolean``, a list for ``array``...), else the
    text itself (a string parameter always gets the text)."""
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return _unquote(raw)
    allowed = schema_types(schema)
    if allowed == {"string"}:
        return raw
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        return raw
    kind = json_type(value)
    if not allowed or kind in allowed or (kind == "integer" and "number" in allowed):
        return value
    return raw if "string" in allowed else value


def _unquote(raw: str) -> str:
    if raw[0] == '"':
        try:
            value = json.loads(raw)
        except (json.JSONDecodeError, RecursionError):
            value = None
        if isinstance(value, str):
            return value
    return raw[1:-1]


def describe_tools(tools: dict[str, dict[str, Any]], name: str = "") -> str:
    """``/tools``: every tool with its parameters and the first line of its description, or
    one tool (``name``) in full."""
    if name:
        schema = tools.get(name)
        if schema is None:
            raise InputError(f"unknown tool {name!r} (/tools lists them)")
        lines = [f"{name}({_signature(schema)})", str(schema.get("description") or "")]
        params = schema.get("parameters") or {}
        required = set(params.get("required") or ())
        for pname, spec in (params.get("properties") or {}).items():
            mark = "required" if pname in required else "optional"
            lines.append(f"  {pname}: {_type_text(spec)}, {mark}. {spec.get('description', '')}")
        return "\n".join(lines)
    lines = []
    for tool_name, schema in tools.items():
        summary = str(schema.get("description") or "").strip().split("\n")[0]
        lines.append(f"{tool_name}({_signature(schema)})\n    {summary}")
    return "\n".join(lines) or "(no tools)"


def _signature(schema: dict[str, Any]) -> str:
    params = schema.get("parameters") or {}
    required = set(params.get("required") or ())
    parts = []
    for pname, spec in (params.get("properties") or {}).items():
        optional = "" if pname in required else "?"
        parts.append(f"{pname}{optional}: {_type_text(spec)}")
    return ", ".join(parts)


def _type_text(spec: dict[str, Any]) -> str:
    if "enum" in spec:
        return "|".join(json.dumps(v) for v in spec["enum"])
    kinds = sorted(schema_types(spec))
    return "|".join(kinds) if kinds else "any"
