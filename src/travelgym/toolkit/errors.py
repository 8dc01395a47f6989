"""Tool results and the error taxonomy (COMPASS Table 4: tool name, parameter, content)."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel


class ErrorCategory(str, Enum):
    TOOL_NAME = "tool_name"  # the tool does not exist
    PARAMETER = "parameter"  # missing, extra, mistyped or malformed arguments
    CONTENT = "content"  # well-formed call that cannot be served (unknown park, bad ID, ...)
    INTERNAL = "internal"  # a bug in the tool itself; never expected, always recorded


class ContentError(Exception):
    """Raised by a tool body when a well-formed request cannot be served; becomes a result."""


class ToolError(BaseModel):
    category: ErrorCategory
    message: str


class ToolResult(BaseModel):
    """What every tool call returns: ``content`` on success, ``error`` otherwise."""

    tool: str
    ok: bool
    content: Any = None
    error: ToolError | None = None

    @classmethod
    def success(cls, tool: str, content: Any) -> ToolResult:
        return cls(tool=tool, ok=True, content=content)

    @classmethod
    def failure(cls, tool: str, category: ErrorCategory, message: str) -> ToolResult:
        return cls(tool=tool, ok=False, error=ToolError(category=category, message=message))

    def payload(self) -> Any:
        """The JSON-able body an agent sees: the content, or ``{"error": {...}}``."""
        if self.ok:
            return self.content
        return {"error": {"category": self.error.category.value, "message": self.error.message}}
