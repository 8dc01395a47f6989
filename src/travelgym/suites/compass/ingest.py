"""The real-data path: normalise raw Booking.com API responses into the COMPASS database.

The paper (Appendix F.1) built its database from Booking.com responses fetched through RapidAPI
and stored as JSON files. :func:`ingest_raw` reads such a raw directory and writes exactly the
tables of :mod:`travelgym.suites.compass.schema`, with the same reference data (parks, airports, airlines)
as the generator. The raw layout and every field mapping are documented in
``docs/compass/ingest.md``::

    RAW/hotels/search_<park_id>.json                         hotel search results near a park
    RAW/hotels/details_<hotel_id>.json                       facilities and rooms of a hotel
    RAW/hotels/availability_<hotel_id>_<YYYY-MM-DD>.json     rate blocks for one night
    RAW/flights/search_<ORIGIN>_<DEST>_<YYYY-MM-DD>.json     one-way flight offers (optional)
    RAW/permits/permits.json                                 permits and their dates (optional)

All raw files are parsed and checked before anything is written, and the database is written
through :func:`travelgym.db.atomic_build`: a bad file raises :class:`IngestError` naming the file
and the field, and leaves ``out`` (absent or pre-existing) untouched.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from travelgym.db import atomic_build, insert_rows
from travelgym.suites.compass.generate import finalize_metadata, insert_reference
from travelgym.suites.compass.ingest_flights import read_flights
from travelgym.suites.compass.ingest_hotels import read_hotels
from travelgym.suites.compass.ingest_json import (
    IngestError,
    Loc,
    get,
    items,
    load_json,
    lookup,
    parse_date,
)
from travelgym.suites.compass.reference import PARKS
from travelgym.suites.compass.schema import DDL, INDEXES

__all__ = ["IngestError", "ingest_raw"]

PERMITS_FILE = "permits/permits.json"
PERMIT_TYPES = {t: t for t in ("day_hike", "guided_tour", "backpacking")}


def ingest_raw(raw_dir: str | os.PathLike[str], out: str | os.PathLike[str]) -> dict[str, str]:
    """Build the database at ``out`` from the raw responses in ``raw_dir``; return its metadata."""
    root = Path(raw_dir)
    if not root.is_dir():
        raise IngestError(f"{root}: raw directory not found")
    hotels = read_hotels(root)
    flights = read_flights(root)
    permits, availability = read_permits(root)
    with atomic_build(out) as conn:
        conn.executescript(DDL)
        insert_reference(conn)
        for table, rows in hotels.items():
            insert_rows(conn, table, rows)
        insert_rows(conn, "flights", flights.flights)
        insert_rows(conn, "flight_templates", flights.templates)
        insert_rows(conn, "flight_prices", flights.prices)
        insert_rows(conn, "permits", permits)
        insert_rows(conn, "permit_availability", availability)
        conn.executescript(INDEXES)
        meta = finalize_metadata(conn, source="ingested", seed="n/a")
    return meta


def read_permits(root: Path) -> tuple[list[tuple], list[tuple]]:
    """Rows for permits and permit_availability from ``permits/permits.json`` (if present)."""
    if not (root / PERMITS_FILE).exists():
        return [], []
    parks = {p.park_id for p in PARKS}
    permits: list[tuple] = []
    availability: list[tuple] = []
    names: dict[tuple[str, str], str] = {}
    for permit, loc in items(load_json(root, PERMITS_FILE), "permits", Loc(PERMITS_FILE)):
        permit_id = len(permits) + 1
        park_id = get(permit, "park_id", loc, "str")
        if park_id not in parks:
            raise loc.key("park_id").error(f"unknown park {park_id!r}")
        name = get(permit, "name", loc, "str")
        if (park_id, name) in names:
            raise loc.key("name").error(f"duplicate permit {name!r} (also {names[park_id, name]})")
        names[park_id, name] = loc.path
        kind = lookup(PERMIT_TYPES, get(permit, "type", loc, "str"), loc.key("type"))
        price = get(permit, "price_per_person", loc, "number")
        party = get(permit, "max_party_size", loc, "int")
        min_days = get(permit, "min_duration_days", loc, "int", required=False)
        min_days = 1 if min_days is None else min_days
        max_days = get(permit, "max_duration_days", loc, "int", required=False)
        max_days = min_days if max_days is None else max_days
        start = get(permit, "start_time", loc, "str")
        if price < 0:
            raise loc.key("price_per_person").error(f"{price} is negative")
        if party < 1:
            raise loc.key("max_party_size").error(f"{party} is below 1")
        if not 1 <= min_days <= max_days:
            raise loc.key("max_duration_days").error(f"need 1 <= {min_days} <= {max_days}")
        if not re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", start):
            raise loc.key("start_time").error(f"invalid time {start!r} (expected HH:MM)")
        description = get(permit, "description", loc, "str", required=False) or name
        permits.append(
            (permit_id, park_id, name, kind, description, price, party, min_days, max_days, start)
        )
        seen: set[str] = set()
        for day, at in items(permit, "availability", loc, required=False):
            date = parse_date(get(day, "date", at, "str"), at.key("date"))
            if date in seen:
                raise at.key("date").error(f"duplicate date {date}")
            seen.add(date)
            slots = get(day, "slots_remaining", at, "int")
            if slots < 0:
                raise at.key("slots_remaining").error(f"{slots} is negative")
            availability.append((permit_id, date, slots))
    availability.sort()
    return permits, availability
