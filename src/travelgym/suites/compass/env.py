"""The agent's side of a COMPASS episode: the tool session (the 18 tools over a fresh
per-episode context, every call recorded)."""

from __future__ import annotations

import sqlite3

from travelgym.agents.tool_session import ToolSession
from travelgym.suites.compass.context import CompassContext, ToolCache
from travelgym.suites.compass.tools import compass_registry


class CompassToolSession(ToolSession):
    """The COMPASS tools over one episode's database connection; records calls, never raises.
    ``cache``: the run's shared :class:`ToolCache` (default: one of the episode's own)."""

    def __init__(self, conn: sqlite3.Connection, keep_results: bool = True,
                 cache: ToolCache | None = None) -> None:  # fmt: skip
        context = CompassContext(conn, cache=cache if cache is not None else ToolCache())
        super().__init__(compass_registry(), context, keep_results)
