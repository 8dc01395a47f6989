"""Seeded generator of the Behavior2Trip POI database (paper Table 6), at two scales.

``small`` (the default) has 80 hotels, 120 restaurants, 60 attractions and 60 entertainment
venues per city and about 60k flight records; ``full`` has Table 6's POI counts exactly (22,473
hotels, 29,604 restaurants, 8,229 attractions, 20,250 entertainment venues, 10,371 trains) and
about 710k flight records. Every random draw comes from a numpy generator keyed by
(seed, component, city), so the same seed, scale and ``GENERATOR_VERSION`` always produce the
same rows, and the content hash proves it. Every categorical value comes from
:mod:`travelgym.suites.behavior2trip.vocab`, and each city has POIs matching and not matching every value.
"""

from __future__ import annotations

import itertools
import json
import math
import sqlite3
from pathlib import Path

from travelgym import progress
from travelgym.db import ContentHasher, atomic_build, canonical_rows, content_hash, insert_rows
from travelgym.parallel import build_workers, ordered_map, worker_pool
from travelgym.suites.behavior2trip import catalog as cat
from travelgym.suites.behavior2trip import gen_pois, gen_transport
from travelgym.suites.behavior2trip.gen_common import allocate, city_slug, offset, rng
from travelgym.suites.behavior2trip.schema import (
    DATES,
    DDL,
    INDEXES,
    SCHEMA_VERSION,
    TABLE_ORDER,
    real_columns,
)
from travelgym.suites.behavior2trip.vocab import CITIES

GENERATOR_VERSION = "1.2.0"  # 1.2.0: fast food opens at 06:00 (breakfast before an early leg)
DEFAULT_SEED = 0
SCALES = ("small", "full")
DEFAULT_SCALE = "small"
MAX_WORKERS = 4  # beyond this the parent, which writes every row, is the bottleneck

# restaurants: the 26 rows covering each cuisine, price level and environment, the 320 of the
# main-meal coverage (gen_pois.MAIN_MEAL_COVER) and a few more
SMALL_PER_CITY = {"hotels": 80, "restaurants": 360, "attractions": 60, "entertainment": 60}
FULL_TOTALS = {
    "hotels": 22_473,
    "restaurants": 29_604,
    "attractions": 8_229,
    "entertainment": 20_250,
}  # fmt: skip  (paper Table 6)


def poi_counts(scale: str) -> dict[str, dict[str, int]]:
    """table -> city -> number of POIs at ``scale``."""
    if scale == "small":
        return {t: dict.fromkeys(CITIES, n) for t, n in SMALL_PER_CITY.items()}
    weights = [cat.CITY_INFO[c].tier for c in CITIES]
    return {
        t: dict(zip(CITIES, allocate(n, weights, minimum=60), strict=True))
        for t, n in FULL_TOTALS.items()
    }


def check_scale(scale: str) -> str:
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; choose one of {', '.join(SCALES)}")
    return scale


def build_database(path: str | Path, seed: int = DEFAULT_SEED, scale: str = DEFAULT_SCALE) -> dict:
    """Generate the whole database at ``path`` (atomically) and return its metadata.

    The large tables are generated in jobs (a POI table of one city, a run of flight routes,
    the trains) over worker processes, each job returning its rows and their canonical bytes;
    this process writes them and digests the bytes in hash order, so no table is read back
    for the content hash but the small ones."""
    check_scale(scale)
    counts = poi_counts(scale)
    with worker_pool(build_workers(limit=MAX_WORKERS)) as pool:
        geo, reference = _reference(seed)
        chunks = gen_transport.flight_job_routes(scale, geo)
        pois = gen_pois.poi_jobs(seed, geo, counts)
        jobs = itertools.chain(
            (("poi", job) for job in pois),
            (("flights", job) for job in gen_transport.flight_jobs(seed, geo, chunks)),
            [("trains", (seed, scale, geo))],
        )
        total = len(pois) + len(chunks) + 1 + 3  # the jobs (trains last), then 3 steps
        with (
            progress.step("behavior2trip: database", total=total, unit="part") as bar,
            atomic_build(path) as conn,
        ):
            conn.executescript(DDL)
            hasher = ContentHasher(conn, TABLE_ORDER)
            for table, rows in reference.items():
                insert_rows(conn, table, rows)
                hasher.add_table(table)
            for table, rows, canonical in ordered_map(_job, jobs, pool):
                insert_rows(conn, table, rows)
                hasher.add_canonical(table, canonical)
                bar.advance()
            gen_transport.insert_small_transport(conn, seed, geo, hasher)
            bar.advance()
            conn.executescript(INDEXES)
            bar.advance()
            meta = finalize_metadata(conn, seed, scale, hasher.hexdigest())
            bar.advance()
    return meta


def _job(job: tuple[str, tuple]) -> tuple[str, list[tuple], bytes]:
    """Run one generation job (in a worker): its table, rows and their canonical bytes."""
    kind, args = job
    if kind == "poi":
        table, rows = args[1], gen_pois.poi_values(*args)
    elif kind == "flights":
        table, rows = "flights", gen_transport.flight_rows(*args)
    else:
        table, rows = "trains", gen_transport.train_rows(*args)
    return table, rows, canonical_rows(rows, real_columns(table), strict=True)


def finalize_metadata(
    conn: sqlite3.Connection, seed: int, scale: str, digest: str | None = None
) -> dict[str, str]:
    """Write the metadata table (versions, seed, scale, content hash) and return it; ``digest``
    is the content hash when already known."""
    meta = {
        "suite": "behavior2trip",
        "schema_version": SCHEMA_VERSION,
        "generator_version": GENERATOR_VERSION,
        "seed": str(seed),
        "scale": scale,
        "source": "generated",
        "date_range": f"{DATES[0]}..{DATES[-1]}",
        "content_hash": digest or content_hash(conn, TABLE_ORDER),
    }
    conn.executemany("INSERT INTO metadata(key, value) VALUES (?, ?)", sorted(meta.items()))
    return meta


def _reference(seed: int) -> tuple[dict, dict[str, list[tuple]]]:
    """The geography the other tables need, and the rows of cities, airports and stations."""
    coords = cat.city_coordinates()
    airports = cat.airport_records()
    geo: dict = {
        "coords": coords,
        "districts": {},
        "stations": {},
        "airports": airports,
        "terminals": {},
    }
    city_rows, airport_rows, station_rows = [], [], []
    for name in CITIES:
        info = cat.CITY_INFO[name]
        lat, lon = coords[name]
        r = rng(seed, "districts", name)
        centres = []
        for i, district in enumerate(info.districts):
            dist = 1.5 if i == 0 else float(r.uniform(3.0, 12.0))
            centres.append((district, *offset(lat, lon, dist, float(r.uniform(0, 2 * math.pi)))))
        geo["districts"][name] = centres
        aliases = sorted({name, city_slug(name), info.name_zh, *cat.CITY_ALIASES.get(name, ())})
        famous = ", ".join(n for n, _ in info.famous[:3])
        description = (
            f"{name} ({info.name_zh}) is a city in {info.province}, China. Highlights include "
            f"{famous}. Autumn highs average {info.climate[0]:.0f}C in October and "
            f"{info.climate[2]:.0f}C in November."
        )
        city_rows.append((city_slug(name), name, info.name_zh, info.province, lat, lon,
                          info.area_code, info.city_code, json.dumps(aliases),
                          json.dumps(list(info.districts)), description))  # fmt: skip
        for code in info.airports:
            a = airports[code]
            terminals = [f"T{k}" for k in range(1, 2 + (info.tier >= 1.2) + (info.tier >= 1.5))]
            geo["terminals"][code] = terminals
            airport_rows.append((code, a["name"], city_slug(name), a["lat"], a["lon"],
                                 json.dumps(terminals)))  # fmt: skip
        stations = [(s, "railway") for s in info.stations] + [
            (f"{name} Long-distance Bus Station", "bus")
        ]
        geo["stations"][name] = {}
        for s, kind in stations:
            slat, slon = offset(lat, lon, float(r.uniform(2.0, 12.0)), float(r.uniform(0, 6.28)))
            station_rows.append((s, city_slug(name), kind, slat, slon))
            geo["stations"][name][s] = (slat, slon)
    return geo, {"cities": city_rows, "airports": airport_rows, "stations": station_rows}
