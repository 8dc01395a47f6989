"""The per-episode tool context of a suite whose tools read one SQLite database."""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from travelgym.db import connect_readonly
from travelgym.toolkit.registry import ToolContext

C = TypeVar("C", bound="DatabaseContext")


@dataclass
class DatabaseContext(ToolContext):
    """Tool state over a database connection (a subclass adds its own per-episode fields)."""

    conn: sqlite3.Connection

    @classmethod
    def from_path(cls: type[C], path: str | os.PathLike[str]) -> C:
        """A context over a read-only connection to the database at ``path``."""
        return cls(connect_readonly(Path(path)))

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()
