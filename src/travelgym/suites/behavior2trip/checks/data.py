"""Read-only database look-ups for the checks: POIs by id or name, transport services, places.

Every query is parameterised; results are cached per :class:`PlanDB`, so one instance serves a
whole scoring run. Names are compared after :func:`~travelgym.suites.behavior2trip.context.normalize`.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from typing import Any

from rapidfuzz import fuzz

from travelgym.suites.behavior2trip.context import Place, TripsContext, normalize
from travelgym.suites.behavior2trip.schema import ID_PREFIXES, POI_TABLES
from travelgym.suites.behavior2trip.tools.mapguide import city_routes
from travelgym.toolkit import ContentError

TABLE_OF_PREFIX = {prefix: table for table, prefix in ID_PREFIXES.items()}
MIN_PARTIAL = 8  # a name this long may match the one database name containing it (or within it)
SAME_NAME_SCORE = 90.0  # rapidfuzz WRatio at or above which two names are the same POI
MINUTES_KEPT = 1 << 16  # pairs of places whose local-transport minutes are remembered


def same_name(a: str, b: str) -> bool:
    """Whether a plan's name refers to a database name (case, spacing, punctuation and small
    variations ignored)."""
    x, y = normalize(a), normalize(b)
    if not x or not y:
        return False
    if x == y or (min(len(x), len(y)) >= 6 and (x in y or y in x)):
        return True
    return fuzz.WRatio(a, b) >= SAME_NAME_SCORE


# a POI id exactly as the tools write it (any case, ASCII spaces around it): ``\d`` would also
# take Arabic-Indic or fullwidth digits, ``str.strip`` no-break and ideographic spaces
POI_ID = re.compile(r"[HRAE][0-9]{5}", re.ASCII)
ASCII_SPACE = " \t\r\n"


class PlanDB:
    """A read-only connection to a Behavior2Trip database with cached look-ups."""

    def __init__(self, conn: sqlite3.Connection, ctx: TripsContext | None = None) -> None:
        # ``ctx``: a tools context over ``conn`` whose read-only caches (cities, places, their
        # name indexes) the look-ups share, e.g. the witness search's
        self.ctx = ctx if ctx is not None else TripsContext(conn)
        self.conn = conn
        self._poi: dict[str, tuple[str, dict] | None] = {}
        self._names: dict[tuple[str, str], dict[str, dict]] = {}
        self._places: dict[tuple[str, str], Place | None] = {}
        self._services: dict[tuple, list[dict[str, Any]]] = {}
        self._hotels: dict[str | None, list[tuple[str, frozenset[str]]]] = {}
        self._counts: dict[tuple, int] = {}
        self._minutes: dict[tuple, dict[str, float]] = {}

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> PlanDB:
        return cls(TripsContext.from_path(path).conn)

    def close(self) -> None:
        self.ctx.close()

    def rows(self, sql: str, params: tuple | list = ()) -> list[dict[str, Any]]:
        return self.ctx.rows(sql, params)

    # --- cities ---

    def city(self, city_id: str) -> dict[str, Any]:
        return self.ctx.cities[city_id]

    def city_id(self, name: str | None) -> str | None:
        """The city id a name refers to (aliases, any case), or ``None``."""
        if not name or not name.strip():
            return None
        try:
            return self.ctx.resolve_city(name)["city_id"]
        except ContentError:
            return None

    def cities_in(self, text: str | None) -> list[str]:
        """City ids named in a day's city text (``"Beijing -> Shanghai"``, ``"Shanghai"``)."""
        if not text:
            return []
        whole = self.city_id(text)
        if whole:
            return [whole]
        parts = re.split(r"\s*(?:->|→|=>|—|–|\bto\b|/|,|;|&|\band\b|\s-\s|\(|\))\s*", text)
        out = [c for p in parts if (c := self.city_id(p))]
        return list(dict.fromkeys(out))

    # --- POIs ---

    def poi(self, poi_id: str | None) -> tuple[str, dict[str, Any]] | None:
        """``(table, row)`` of a POI id (``H00012``, any case), or ``None``."""
        key = (poi_id or "").strip(ASCII_SPACE).upper()
        if key not in self._poi:
            table = TABLE_OF_PREFIX.get(key[:1])
            row = None
            if table and POI_ID.fullmatch(key):
                found = self.rows(f"SELECT * FROM {table} WHERE {POI_TABLES[table]} = ?", (key,))
                row = found[0] if found else None
            self._poi[key] = (table, row) if row else None
        return self._poi[key]

    def poi_by_name(self, tables: tuple[str, ...], name: str,
                    city_ids: list[str]) -> tuple[str, dict[str, Any]] | None:  # fmt: skip
        """A POI of ``tables`` in ``city_ids`` named ``name``: normalised equality, else the
        only POI whose normalised name contains it or is contained in it."""
        key = normalize(name)
        if not key:
            return None
        for table in tables:
            for city_id in city_ids:
                index = self._name_index(table, city_id)
                if key in index:
                    return table, index[key]
        if len(key) < MIN_PARTIAL:
            return None
        hits = [(table, row) for table in tables for city_id in city_ids
                for k, row in self._name_index(table, city_id).items() if key in k or k in key]  # fmt: skip
        return hits[0] if len(hits) == 1 else None

    def _name_index(self, table: str, city_id: str) -> dict[str, dict]:
        if (table, city_id) not in self._names:
            rows = self.rows(f"SELECT * FROM {table} WHERE city_id = ? ORDER BY 1", (city_id,))
            index: dict[str, dict] = {}
            for row in rows:
                index.setdefault(normalize(row["name"]), row)
            self._names[(table, city_id)] = index
        return self._names[(table, city_id)]

    def count(self, table: str, where: dict[str, list[str]], city_ids: list[str]) -> int:
        """How many POIs of ``table`` in ``city_ids`` have, for every column of ``where``, a
        value among its values (column names are the checks' own, never the plan's)."""
        if not city_ids or not where or not all(where.values()):
            return 0
        key = (table, tuple((c, tuple(v)) for c, v in where.items()), tuple(city_ids))
        if key not in self._counts:
            self._counts[key] = self._count(table, where, city_ids)
        return self._counts[key]

    def _count(self, table: str, where: dict[str, list[str]], city_ids: list[str]) -> int:
        tests = [
            f"{column} IN ({', '.join('?' * len(values))})" for column, values in where.items()
        ]
        sql = (f"SELECT COUNT(*) FROM {table} WHERE {' AND '.join(tests)}"
               f" AND city_id IN ({', '.join('?' * len(city_ids))})")  # fmt: skip
        params = [v for values in where.values() for v in values]
        return self.conn.execute(sql, [*params, *city_ids]).fetchone()[0]

    def hotel_offers(self, city_id: str | None) -> list[tuple[str, frozenset[str]]]:
        """The star level and facilities of each hotel in ``city_id`` (kept per city)."""
        if city_id not in self._hotels:
            rows = self.conn.execute(
                "SELECT secondary_category, facilities FROM hotels WHERE city_id = ?", (city_id,)
            ).fetchall()
            self._hotels[city_id] = [(level, frozenset(json.loads(f))) for level, f in rows]
        return self._hotels[city_id]

    # --- transport ---

    def _cached(self, key: tuple, sql: str, params: tuple) -> list[dict[str, Any]]:
        if key not in self._services:
            self._services[key] = self.rows(sql, params)
        return self._services[key]

    def flights(self, number: str, date: str, dep: str | None = None,
                arr: str | None = None) -> list[dict[str, Any]]:  # fmt: skip
        """The cabins of flight ``number`` on ``date``; else, when the route is known, of the
        flight ``number`` is a codeshare of."""
        sql = "SELECT * FROM flights WHERE flight_number = ? AND dep_date = ? ORDER BY flight_id"
        rows = self._cached(("flight", number, date), sql, (number, date))
        if rows or dep is None or arr is None:
            return rows
        sql = ("SELECT * FROM flights WHERE dep_city_id = ? AND arr_city_id = ? AND dep_date = ? "
               "AND codeshare = ? ORDER BY flight_id")  # fmt: skip
        return self._cached(("codeshare", number, date, dep, arr), sql, (dep, arr, date, number))

    def trains(self, number: str) -> list[dict[str, Any]]:
        sql = "SELECT * FROM trains WHERE train_number = ? ORDER BY train_id"
        return self._cached(("train", number), sql, (number,))

    def buses(self, number: str) -> list[dict[str, Any]]:
        sql = "SELECT * FROM buses WHERE bus_number = ? ORDER BY bus_id"
        return self._cached(("bus", number), sql, (number,))

    # --- places (for local transport) ---

    def local_minutes(self, a: Place, b: Place) -> dict[str, float]:
        """MapGuide's minutes per local mode from ``a`` to ``b`` (places of one city), with
        ``Driving`` as long as by taxi and ``Transit`` the faster of subway and bus; kept per
        city and coordinates (read-only)."""
        key = (a.city, a.lat, a.lon, b.lat, b.lon)
        if key not in self._minutes:
            by_mode = {r["mode"]: r["minutes"] for r in city_routes(a, b)[1]}
            by_mode["Driving"] = by_mode["Taxi"]
            by_mode["Transit"] = min(by_mode.get("Subway", by_mode["Bus"]), by_mode["Bus"])
            if len(self._minutes) >= MINUTES_KEPT:
                self._minutes.clear()
            self._minutes[key] = by_mode
        return self._minutes[key]

    def place(self, city_ids: list[str], query: str | None) -> Place | None:
        """A routable place (POI, station, airport, city centre) of one of ``city_ids``."""
        if not query:
            return None
        for city_id in city_ids:
            key = (city_id, query)
            if key not in self._places:
                self._places[key] = self.ctx.find_place(self.city(city_id), query)
            if self._places[key] is not None:
                return self._places[key]
        return None
