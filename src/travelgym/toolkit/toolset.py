"""A suite's tools as one value: the functions, their registry (built once) and the Markdown
reference the suite publishes for them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from travelgym.toolkit.docs import render_markdown
from travelgym.toolkit.registry import ToolRegistry


@dataclass
class ToolSet:
    """``tools`` with the ``title``, ``intro`` and ``content_errors`` wording of their reference
    (see :func:`~travelgym.toolkit.docs.render_markdown`)."""

    tools: tuple[Callable[..., Any], ...]
    title: str
    intro: str = ""  # also the instructions of the MCP server that serves them
    content_errors: str = ("a well-formed call that cannot be served (an unknown id, nothing "
                           "found)")  # fmt: skip
    _registry: ToolRegistry | None = field(default=None, init=False, repr=False, compare=False)

    def registry(self) -> ToolRegistry:
        """The registry of the tools, built on the first call: the tools are stateless functions
        (state lives in the context), so one registry serves every episode."""
        if self._registry is None:
            self._registry = ToolRegistry(self.tools)
        return self._registry

    def reference(self) -> str:
        """The Markdown tool reference."""
        return render_markdown(self.registry(), self.title, self.intro,
                               content_errors=self.content_errors)  # fmt: skip
