"""The ``@tool`` decorator and ``ToolRegistry``.

A tool is one typed Python function with a Google-style docstring. From it we derive the argument
model (pydantic, strict, extra arguments forbidden), the OpenAI function-calling schema and the
description. Arguments are typed strictly, as the schema says: a string is never coerced to an
integer, number or boolean (``"2"`` for an ``integer`` parameter is a parameter error), and a
number is never a boolean. JSON has one number type, so an integer is a valid ``number`` and a
float with an integral value (``2.0``) a valid ``integer`` (JSON Schema's own rule); ``2.5`` for
an ``integer`` is refused. A parameter annotated with a :class:`ToolContext` subclass receives per-episode state
and is hidden from the schema. :meth:`ToolRegistry.call` never raises: every failure becomes a
categorised :class:`ToolResult`.
"""

from __future__ import annotations

import inspect
import json
import re
import sqlite3
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from travelgym.core.outcomes import InfraError
from travelgym.toolkit.errors import ContentError, ErrorCategory, ToolResult


class ToolContext:
    """Base class of per-episode state injected into tools (connection, notebook, ...)."""


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into the description and per-argument texts."""
    doc = inspect.cleandoc(doc or "")
    parts = re.split(r"^\s*(Args|Arguments|Returns|Raises):\s*$", doc, flags=re.M)
    description = parts[0].strip()
    params: dict[str, str] = {}
    for title, body in zip(parts[1::2], parts[2::2], strict=False):
        if title in ("Args", "Arguments"):
            current = None
            for line in body.splitlines():
                match = re.match(r"^\s{0,8}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$", line)
                if match:
                    current = match.group(1)
                    params[current] = match.group(2).strip()
                elif current and line.strip():
                    params[current] += " " + line.strip()
        elif title == "Returns":
            description += "\n\nReturns: " + " ".join(body.split())
    return description, params


@dataclass
class Tool:
    """A registered tool: the function plus everything derived from it."""

    name: str
    func: Callable[..., Any]
    description: str
    args_model: type[BaseModel]
    context_param: str | None
    param_docs: dict[str, str] = field(default_factory=dict)
    int_params: frozenset[str] = frozenset()  # parameters whose schema type is integer, not number

    @classmethod
    def from_function(cls, func: Callable[..., Any], name: str | None = None) -> Tool:
        hints = typing.get_type_hints(func, include_extras=True)
        description, param_docs = _parse_docstring(func.__doc__ or "")
        fields: dict[str, Any] = {}
        context_param = None
        for pname, param in inspect.signature(func).parameters.items():
            annotation = hints.get(pname, Any)
            if inspect.isclass(annotation) and issubclass(annotation, ToolContext):
                context_param = pname
                continue
            default = ... if param.default is inspect.Parameter.empty else param.default
            # Annotated keeps the annotation's own constraints (ge, max_length, ...) intact.
            described = Annotated[annotation, Field(description=param_docs.get(pname))]
            fields[pname] = (described, default)
        model = create_model(
            f"{func.__name__}_args", __config__=ConfigDict(extra="forbid", strict=True), **fields
        )
        props = model.model_json_schema().get("properties", {})
        ints = frozenset(n for n, p in props.items() if _integer_only(p))
        return cls(name or func.__name__, func, description, model, context_param, param_docs,
                   ints)  # fmt: skip

    def integral(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """``arguments`` with each float of integral value given for an integer parameter made
        an ``int`` (``2.0`` is an integer in JSON Schema); everything else as given."""
        fixed = {k: int(v) for k, v in arguments.items()
                 if k in self.int_params and type(v) is float and v.is_integer()}  # fmt: skip
        return {**arguments, **fixed} if fixed else arguments

    def json_schema(self) -> dict[str, Any]:
        """The parameters' JSON schema (pydantic's, with titles dropped for brevity)."""
        schema = self.args_model.model_json_schema()
        _strip_titles(schema)
        schema.setdefault("properties", {})
        schema["additionalProperties"] = False
        return schema

    def openai_schema(self) -> dict[str, Any]:
        """The OpenAI function-calling form of this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.json_schema(),
            },
        }


def _integer_only(prop: dict[str, Any]) -> bool:
    """Whether a property's schema allows an integer but no other number."""
    types = {prop.get("type")} | {alt.get("type") for alt in prop.get("anyOf", ())}
    return "integer" in types and "number" not in types


def _strip_titles(node: Any) -> None:
    if isinstance(node, dict):
        node.pop("title", None)
        for key, value in node.items():
            if key != "properties":
                _strip_titles(value)
            else:
                for prop in value.values():
                    _strip_titles(prop)
    elif isinstance(node, list):
        for item in node:
            _strip_titles(item)


def tool(func: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a function as a tool (its ``Tool`` is built when a registry collects it)."""
    func.__travelgym_tool__ = True  # type: ignore[attr-defined]
    return func


class ToolRegistry:
    """An ordered set of tools with schema export and a never-raising ``call``."""

    def __init__(self, functions: Iterable[Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._schemas: list[dict[str, Any]] | None = None
        for func in functions:
            self.register(func)

    def register(self, func: Callable[..., Any]) -> Tool:
        built = Tool.from_function(func)
        if built.name in self._tools:
            raise ValueError(f"duplicate tool name {built.name!r}")
        self._tools[built.name] = built
        self._schemas = None
        return built

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def __getitem__(self, name: str) -> Tool:
        return self._tools[name]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def openai_schemas(self) -> list[dict[str, Any]]:
        """Every tool's OpenAI schema (built once: agents send them with every model call)."""
        if self._schemas is None:
            self._schemas = [t.openai_schema() for t in self._tools.values()]
        return self._schemas

    def call(self, name: Any, arguments: Any, context: ToolContext | None = None) -> ToolResult:
        """Validate and run a tool. ``arguments`` is a dict or a JSON object string."""
        label = name if isinstance(name, str) else _describe(name)
        if not isinstance(name, str) or name not in self._tools:
            return ToolResult.failure(
                label,
                ErrorCategory.TOOL_NAME,
                f"unknown tool {label}; available tools: {', '.join(self._tools)}",
            )
        spec = self._tools[name]
        parsed = _parse_arguments(arguments)
        if isinstance(parsed, str):
            return ToolResult.failure(name, ErrorCategory.PARAMETER, parsed)
        bad_text = _find_unencodable_text(parsed)
        if bad_text is not None:
            return ToolResult.failure(
                name,
                ErrorCategory.PARAMETER,
                f"parameter '{bad_text}' is not valid Unicode text (lone surrogate characters)",
            )
        try:
            args = spec.args_model.model_validate(spec.integral(parsed))
        except ValidationError as exc:
            return ToolResult.failure(name, ErrorCategory.PARAMETER, _explain(spec, exc))
        kwargs = {k: getattr(args, k) for k in spec.args_model.model_fields}
        if spec.context_param is not None:
            kwargs[spec.context_param] = context
        try:
            content = spec.func(**kwargs)
        except ContentError as exc:
            return ToolResult.failure(name, ErrorCategory.CONTENT, str(exc))
        except InfraError:
            raise  # no result the model could act on: the episode ends as an infra error
        except Exception as exc:  # noqa: BLE001 - the tool layer must never raise otherwise
            if isinstance(exc, sqlite3.DatabaseError) and _broken_storage(exc):
                # a damaged or unreadable database: not the model's doing
                raise InfraError("database", f"{name}: {exc}") from exc
            return ToolResult.failure(
                name,
                ErrorCategory.INTERNAL,
                f"internal error in {name}: {type(exc).__name__}: {exc}",
            )
        return ToolResult.success(name, content)


# SQLite's result codes of a database file that is damaged or cannot be read (Python 3.10 has
# no code on the exception: its message is read instead)
BROKEN_STORAGE = {"SQLITE_CORRUPT": "malformed", "SQLITE_NOTADB": "not a database",
                  "SQLITE_IOERR": "disk I/O error", "SQLITE_CANTOPEN": "unable to open"}  # fmt: skip


def _broken_storage(exc: sqlite3.DatabaseError) -> bool:
    """Whether ``exc`` says the database file itself is damaged or unreadable."""
    code = getattr(exc, "sqlite_errorname", None) or ""
    return any(code.startswith(c) or words in str(exc) for c, words in BROKEN_STORAGE.items())


def _parse_arguments(arguments: Any) -> dict[str, Any] | str:
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        text = arguments.strip() or "{}"
        try:
            arguments = json.loads(text)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, or a >4300-digit integer
            return f"arguments are not valid JSON ({exc}); send a JSON object of parameters"
    if not isinstance(arguments, dict):
        return f"arguments must be a JSON object of parameters, got {type(arguments).__name__}"
    if not all(isinstance(k, str) for k in arguments):
        return "argument names must be strings"
    return arguments


def _describe(value: Any) -> str:
    """A short label for a non-string tool name (``repr`` itself may fail on odd values)."""
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # a >4300-digit int, a deeply nested list
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 100 else text[:97] + "..."


def _find_unencodable_text(arguments: dict[str, Any]) -> str | None:
    """The name of the first argument holding text that is not encodable as UTF-8, or None.

    JSON may carry lone surrogates (``"\\ud800"``); SQLite and UTF-8 transports cannot encode
    them, so they are refused up front as a parameter error.
    """
    for key, value in arguments.items():
        stack, seen = [key, value], set()
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return key.encode("utf-8", "backslashreplace").decode("utf-8")
            elif isinstance(item, (dict, list, tuple)) and id(item) not in seen:
                seen.add(id(item))
                stack.extend(item.keys() if isinstance(item, dict) else ())
                stack.extend(item.values() if isinstance(item, dict) else item)
    return None


def _json_type(value: Any) -> str:
    """The JSON type of a value as a model sent it (``a string ("2")``, ``a number``...)."""
    if isinstance(value, str):
        shown = value if len(value) <= 20 else value[:17] + "..."
        return f"a string ({json.dumps(shown)})"
    if isinstance(value, bool):
        return f"a boolean ({json.dumps(value)})"
    if isinstance(value, float):
        return f"a number ({value!r})"
    if isinstance(value, int):
        return "a number"
    if value is None:
        return "null"
    return {dict: "an object", list: "an array"}.get(type(value), type(value).__name__)


def _explain(spec: Tool, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors()[:6]:
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "missing":
            problems.append(f"missing required parameter '{where}'")
        elif err["type"] == "extra_forbidden":
            problems.append(f"unknown parameter '{where}'")
        elif err["type"].endswith("_type") or err["type"] == "int_from_float":
            got = _json_type(err.get("input"))
            problems.append(f"parameter '{where}': {err['msg']}, got {got} (types are strict: "
                            "send the JSON type the schema names)")  # fmt: skip
        else:
            problems.append(f"parameter '{where}': {err['msg']}")
    allowed = ", ".join(
        f"{n}{'' if f.is_required() else ' (optional)'}"
        for n, f in spec.args_model.model_fields.items()
    )
    return f"{'; '.join(problems)}. Parameters of {spec.name}: {allowed}"
