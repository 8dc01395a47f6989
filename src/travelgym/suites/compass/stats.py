"""Statistics of a COMPASS database: table counts and the calibration figures of Appendix F."""

from __future__ import annotations

import os
import sqlite3
from typing import Any

import numpy as np

from travelgym.core.database_stats import read_stats
from travelgym.suites.compass.calibration import WEEKEND_WEEKDAYS
from travelgym.suites.compass.schema import TABLE_ORDER

PERCENTILES = (5, 25, 50, 75, 95, 99)


def _weekend_sql() -> str:
    # strftime('%w'): 0 = Sunday .. 6 = Saturday; Python weekday(): 0 = Monday .. 6 = Sunday.
    sqlite_days = sorted(str((d + 1) % 7) for d in WEEKEND_WEEKDAYS)
    return "strftime('%w', night) IN (" + ",".join(f"'{d}'" for d in sqlite_days) + ")"


def compute_stats(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Return counts per table and the calibration figures for the database at ``path``."""
    return read_stats(path, TABLE_ORDER, _stats)


def _stats(
    conn: sqlite3.Connection, meta: dict[str, str], counts: dict[str, int]
) -> dict[str, Any]:
    weekend = _weekend_sql()
    row = conn.execute(
        f"SELECT AVG(CASE WHEN {weekend} THEN price END), AVG(CASE WHEN NOT {weekend} THEN price END),"
        f" AVG(CASE WHEN {weekend} THEN available END), AVG(CASE WHEN NOT {weekend} THEN available END)"
        " FROM offers"
    ).fetchone()
    parks = {}
    for r in conn.execute(
        """SELECT p.park_id, p.name,
                  (SELECT COUNT(*) FROM hotels h WHERE h.park_id = p.park_id) AS hotels,
                  (SELECT AVG(o.price) FROM offers o JOIN room_configs c USING (config_id)
                     JOIN rooms r USING (room_id) JOIN hotels h USING (hotel_id)
                    WHERE h.park_id = p.park_id) AS mean_price,
                  (SELECT AVG(h.star_rating >= 4) FROM hotels h WHERE h.park_id = p.park_id) AS lux,
                  (SELECT AVG(h.review_score) FROM hotels h WHERE h.park_id = p.park_id) AS score,
                  (SELECT AVG(h.distance_km) FROM hotels h WHERE h.park_id = p.park_id) AS dist
             FROM parks p ORDER BY p.park_id"""
    ):
        parks[r["park_id"]] = {
            "name": r["name"],
            "hotels": r["hotels"],
            "mean_nightly_price": _round(r["mean_price"]),
            "share_4_star_plus": _round(r["lux"], 3),
            "mean_review_score": _round(r["score"]),
            "mean_distance_km": _round(r["dist"]),
        }
    ranked = sorted(
        (p for p in parks if parks[p]["mean_nightly_price"] is not None),
        key=lambda p: -parks[p]["mean_nightly_price"],
    )
    hotel_counts = sorted(v["hotels"] for v in parks.values())
    flight_prices = np.array([r[0] for r in conn.execute("SELECT price FROM flight_prices")], float)
    legs = conn.execute("SELECT COUNT(*), SUM(stops = 0) FROM flights").fetchone()
    by_type: dict[str, list[int]] = {}
    per_airport = {}
    for r in conn.execute(
        # Outbound legs of round-trip templates: flights from a departure city to a park airport.
        """SELECT a.code, a.airport_type, COUNT(DISTINCT f.origin) AS routes,
                  COUNT(DISTINCT f.flight_id) AS n
             FROM airports a
             LEFT JOIN flights f ON f.destination = a.code
                  AND f.flight_id IN (SELECT outbound_flight_id FROM flight_templates)
            WHERE a.code IN (SELECT airport_code FROM park_airports)
            GROUP BY a.code ORDER BY a.code"""
    ):
        per_airport[r["code"]] = {
            "airport_type": r["airport_type"],
            "routes": r["routes"],
            "inbound_flights": r["n"],
        }
        by_type.setdefault(r["airport_type"], []).append(r["routes"])
    return {
        "suite": "compass",
        "content_hash": meta.get("content_hash"),
        "metadata": meta,
        "counts": counts,
        "calibration": {
            "weekend_weekday_price_ratio": _round(row[0] / row[1], 4) if row[1] else None,
            "weekend_weekday_availability_ratio": _round(row[2] / row[3], 4) if row[3] else None,
            "parks_by_mean_price": ranked,
            "median_hotels_per_park": float(np.median(hotel_counts)) if hotel_counts else None,
            "parks": parks,
            "flight_price_percentiles": {
                f"p{q}": _round(float(np.percentile(flight_prices, q))) for q in PERCENTILES
            }
            if flight_prices.size
            else {},
            "flight_price_mean": _round(float(flight_prices.mean()))
            if flight_prices.size
            else None,
            "direct_share": _round(legs[1] / legs[0], 4) if legs[0] else None,
            "mean_routes_per_airport_type": {
                t: _round(float(np.mean(v))) for t, v in sorted(by_type.items())
            },
            "destination_airports": per_airport,
        },
    }


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(float(value), digits)
