"""The sandbox over the ingested TravelPlanner database (:mod:`travelgym.suites.travelplanner.
ingest`): parameterised SQL on a connection, rows in the order of the database's files."""

from __future__ import annotations

import os
import sqlite3

from travelgym.core.errors import UserError
from travelgym.db import connect_readonly
from travelgym.suites.travelplanner.sandbox import (
    Accommodation,
    Attraction,
    Distance,
    Drive,
    DriveMode,
    Flight,
    Restaurant,
    Sandbox,
    drive_of,
)

_FLIGHT = """SELECT flight_number, price, dep_time, arr_time, actual_elapsed_time, flight_date,
    origin_city, dest_city, distance FROM flights"""
_ACCOMMODATION = """SELECT name, price, room_type, house_rules, minimum_nights,
    maximum_occupancy, review_rate_number, city FROM accommodations WHERE city = ? ORDER BY seq"""
_RESTAURANT = """SELECT name, average_cost, cuisines, aggregate_rating, city FROM restaurants
    WHERE city = ? ORDER BY seq"""
_ATTRACTION = """SELECT name, latitude, longitude, address, phone, website, city FROM attractions
    WHERE city = ? ORDER BY seq"""
_DISTANCE = """SELECT origin, destination, duration, distance_km FROM distances
    WHERE origin = ? AND destination = ? ORDER BY seq LIMIT 1"""


class DatabaseSandbox(Sandbox):
    """:class:`Sandbox` over the tables of an ingested file (a connection the caller owns, or
    :meth:`from_path` for a read-only one)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    @classmethod
    def from_path(cls, path: str | os.PathLike[str]) -> DatabaseSandbox:
        """A sandbox on a read-only connection to the ingested file at ``path``; raises
        :class:`UserError` when it was ingested without the database."""
        conn = connect_readonly(path)
        row = conn.execute("SELECT value FROM metadata WHERE key = 'has_database'").fetchone()
        if row is None or row[0] != "true":
            conn.close()
            raise UserError(f"{path}: TravelPlanner was ingested without its database: run "
                            f"`travelgym ingest travelplanner --dataset PATH --database DIR`")  # fmt: skip
        return cls(conn)

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def flights(self, origin, destination, date=None):
        sql, params = _FLIGHT + " WHERE origin_city = ? AND dest_city = ?", [origin, destination]
        if date is not None:
            sql, params = sql + " AND flight_date = ?", [*params, date]
        return [Flight(*r) for r in self.conn.execute(sql + " ORDER BY seq", params)]

    def accommodations(self, city):
        return [Accommodation(*r) for r in self.conn.execute(_ACCOMMODATION, (city,))]

    def restaurants(self, city):
        return [Restaurant(*r) for r in self.conn.execute(_RESTAURANT, (city,))]

    def attractions(self, city):
        return [Attraction(*r) for r in self.conn.execute(_ATTRACTION, (city,))]

    def drive(self, origin: str, destination: str, mode: DriveMode) -> Drive | None:
        row = self.conn.execute(_DISTANCE, (origin, destination)).fetchone()
        return drive_of(Distance(*row), mode) if row is not None else None

    def city_state(self, city):
        row = self.conn.execute("SELECT state FROM cities WHERE city = ?", (city,)).fetchone()
        return row[0] if row is not None else None

    def cities_of_state(self, state):
        cur = self.conn.execute("SELECT city FROM cities WHERE state = ? ORDER BY city", (state,))
        return [r[0] for r in cur]
