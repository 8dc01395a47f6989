"""DatabaseContext: a suite's tool context over one read-only SQLite connection."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

import pytest

from travelgym.toolkit.database_context import DatabaseContext


@dataclass
class NotesContext(DatabaseContext):
    notes: list[str] = field(default_factory=list)


def test_from_path_builds_the_subclass_over_a_read_only_connection(tmp_path):
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.execute("INSERT INTO t VALUES (1)")
    conn.close()
    context = NotesContext.from_path(str(path))
    assert type(context) is NotesContext and context.notes == []
    assert [tuple(r) for r in context.conn.execute("SELECT x FROM t")] == [(1,)]
    with pytest.raises(sqlite3.DatabaseError):
        context.conn.execute("INSERT INTO t VALUES (2)")
    context.close()
    with pytest.raises(sqlite3.ProgrammingError):
        context.conn.execute("SELECT 1")
