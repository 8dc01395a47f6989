"""Per-episode state of the TravelPlanner tools: the sandbox they search and the notebook the
agent fills for the planning stage."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from travelgym.suites.travelplanner.sandbox import Sandbox
from travelgym.toolkit import ToolContext


@dataclass
class PlannerContext(ToolContext):
    """The sandbox, the notebook (``{"Description", "Content"}`` entries, as the dataset's
    reference information is) and the last search's result, which ``notebook_write`` records."""

    sandbox: Sandbox
    notebook: list[dict[str, str]] = field(default_factory=list)
    # (what was searched, the result as text) of the last successful search, if any
    last_result: tuple[str, str] | None = None

    def remember(self, description: str, text: str, content: Any) -> Any:
        """Keep a search's result for ``notebook_write``; return ``content`` (the reply)."""
        self.last_result = (description, text)
        return content

    def reference_information(self) -> list[dict[str, str]]:
        """The notebook in the dataset's reference-information form (a copy)."""
        return [dict(entry) for entry in self.notebook]
