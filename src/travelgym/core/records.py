"""The tool-call record every suite's trajectories share, and how an agent's call is made safe
to run and record."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from travelgym.llm.protocol import Repair
from travelgym.llm.text import clean_arguments, clean_text


class ToolCallRecord(BaseModel):
    """One tool call of the agent: name, raw arguments, result or categorised error."""

    id: str
    name: str
    arguments: Any  # as the agent sent them (dict or raw JSON text)
    ok: bool
    result: Any = None  # the payload the agent saw (omitted for scripted agents: see result_chars)
    result_chars: int = 0  # size of the payload as JSON text
    error_category: str | None = None
    error_message: str | None = None
    duration_ms: float = 0.0
    # Code agents: ``run_python`` calls are containers (not searches); each tool call their code
    # made is recorded as a call of its own whose ``parent`` is the container's id.
    container: bool = False
    parent: str | None = None
    repairs: list[Repair] = Field(default_factory=list)  # invalid Unicode replaced in arguments


def clean_tool_call(name: Any, arguments: Any) -> tuple[Any, Any, Any, list[Repair]]:
    """A tool call from an agent made safe to run and record: ``(name, arguments to run,
    arguments to record, repairs)``; invalid Unicode in the name or the arguments is replaced
    with U+FFFD (see :func:`~travelgym.llm.text.clean_arguments`) and listed as repairs."""
    repairs = []
    if isinstance(name, str):
        name, replaced = clean_text(name)
        if replaced:
            repairs.append(Repair(kind="invalid_unicode", where="name", count=replaced))
    to_run, to_record, replaced = clean_arguments(arguments)
    if replaced:
        repairs.append(Repair(kind="invalid_unicode", where="arguments", count=replaced))
    return name, to_run, to_record, repairs
