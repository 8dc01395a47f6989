"""A Markdown tool reference generated from a registry (names, parameters, returns, errors)."""

from __future__ import annotations

from typing import Any

from travelgym.toolkit.registry import Tool, ToolRegistry

ERRORS_INTRO = """A call never raises. A failed call returns `{"error": {"category": ..., "message": ...}}`;
the message says how to fix the call."""


def errors_section(content_errors: str, intro: str = ERRORS_INTRO) -> str:
    """The ``## Errors`` section: ``intro`` and the table of categories, with ``content_errors``
    saying when a call is a ``content`` error (the suite's wording: what its tools cannot
    serve)."""
    rows = [
        ("tool_name", "the tool does not exist"),
        ("parameter", "arguments are not a JSON object, a required parameter is missing, an "
                      "unknown parameter is given, or a value has the wrong type or is out of "
                      "its range. Types are strict: a string is never taken for an `integer`, "
                      "`number` or `boolean` (`\"2\"` for an `integer` is this error), a number "
                      "never for a `boolean`; JSON has one number type, so an integer is a valid "
                      "`number` and an integral float (`2.0`) a valid `integer`, while `2.5` is "
                      "not"),
        ("content", content_errors),
        ("internal", "a bug in the tool (never expected; recorded so it can be fixed)"),
    ]  # fmt: skip
    lines = ["## Errors", "", intro, "", "| category | when |", "| --- | --- |"]
    lines += [f"| `{category}` | {when} |" for category, when in rows]
    return "\n".join(lines) + "\n"


def _type(schema: dict[str, Any]) -> str:
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"] if s.get("type") != "null")
    if "enum" in schema:
        return " / ".join(f"`{v}`" for v in schema["enum"])
    if schema.get("type") == "array":
        return f"array of {_type(schema.get('items', {}))}"
    return schema.get("type", "any")


def _limits(schema: dict[str, Any]) -> str:
    parts = []
    for s in [schema, *schema.get("anyOf", [])]:
        for key, label in (
            ("minimum", ">="),
            ("maximum", "<="),
            ("minItems", "items >="),
            ("maxItems", "items <="),
        ):
            if key in s:
                parts.append(f"{label} {s[key]}")
    return ", ".join(parts)


def render_tool(tool: Tool) -> str:
    """One tool's section: description, parameter table."""
    schema = tool.json_schema()
    required = set(schema.get("required", []))
    description, _, returns = tool.description.partition("\n\nReturns: ")
    lines = [f"### `{tool.name}`", "", description, ""]
    if schema["properties"]:
        lines += [
            "| parameter | type | required | default | description |",
            "| --- | --- | --- | --- | --- |",
        ]
        for name, prop in schema["properties"].items():
            limits = _limits(prop)
            typ = _type(prop) + (f" ({limits})" if limits else "")
            default = "" if name in required else f"`{prop.get('default')}`"
            text = (prop.get("description") or "").replace("|", "\\|")
            lines.append(
                f"| `{name}` | {typ} | {'yes' if name in required else 'no'} | {default} | {text} |"
            )
        lines.append("")
    if returns:
        lines += [f"**Returns:** {returns}", ""]
    return "\n".join(lines)


def render_markdown(
    registry: ToolRegistry,
    title: str,
    intro: str = "",
    *,
    content_errors: str,
    errors_intro: str = ERRORS_INTRO,
) -> str:
    """The whole reference for ``registry``: the caller (the suite) gives the ``title``, the
    ``intro`` and the texts of the errors section (see :func:`errors_section`)."""
    parts = [f"# {title}", "", "Generated from the tool registry: do not edit by hand.", ""]
    if intro:
        parts += [intro, ""]
    parts += [f"{len(registry)} tools: " + ", ".join(f"`{n}`" for n in registry.names), ""]
    parts += [errors_section(content_errors, errors_intro), "## Tools", ""]
    parts += [render_tool(registry[name]) for name in registry.names]
    return "\n".join(parts).rstrip() + "\n"
