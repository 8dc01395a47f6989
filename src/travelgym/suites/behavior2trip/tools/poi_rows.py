"""The POI search tools' rows in memory: per table and city, every row in the tools' order,
read once per context (the database is read-only), then filtered in Python with the meaning
of the SQL tests the tools state (:func:`matches`).

A search used to run a ``COUNT(*)`` and a sorted ``SELECT ... LIMIT n`` over the city's rows
and decode the JSON columns of each row it returned; planners search the same few cities
again and again with other preferences, so reading and decoding each city's rows once is
cheaper from the second search on. Filtering a list already in the order keeps that order,
so the results, their order and the count are those of the SQL queries.
"""

from __future__ import annotations

from typing import Any

from travelgym.suites.behavior2trip.tools.common import decode

JSON_COLUMNS = ("facilities", "rooms", "reviews")


def city_rows(ctx: Any, table: str, columns: str, order: str, city_id: str) -> list[dict]:
    """Every row of ``table`` in ``city_id`` as the search selects it (``columns``, JSON
    columns decoded), in ``order``; kept per context. Treat the rows as read-only."""
    cache = ctx.__dict__.setdefault("_poi_rows", {})
    key = (table, city_id)
    rows = cache.get(key)
    if rows is None:
        rows = ctx.rows(f"SELECT {columns} FROM {table} WHERE city_id = ? ORDER BY {order}",
                        [city_id])  # fmt: skip
        for r in rows:
            decode(r, *JSON_COLUMNS)
        cache[key] = rows
    return rows


def matches(row: dict[str, Any], tests: list[tuple[str, str, Any]]) -> bool:
    """Whether ``row`` passes every test: ``("in", column, values)`` (SQL ``IN``: one of the
    values, never NULL), ``("below", column, limit)`` (``column < limit``, never NULL) or
    ``("has", column, value)`` (the decoded JSON list holds ``value``)."""
    for op, column, arg in tests:
        value = row[column]
        if op == "in":
            if value is None or value not in arg:
                return False
        elif op == "below":
            if value is None or not value < arg:
                return False
        elif not isinstance(value, list) or arg not in value:
            return False
    return True


def search_rows(rows: list[dict], tests: list[tuple[str, str, Any]],
                n: int) -> tuple[int, list[dict]]:  # fmt: skip
    """How many ``rows`` pass ``tests`` and copies of the first ``n`` of them (in order)."""
    hits = [r for r in rows if matches(r, tests)] if tests else rows
    return len(hits), [dict(r) for r in hits[:n]]
