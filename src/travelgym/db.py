"""SQLite conventions shared by every suite: read-only connections, canonical content hashes,
atomic builds and a metadata table."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path

from travelgym.atomic import naming_target, remove_orphans

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
    """SHA-256 over every row of ``tables`` (name, ORDER BY clause) in canonical order: per row,
    its values canonicalised (:func:`_canon`) joined by ``\\x1f``, then ``\\n``.

    Table names and order clauses come from the schema module, never from user input.
    """
    hasher = ContentHasher(conn, tables)
    for table, _ in tables:
        hasher.add_table(table)
    return hasher.hexdigest()


class ContentHasher:
    """:func:`content_hash` computed while a database is built: each table in turn, either read
    back (:meth:`add_table`) or from the rows being inserted (:meth:`add_rows`), which saves
    reading a large table back. The rows given must be in the table's hash order and hold what
    SQLite will return for them (``str``, ``int``, ``float`` or ``None``; an ``int`` in a REAL
    column is hashed as the ``float`` SQLite stores)."""

    def __init__(self, conn: sqlite3.Connection, tables: Iterable[tuple[str, str]]) -> None:
        self.conn = conn
        self.order = dict(tables)
        self.pending = list(self.order)
        self.current: str | None = None
        self.digest = hashlib.sha256()

    def _enter(self, table: str) -> None:
        if table == self.current:
            return
        if not self.pending or self.pending[0] != table:
            raise ValueError(f"table {table!r} out of hash order (next: {self.pending[:1]})")
        self.current = self.pending.pop(0)
        self.digest.update(f"\x1e{table}\x1e".encode())

    def add_table(self, table: str) -> None:
        """Hash the whole of ``table`` as stored."""
        self._enter(table)
        query = f"SELECT * FROM {table} ORDER BY {self.order[table]}"  # noqa: S608
        cur = self.conn.execute(query)
        while rows := cur.fetchmany(50_000):
            self.digest.update(canonical_rows(rows))

    def add_rows(self, table: str, rows: list[tuple]) -> None:
        """Hash the next ``rows`` of ``table`` (as inserted, in hash order)."""
        self._enter(table)
        if rows:
            reals = self._reals(table)
            self.digest.update(canonical_rows(rows, reals, strict=True))

    def add_canonical(self, table: str, data: bytes) -> None:
        """Hash the next rows of ``table`` given as :func:`canonical_rows` made them."""
        self._enter(table)
        self.digest.update(data)

    def _reals(self, table: str) -> frozenset[int]:
        key = f"_reals_{table}"
        if key not in self.__dict__:
            info = self.conn.execute(f"PRAGMA table_info({table})").fetchall()
            self.__dict__[key] = frozenset(
                cid for cid, _, decl, *_ in info if any(k in decl.upper() for k in _REAL_AFFINITY)
            )
        return self.__dict__[key]

    def hexdigest(self) -> str:
        if self.pending:
            raise ValueError(f"tables not hashed: {', '.join(self.pending)}")
        return self.digest.hexdigest()


_REAL_AFFINITY = ("REAL", "FLOA", "DOUB")  # SQLite's type affinity rules
_PLAIN = frozenset({str, int, float, type(None)})


def canonical_rows(rows: list[tuple], reals: frozenset[int] = frozenset(),
                   strict: bool = False) -> bytes:  # fmt: skip
    """The bytes :func:`content_hash` digests for ``rows``, column by column (one conversion per
    distinct float, none per string). ``reals``: indexes of REAL columns, whose ints are
    hashed as floats; ``strict``: refuse values SQLite would not return as they are."""
    columns = [
        _canon_column(col, i in reals, strict) for i, col in enumerate(zip(*rows, strict=True))
    ]
    return "".join(["\x1f".join(row) + "\n" for row in zip(*columns, strict=True)]).encode()


def _canon_column(col: tuple, real: bool, strict: bool) -> Iterable[str]:
    kinds = set(map(type, col))
    if strict and not kinds <= _PLAIN:
        raise TypeError(f"cannot hash values of types {sorted(k.__name__ for k in kinds)}")
    if real and int in kinds:
        col = tuple(float(v) if type(v) is int else v for v in col)
        kinds = set(map(type, col))
    if kinds == {str}:
        return col
    if kinds == {int}:
        return map(str, col)
    if kinds == {float}:
        # 0.0 == -0.0 would share one memo entry: canonicalise such columns one by one
        memo = {v: repr(round(v, 6)) for v in set(col)}
        if 0.0 not in memo and all(v == v for v in memo):
            return map(memo.__getitem__, col)
    return map(_canon, col)


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


def insert_rows(conn: sqlite3.Connection, table: str, rows: list[tuple]) -> None:
    """Insert ``rows`` (each a value per column, in the table's order) into ``table``."""
    if rows:
        marks = ", ".join("?" * len(rows[0]))
        conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)  # noqa: S608 - our tables


@contextmanager
def atomic_build(path: str | os.PathLike[str]):
    """Yield a fresh connection to a temporary file that replaces ``path`` only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_orphans(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with naming_target(path, tmp):  # a read-only directory: SQLite would say only "unable to open"
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
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
