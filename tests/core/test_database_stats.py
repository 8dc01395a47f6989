"""read_stats: a suite's database statistics over its metadata and per-table row counts."""

from __future__ import annotations

import sqlite3

import pytest

from travelgym.core.database_stats import read_stats


def test_compose_gets_the_metadata_and_the_counts_in_table_order_and_the_connection_closes(
    tmp_path,
):
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE metadata (key TEXT, value TEXT)")
        conn.execute("INSERT INTO metadata VALUES ('content_hash', 'abc')")
        conn.execute("CREATE TABLE a (x)")
        conn.execute("CREATE TABLE b (x)")
        conn.executemany("INSERT INTO b VALUES (?)", [(1,), (2,)])
    conn.close()
    seen = []

    def compose(conn, meta, counts):
        seen.append(conn)
        return meta, list(counts.items())

    tables = (("b", "x"), ("a", "x"))
    assert read_stats(path, tables, compose) == ({"content_hash": "abc"}, [("b", 2), ("a", 0)])
    with pytest.raises(sqlite3.ProgrammingError):  # closed once compose returned
        seen[0].execute("SELECT 1")
