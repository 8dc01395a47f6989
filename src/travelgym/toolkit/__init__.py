"""Tool registry shared by every suite: one typed function per tool, everything else derived."""

from travelgym.toolkit.errors import ContentError, ErrorCategory, ToolError, ToolResult
from travelgym.toolkit.registry import Tool, ToolContext, ToolRegistry, tool

__all__ = [
    "ContentError",
    "ErrorCategory",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "ToolResult",
    "tool",
]
