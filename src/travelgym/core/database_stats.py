"""What every suite's database statistics start from: the metadata table and the rows per table,
read over a read-only connection."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable
from contextlib import closing
from typing import TypeVar

from travelgym.db import connect_readonly

T = TypeVar("T")
Compose = Callable[[sqlite3.Connection, dict[str, str], dict[str, int]], T]


def read_stats(path: str | os.PathLike[str], tables: Iterable[tuple[str, str]],
               compose: Compose[T]) -> T:  # fmt: skip
    """The statistics of the database at ``path``: ``compose(conn, metadata, counts)`` over a
    read-only connection (closed afterwards), given :func:`metadata` and :func:`table_counts`
    of ``tables``; it reads whatever else the suite reports from ``conn``."""
    with closing(connect_readonly(path)) as conn:
        return compose(conn, metadata(conn), table_counts(conn, tables))


def metadata(conn: sqlite3.Connection) -> dict[str, str]:
    """The database's metadata table as a dict (key -> value)."""
    return {key: value for key, value in conn.execute("SELECT key, value FROM metadata")}


def table_counts(conn: sqlite3.Connection, tables: Iterable[tuple[str, str]]) -> dict[str, int]:
    """Rows per table, in the order of ``tables`` (the schema's ``(name, ORDER BY clause)``
    pairs: names from the schema module, never from user input)."""
    return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t, _ in tables}
