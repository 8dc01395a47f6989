"""Ingest what the user supplies (the dataset, and optionally the database directory) into ONE
versioned SQLite file, ``<data dir>/travelplanner/travelplanner.sqlite``, with a manifest
``travelplanner.manifest.json`` beside it.

The content hash is SHA-256 over every table's rows in file order (:func:`travelgym.db.
content_hash`), so the same input files give the same hash on every machine and every run; the
metadata table and the manifest are not part of it. Ingesting again replaces the whole file
(atomically: a failed ingest leaves the previous one in place), so a dataset directory holding
every split is the way to have them all.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from travelgym import progress
from travelgym.core.errors import UserError
from travelgym.datafiles import write_manifest
from travelgym.db import atomic_build, connect_readonly, content_hash, insert_rows, read_metadata
from travelgym.paths import suite_dir
from travelgym.suites.travelplanner.database import DatabaseRecords, read_database
from travelgym.suites.travelplanner.dataset import read_dataset
from travelgym.suites.travelplanner.hub import parse_hub_name, read_hub_dataset
from travelgym.suites.travelplanner.records import Query

SUITE = "travelplanner"
FILE_NAME = "travelplanner.sqlite"
FORMAT_VERSION = 1
NOT_INGESTED = "no TravelPlanner data: run `travelgym ingest travelplanner --dataset PATH` first"

DDL = """
CREATE TABLE queries (split TEXT NOT NULL, idx INTEGER NOT NULL, task_id TEXT PRIMARY KEY,
    level TEXT NOT NULL, days INTEGER NOT NULL, record TEXT NOT NULL, UNIQUE (split, idx));
CREATE TABLE flights (seq INTEGER PRIMARY KEY, flight_number TEXT, price REAL, dep_time TEXT,
    arr_time TEXT, actual_elapsed_time TEXT, flight_date TEXT, origin_city TEXT,
    dest_city TEXT, distance REAL);
CREATE TABLE accommodations (seq INTEGER PRIMARY KEY, name TEXT, price REAL, room_type TEXT,
    house_rules TEXT, minimum_nights INTEGER, maximum_occupancy INTEGER,
    review_rate_number REAL, city TEXT);
CREATE TABLE restaurants (seq INTEGER PRIMARY KEY, name TEXT, average_cost REAL,
    cuisines TEXT, aggregate_rating REAL, city TEXT);
CREATE TABLE attractions (seq INTEGER PRIMARY KEY, name TEXT, latitude REAL, longitude REAL,
    address TEXT, phone TEXT, website TEXT, city TEXT);
CREATE TABLE distances (seq INTEGER PRIMARY KEY, origin TEXT, destination TEXT,
    duration TEXT, distance_km REAL);
CREATE TABLE cities (seq INTEGER PRIMARY KEY, city TEXT UNIQUE, state TEXT);
CREATE TABLE metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE INDEX flights_route ON flights (origin_city, dest_city, flight_date);
CREATE INDEX accommodations_city ON accommodations (city);
CREATE INDEX restaurants_city ON restaurants (city);
CREATE INDEX attractions_city ON attractions (city);
CREATE INDEX distances_route ON distances (origin, destination);
CREATE INDEX cities_state ON cities (state);
"""
RECORD_TABLES = ("flights", "accommodations", "restaurants", "attractions", "distances",
                 "cities")  # fmt: skip
HASHED = (("queries", "split, idx"),) + tuple((t, "seq") for t in RECORD_TABLES)


def data_path(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the ingested file lives (whether or not it exists)."""
    return suite_dir(SUITE, data_dir) / FILE_NAME


def ingest(dataset: Path | str, database: Path | None, data_dir: Path | None,
           split: str | None = None, out: Path | None = None) -> dict:  # fmt: skip
    """Read the dataset (a file of ``split``, a directory of split files, or, when no such path
    exists, a Hugging Face dataset name ``OWNER/NAME[:SPLIT]`` read through ``datasets``) and
    the database directory (optional), and write them as the one ingested file (``out``:
    another path, as ``run --data`` uses for its cached copies). Returns its metadata:
    ``path``, ``format_version``, ``content_hash``, ``splits`` (queries per split),
    ``has_database``, ``records`` (rows per database table) and ``skipped`` (rows dropped)."""
    source = Path(dataset).expanduser()
    hub = isinstance(dataset, str) and not source.exists() and parse_hub_name(dataset)
    splits = read_hub_dataset(dataset, split) if hub else read_dataset(source, split)
    records = read_database(database) if database is not None else DatabaseRecords()
    path = Path(out) if out is not None else data_path(data_dir)
    steps = progress.step("travelplanner: writing the data file",
                          total=len(HASHED) + 1, unit="table")  # fmt: skip
    with steps as bar, atomic_build(path) as conn:
        conn.executescript(DDL)
        _insert_queries(conn, [q for queries in splits.values() for q in queries])
        bar.advance()
        _insert_records(conn, records, bar)
        digest = content_hash(conn, HASHED)
        bar.advance()
        meta = {
            "format_version": FORMAT_VERSION,
            "content_hash": digest,
            "splits": {name: len(queries) for name, queries in splits.items()},
            "has_database": database is not None,
            "records": {t: _count(conn, t) for t in RECORD_TABLES},
            "skipped": records.skipped,
            "dataset": str(dataset).strip() if hub else str(source.resolve()),
            "database": str(Path(database).expanduser().resolve()) if database else None,
        }
        conn.executemany("INSERT INTO metadata VALUES (?, ?)",
                         [(k, json.dumps(v, sort_keys=True)) for k, v in meta.items()])  # fmt: skip
    meta["path"] = str(path)
    write_manifest(path, meta)
    return meta


def _count(conn: sqlite3.Connection, table: str) -> int:
    return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # noqa: S608 - constant


def _insert_queries(conn: sqlite3.Connection, queries: list[Query]) -> None:
    conn.executemany("INSERT INTO queries VALUES (?, ?, ?, ?, ?, ?)",
                     [(q.split, q.idx, q.task_id, q.level, q.days, q.model_dump_json())
                      for q in queries])  # fmt: skip


def _insert_records(conn: sqlite3.Connection, r: DatabaseRecords, bar: progress.Step) -> None:
    rows = {
        "flights": [(f.flight_number, f.price, f.dep_time, f.arr_time, f.actual_elapsed_time,
                     f.flight_date, f.origin_city, f.dest_city, f.distance) for f in r.flights],
        "accommodations": [(a.name, a.price, a.room_type, a.house_rules, a.minimum_nights,
                            a.maximum_occupancy, a.review_rate_number, a.city)
                           for a in r.accommodations],
        "restaurants": [(x.name, x.average_cost, x.cuisines, x.aggregate_rating, x.city)
                        for x in r.restaurants],
        "attractions": [(a.name, a.latitude, a.longitude, a.address, a.phone, a.website, a.city)
                        for a in r.attractions],
        "distances": [(d.origin, d.destination, d.duration, d.distance_km) for d in r.distances],
        "cities": list(r.states.items()),
    }  # fmt: skip
    for table, values in rows.items():
        insert_rows(conn, table, [(seq, *v) for seq, v in enumerate(values, 1)])
        bar.advance()


def open_ingested(data_dir: str | os.PathLike[str] | None = None,
                  path: Path | None = None) -> tuple[Path, dict]:  # fmt: skip
    """The ingested file (``path``, default the data directory's) and its metadata (values
    decoded). Raises :class:`UserError` when nothing was ingested or the file is of another
    format version."""
    path = Path(path) if path is not None else data_path(data_dir)
    raw = read_metadata(path) if path.exists() else {}
    if not raw:
        raise UserError(NOT_INGESTED)
    meta = {k: json.loads(v) for k, v in raw.items()}
    if meta.get("format_version") != FORMAT_VERSION:
        raise UserError(f"{path}: TravelPlanner data of format version "
                        f"{meta.get('format_version')} (this travelgym reads "
                        f"{FORMAT_VERSION}): run `travelgym ingest travelplanner --dataset "
                        f"PATH` again")  # fmt: skip
    meta["path"] = str(path)
    return path, meta


def load_queries(source: sqlite3.Connection | str | os.PathLike[str],
                 split: str) -> list[Query]:  # fmt: skip
    """The queries of ``split`` in idx order, from a connection or the ingested file's path.
    Raises :class:`UserError` when the split was not ingested."""
    conn = source if isinstance(source, sqlite3.Connection) else connect_readonly(source)
    try:
        rows = conn.execute("SELECT record FROM queries WHERE split = ? ORDER BY idx",
                            (split,)).fetchall()  # fmt: skip
        if not rows:
            present = [r[0] for r in conn.execute("SELECT DISTINCT split FROM queries")]
            raise UserError(f"no TravelPlanner {split!r} queries were ingested (ingested: "
                            f"{', '.join(sorted(present)) or 'none'})")  # fmt: skip
        return [Query.model_validate_json(r[0]) for r in rows]
    finally:
        if conn is not source:
            conn.close()
