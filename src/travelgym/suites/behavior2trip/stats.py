"""Statistics of a Behavior2Trip database: counts per table and city, and vocabulary coverage."""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any

from travelgym.core.database_stats import read_stats
from travelgym.suites.behavior2trip import vocab
from travelgym.suites.behavior2trip.gen_poi_specs import WALKING_LIMITS_KM
from travelgym.suites.behavior2trip.schema import POI_TABLES, TABLE_ORDER

# (table, column, vocabulary) of every categorical column a preference filters on
CATEGORICAL: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("hotels", "secondary_category", vocab.STAR_LEVELS),
    ("restaurants", "secondary_category", vocab.CUISINES),
    ("restaurants", "price_level", vocab.PRICE_LEVELS),
    ("restaurants", "dining_environment", vocab.DINING_ENVIRONMENTS),
    ("attractions", "attraction_type", vocab.ATTRACTION_TYPES),
    ("attractions", "walking_level", vocab.WALKING_TOLERANCE),
    ("entertainment", "secondary_category", vocab.ENTERTAINMENT_TYPES),
    ("flights", "cabin_class", vocab.FLIGHT_SEAT_CLASSES),
)


def database_stats(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Counts per table and per city, and per-city coverage of every preference value."""
    return read_stats(path, TABLE_ORDER, _stats)


def _stats(
    conn: sqlite3.Connection, meta: dict[str, str], counts: dict[str, int]
) -> dict[str, Any]:
    names = dict(conn.execute("SELECT city_id, name FROM cities ORDER BY city_id").fetchall())
    per_city: dict[str, dict[str, int]] = {name: {} for name in vocab.CITIES}
    for table in (*POI_TABLES, "weather"):
        for city_id, n in conn.execute(f"SELECT city_id, COUNT(*) FROM {table} GROUP BY city_id"):
            per_city[names[city_id]][table] = n
    for table, key in (("flights", "departures"), ("trains", "train_departures"),
                       ("buses", "bus_departures")):  # fmt: skip
        sql = f"SELECT dep_city_id, COUNT(*) FROM {table} GROUP BY dep_city_id"
        for city_id, n in conn.execute(sql):
            per_city[names[city_id]][key] = n
    return {
        "suite": "behavior2trip",
        "metadata": meta,
        "content_hash": meta.get("content_hash"),
        "counts": counts,
        "total_records": sum(counts.values()),
        "per_city": per_city,
        "coverage": coverage(conn),
    }


def coverage(conn: sqlite3.Connection) -> dict[str, Any]:
    """For each preference value: in how many cities it has matching and non-matching POIs.

    ``complete`` is true when every value of every vocabulary (and every facility) has both in
    all 24 cities. Walking tolerance is reported as bands here; the tools' filter is "within the
    tolerance" (see ``docs/behavior2trip/tools.md``).
    """
    n_cities = len(vocab.CITIES)
    out: dict[str, Any] = {}
    complete = True
    for table, column, values in CATEGORICAL:
        city_col = "dep_city_id" if table == "flights" else "city_id"
        sql = f"SELECT {city_col}, {column}, COUNT(*) FROM {table} GROUP BY 1, 2"
        found: dict[str, dict[str, int]] = {}
        for city_id, value, n in conn.execute(sql):
            found.setdefault(city_id, {})[value] = n
        cities = found.keys()
        entry = {}
        for value in values:
            matching = sum(1 for c in cities if found[c].get(value, 0) > 0)
            other = sum(1 for c in cities if sum(found[c].values()) > found[c].get(value, 0))
            entry[value] = {"cities_matching": matching, "cities_not_matching": other}
            expected = len(cities) if table == "flights" else n_cities
            complete &= matching == expected and other == expected
        out[f"{table}.{column}"] = entry
    facilities: dict[str, dict[str, int]] = {}
    rows = conn.execute("SELECT city_id, facilities FROM hotels").fetchall()
    for facility in vocab.FACILITIES:
        have: dict[str, set[bool]] = {}
        for city_id, text in rows:
            have.setdefault(city_id, set()).add(facility in json.loads(text))
        matching = sum(1 for s in have.values() if True in s)
        other = sum(1 for s in have.values() if False in s)
        facilities[facility] = {"cities_matching": matching, "cities_not_matching": other}
        complete &= matching == other == n_cities
    out["hotels.facilities"] = facilities
    out["walking_limits_km"] = {k: (None if v == float("inf") else v)
                                for k, v in WALKING_LIMITS_KM.items()}  # fmt: skip
    out["complete"] = complete
    return out
