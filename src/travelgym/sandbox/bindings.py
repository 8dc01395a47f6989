"""Child side: open a tool suite read-only and expose it as an importable module."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from travelgym.toolkit import ToolContext, ToolRegistry
from travelgym.toolkit.codegen import build_module

NOTEBOOK_FILE = ".notebook.json"
_READ_ACTIONS = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)


def open_suite(suite: str, db_path: str) -> tuple[ToolRegistry, ToolContext]:
    """The registry and a fresh per-episode context of a tool suite."""
    if suite == "compass":
        from travelgym.parks.tools import CompassContext, compass_registry

        return compass_registry(), CompassContext.from_path(db_path)
    raise ValueError(f"unknown tool suite {suite!r}")


def _read_only(action: int, *_: Any) -> int:
    return sqlite3.SQLITE_OK if action in _READ_ACTIONS else sqlite3.SQLITE_DENY


def harden(conn: sqlite3.Connection) -> None:
    """Allow only reads (a ``mode=ro`` connection still lets ATTACH create files)."""
    if hasattr(conn, "setlimit"):  # Python 3.11+
        conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    conn.set_authorizer(_read_only)


class NotebookStore:
    """Keeps a context's ``notebook`` list in a JSON file of the working directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._saved: list[str] | None = None

    def load(self, context: Any) -> None:
        if not isinstance(getattr(context, "notebook", None), list) or not self.path.is_file():
            return
        try:
            notes = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(notes, list) and all(isinstance(n, str) for n in notes):
            context.notebook[:] = notes
            self._saved = list(notes)

    def save(self, context: Any) -> None:
        notes = getattr(context, "notebook", None)
        if isinstance(notes, list) and notes != self._saved:
            try:
                self.path.write_text(json.dumps(notes), encoding="utf-8")
            except OSError:  # e.g. the file size limit; the notes stay in memory
                return
            self._saved = list(notes)


def install_tools(suite: str, db_path: str, workdir: str, module: str = "tools") -> None:
    """Open the suite, restore the notebook and register the bindings as ``module``."""
    registry, context = open_suite(suite, db_path)
    conn = getattr(context, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        harden(conn)
    store = NotebookStore(Path(workdir) / NOTEBOOK_FILE)
    store.load(context)

    def call(name: str, arguments: dict[str, Any]) -> Any:
        try:
            return registry.call(name, arguments, context).payload()
        finally:
            store.save(context)

    sys.modules[module] = build_module(registry, call, module)
