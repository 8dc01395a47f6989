"""SQLite conventions shared by every suite: read-only connections, canonical content hashes,
atomic builds and a metadata table."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path

# what a read-only connection refuses to compile: writes, schema changes, ATTACH/DETACH and any
# PRAGMA that sets a value, so even a caller running SQL text cannot lift its limits. (SQLite
# itself reports "updates" of sqlite_master while it declares a table-valued function such as
# json_each; those are internal and allowed.)
_WRITES = frozenset(getattr(sqlite3, name) for name in (
    "SQLITE_ATTACH", "SQLITE_DETACH", "SQLITE_INSERT", "SQLITE_DELETE", "SQLITE_ALTER_TABLE",
    "SQLITE_REINDEX", "SQLITE_ANALYZE", "SQLITE_CREATE_INDEX", "SQLITE_CREATE_TABLE",
    "SQLITE_CREATE_TEMP_INDEX", "SQLITE_CREATE_TEMP_TABLE", "SQLITE_CREATE_TEMP_TRIGGER",
    "SQLITE_CREATE_TEMP_VIEW", "SQLITE_CREATE_TRIGGER", "SQLITE_CREATE_VIEW", "SQLITE_CREATE_VTABLE",
    "SQLITE_DROP_INDEX", "SQLITE_DROP_TABLE", "SQLITE_DROP_TEMP_INDEX", "SQLITE_DROP_TEMP_TABLE",
    "SQLITE_DROP_TEMP_TRIGGER", "SQLITE_DROP_TEMP_VIEW", "SQLITE_DROP_TRIGGER", "SQLITE_DROP_VIEW",
    "SQLITE_DROP_VTABLE"))  # fmt: skip


def _read_only(action: int, arg1: str | None, arg2: str | None, db: str | None,
               source: str | None) -> int:  # fmt: skip
    if action in _WRITES or (action == sqlite3.SQLITE_PRAGMA and arg2 is not None):
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_UPDATE and arg1 != "sqlite_master":
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def connect_readonly(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """Open a database read-only: a ``mode=ro`` URI, ``query_only``, no attached databases, and
    an authorizer that refuses writes, schema changes, ATTACH and PRAGMA assignments (``PRAGMA query_only = 0`` followed by
    ``ATTACH 'file:...?mode=rw'`` cannot write through it either)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"database not found: {path}")
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA query_only = ON")
    if hasattr(conn, "setlimit"):  # Python 3.11+
        conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    conn.set_authorizer(_read_only)
    return conn


def content_hash(conn: sqlite3.Connection, tables: Iterable[tuple[str, str]]) -> str:
    """SHA-256 over every row of ``tables`` (name, ORDER BY clause) in canonical order.

    Table names and order clauses come from the schema module, never from user input.
    """
    digest = hashlib.sha256()
    for table, order in tables:
        digest.update(f"\x1e{table}\x1e".encode())
        cur = conn.execute(f"SELECT * FROM {table} ORDER BY {order}")  # noqa: S608 - schema constants
        for row in cur:
            digest.update("\x1f".join(_canon(v) for v in row).encode())
            digest.update(b"\n")
    return digest.hexdigest()


def _canon(value: object) -> str:
    if isinstance(value, float):
        return repr(round(value, 6))
    return "\x00" if value is None else str(value)


def read_metadata(path: str | os.PathLike[str]) -> dict[str, str]:
    """Return the metadata table of a database as a dict ({} if absent or unreadable)."""
    try:
        conn = connect_readonly(path)
    except (FileNotFoundError, sqlite3.Error):
        return {}
    try:
        return {k: v for k, v in conn.execute("SELECT key, value FROM metadata")}
    except sqlite3.Error:
        return {}
    finally:
        conn.close()


@contextmanager
def atomic_build(path: str | os.PathLike[str]):
    """Yield a fresh connection to a temporary file that replaces ``path`` only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    conn = sqlite3.connect(tmp)
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    try:
        yield conn
        conn.commit()
        conn.close()
        os.replace(tmp, path)
    except BaseException:
        conn.close()
        tmp.unlink(missing_ok=True)
        raise
