"""Seeded generator of the COMPASS booking database, calibrated to the paper (Appendix F).

Every random draw comes from a numpy generator keyed by (seed, component name), so the same seed
and ``GENERATOR_VERSION`` always produce the same rows, and the content hash proves it.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import sqlite3
import zlib
from pathlib import Path

import numpy as np

from travelgym import progress
from travelgym.db import atomic_build, content_hash, insert_rows
from travelgym.geo import driving_km, haversine_km
from travelgym.suites.compass import calibration as cal
from travelgym.suites.compass.catalog import (
    BRANDS,
    LODGE_PREFIXES,
    LODGE_WORDS,
    PERMITS,
    RATE_PLANS,
    ROOM_TYPES,
)
from travelgym.suites.compass.reference import (
    AIRLINES,
    DEPARTURE_CITIES,
    PARKS,
    airports,
    park_airport_links,
)
from travelgym.suites.compass.schema import DDL, INDEXES, SCHEMA_VERSION, TABLE_ORDER

GENERATOR_VERSION = "1.1.0"
DEFAULT_SEED = 0


def _rng(seed: int, component: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(component.encode())])


def build_database(path: str | Path, seed: int = DEFAULT_SEED) -> dict[str, str]:
    """Generate the whole database at ``path`` (atomically) and return its metadata (with a
    progress bar on stderr, by build step, when it takes more than a second)."""
    steps = [
        lambda conn: (conn.executescript(DDL), _insert_reference(conn)),
        lambda conn: _insert_hotels(conn, seed),
        lambda conn: _insert_flights(conn, seed),
        lambda conn: _insert_permits(conn, seed),
        lambda conn: conn.executescript(INDEXES),
    ]
    bar_step = progress.step("compass: database", total=len(steps) + 1, unit="step")
    with bar_step as bar, atomic_build(path) as conn:
        for build_step in steps:
            build_step(conn)
            bar.advance()
        meta = finalize_metadata(conn, source="generated", seed=str(seed))
        bar.advance()
    return meta


def finalize_metadata(conn: sqlite3.Connection, source: str, seed: str) -> dict[str, str]:
    """Write the metadata table (version, seed, source, content hash) and return it."""
    meta = {
        "suite": "compass",
        "schema_version": SCHEMA_VERSION,
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "source": source,
        "content_hash": content_hash(conn, TABLE_ORDER),
    }
    conn.executemany("INSERT INTO metadata(key, value) VALUES (?, ?)", sorted(meta.items()))
    return meta


def insert_reference(conn: sqlite3.Connection) -> None:
    """Insert parks, airports, park-airport drive links and airlines (shared with ingest)."""
    _insert_reference(conn)


def _insert_reference(conn: sqlite3.Connection) -> None:
    conn.executemany(
        "INSERT INTO parks VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (
                p.park_id,
                p.name,
                p.state,
                p.lat,
                p.lon,
                json.dumps(p.aliases),
                json.dumps(p.gateway_towns),
            )
            for p in PARKS
        ],
    )
    conn.executemany(
        "INSERT INTO airports VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (a.code, a.name, a.city, a.state, a.lat, a.lon, a.airport_type)
            for a in airports().values()
        ],
    )
    conn.executemany("INSERT INTO park_airports VALUES (?, ?, ?, ?)", park_airport_links())
    conn.executemany(
        "INSERT INTO airlines VALUES (?, ?)", [(code, name) for code, (name, _) in AIRLINES.items()]
    )


# ----------------------------------------------------------------------------------- hotels


def _hotel_name(
    rng: np.random.Generator, stars: int, town: str, used: set[str]
) -> tuple[str, str | None]:
    fitting = [b for b, lo, hi in BRANDS if lo <= stars <= hi]
    for _ in range(50):
        if fitting and rng.random() < 0.55:
            brand = fitting[rng.integers(len(fitting))]
            name = f"{brand} {town}"
        else:
            brand = None
            prefix = LODGE_PREFIXES[rng.integers(len(LODGE_PREFIXES))]
            word = LODGE_WORDS[rng.integers(len(LODGE_WORDS))]
            name = f"{prefix} {word}" if rng.random() < 0.6 else f"{town} {prefix} {word}"
        if name not in used:
            used.add(name)
            return name, brand
    name = f"{town} Lodge {len(used)}"
    used.add(name)
    return name, None


def _hotel_distance(rng: np.random.Generator, park_id: str, index: int) -> float:
    """Road km from the park entrance of a park's ``index``-th hotel (see ``calibration``)."""
    if park_id in cal.REMOTE_LODGING:
        median, least = cal.REMOTE_LODGING[park_id]
        return float(min(95.0, max(least, rng.lognormal(math.log(median), cal.DISTANCE_SIGMA))))
    if index == 0:  # a historic in-park lodge at many parks, else the motel by the entrance
        inside = rng.random() < cal.IN_PARK_LODGE_PROBABILITY
        return float(rng.uniform(*(cal.IN_PARK_LODGE_KM if inside else cal.NEAR_ENTRANCE_KM)))
    return float(min(95.0, rng.lognormal(math.log(cal.DISTANCE_MEDIAN_KM), cal.DISTANCE_SIGMA)))


def _insert_hotels(conn: sqlite3.Connection, seed: int) -> None:
    rng = _rng(seed, "hotels")
    used: set[str] = set()
    hotels, rooms, configs, offers = [], [], [], []
    nights = [n.isoformat() for n in cal.NIGHTS]
    weekend = np.array([n.weekday() in cal.WEEKEND_WEEKDAYS for n in cal.NIGHTS])
    late = np.array([n.day > 15 for n in cal.NIGHTS])
    hotel_id = room_id = config_id = 0
    for park in PARKS:
        count = cal.HOTEL_COUNT.get(park.park_id, cal.DEFAULT_HOTEL_COUNT)
        lux = cal.LUXURY_SHARE[park.park_id]
        price_index = cal.PRICE_INDEX[park.park_id]
        for i in range(count):
            hotel_id += 1
            stars = int(
                rng.choice([4, 5], p=[0.75, 0.25])
                if rng.random() < lux
                else rng.choice([1, 2, 3], p=[0.08, 0.37, 0.55])
            )
            town = park.gateway_towns[rng.integers(len(park.gateway_towns))]
            name, brand = _hotel_name(rng, stars, town, used)
            dist = _hotel_distance(rng, park.park_id, i)
            bearing = rng.uniform(0, 2 * math.pi)
            crow = dist / 1.3
            lat = park.lat + crow / 111.0 * math.cos(bearing)
            lon = park.lon + crow / (111.0 * math.cos(math.radians(park.lat))) * math.sin(bearing)
            score = float(np.clip(rng.normal(7.4 + 0.35 * (stars - 3), 0.65), 5.0, 9.8))
            reviews = int(rng.lognormal(math.log(420 if brand else 160), 0.9)) + 5
            s = stars - 2

            def flag(p: float) -> int:
                return int(rng.random() < min(0.97, max(0.03, p)))

            hotels.append(
                (
                    hotel_id,
                    park.park_id,
                    name,
                    brand,
                    town,
                    round(lat, 5),
                    round(lon, 5),
                    float(stars),
                    round(score, 1),
                    reviews,
                    round(dist, 1),
                    flag(0.2 + 0.17 * s),
                    flag(0.15 + 0.2 * s),
                    flag(0.85),
                    flag(0.1 + 0.2 * s),
                    flag(0.35),
                    flag(0.9),
                    flag(0.25 + (0.35 if brand else 0.0)),
                    flag(0.55 + 0.1 * s),
                    flag(0.08 + 0.1 * s),
                    flag(0.45),
                )
            )
            hotel_price = (
                cal.BASE_NIGHTLY_PRICE
                * price_index
                * (1 + cal.STAR_PRICE_STEP) ** (stars - 3)
                * rng.lognormal(0, 0.12)
            )
            demand = rng.lognormal(0, 0.3)
            n_rooms = int(rng.integers(3, 7))
            for r in rng.choice(len(ROOM_TYPES), size=n_rooms, replace=False):
                room_id += 1
                rtype, beds, bed_type, occ, size, factor, kitchen = ROOM_TYPES[int(r)]
                rooms.append(
                    (
                        room_id,
                        hotel_id,
                        rtype,
                        beds,
                        bed_type,
                        occ,
                        size + int(rng.integers(-2, 5)),
                        int(kitchen or rng.random() < 0.12),
                        flag(0.55 if park.state in ("AK", "WA", "OR") else 0.85),
                        flag(0.3 if rtype == "Bunkhouse Room" else 0.96),
                        flag(0.2 + 0.1 * s),
                        flag(0.3),
                        flag(0.7),
                    )
                )
                room_price = hotel_price * factor
                weekend_avail = np.where(weekend, cal.WEEKEND_AVAILABILITY_FACTOR, 1.0)
                avail = rng.poisson(cal.MEAN_ROOMS_AVAILABLE * demand * weekend_avail)
                n_plans = int(rng.integers(2, 4))
                for p in rng.choice(len(RATE_PLANS), size=n_plans, replace=False):
                    config_id += 1
                    rate_name, cancel, meal, prepay, rate_factor = RATE_PLANS[int(p)]
                    configs.append((config_id, room_id, rate_name))
                    wk = np.where(weekend, cal.WEEKEND_PRICE_FACTOR * rng.normal(1, 0.04, 31), 1.0)
                    lt = np.where(late, cal.LATE_AUGUST_FACTOR, 1.0)
                    prices = room_price * rate_factor * wk * lt * rng.lognormal(0, 0.05, 31)
                    for k in range(31):
                        offers.append(
                            (
                                config_id,
                                nights[k],
                                round(float(prices[k]), 2),
                                int(avail[k]),
                                cancel,
                                meal,
                                prepay,
                            )
                        )
    insert_rows(conn, "hotels", hotels)
    insert_rows(conn, "rooms", rooms)
    insert_rows(conn, "room_configs", configs)
    insert_rows(conn, "offers", offers)


# ---------------------------------------------------------------------------------- flights


def _utc_offset_hours(tz: str) -> float:
    from zoneinfo import ZoneInfo

    moment = dt.datetime(cal.YEAR, cal.MONTH, 15, 12, tzinfo=ZoneInfo(tz))
    return moment.utcoffset().total_seconds() / 3600


def _insert_flights(conn: sqlite3.Connection, seed: int) -> None:
    import airportsdata

    rng = _rng(seed, "flights")
    table = airports()
    iata = airportsdata.load("IATA")
    tz = {code: _utc_offset_hours(iata[code]["tz"]) for code in table}
    destinations = sorted({code for park in PARKS for code in park.airports})
    origins = sorted(DEPARTURE_CITIES.values())
    flights, templates, prices = [], [], []
    used_numbers: set[str] = set()
    flight_id = template_id = 0
    dates = list(cal.NIGHTS)

    def make_leg(airline: str, src: str, dst: str, hub: str | None) -> tuple:
        nonlocal flight_id
        flight_id += 1
        a, b = table[src], table[dst]
        if hub is None:
            km = haversine_km(a.lat, a.lon, b.lat, b.lon)
            minutes = km / 780 * 60 + 35
            layover = None
        else:
            h = table[hub]
            km = haversine_km(a.lat, a.lon, h.lat, h.lon) + haversine_km(h.lat, h.lon, b.lat, b.lon)
            layover = int(rng.integers(9, 37)) * 5
            minutes = km / 780 * 60 + 70 + layover
        duration = int(round(minutes / 5) * 5)
        dep = int(rng.integers(6 * 12, 21 * 12)) * 5  # minutes after midnight, 06:00-20:55
        arr_local = dep + duration + int(round((tz[dst] - tz[src]) * 60))
        while True:
            number = f"{airline}{int(rng.integers(100, 3000))}"
            if number not in used_numbers:
                used_numbers.add(number)
                break
        pet = ("in_cabin", "cargo_only", "not_allowed")[int(rng.choice(3, p=[0.6, 0.2, 0.2]))]
        flights.append(
            (
                flight_id,
                number,
                airline,
                src,
                dst,
                f"{dep // 60:02d}:{dep % 60:02d}",
                f"{(arr_local % 1440) // 60:02d}:{arr_local % 60:02d}",
                arr_local // 1440,
                duration,
                0 if hub is None else 1,
                hub,
                layover,
                int(rng.random() < (0.85 if airline in ("DL", "AS") else 0.65)),
                pet,
            )
        )
        regional = "regional" in (a.airport_type, b.airport_type)
        base = (45 + 0.075 * km) * (1.35 if regional else 1.0) * (0.9 if hub else 1.0)
        for cls in cal.BOOKING_CLASSES:
            noise = rng.lognormal(0, cal.FLIGHT_PRICE_SIGMA, len(dates))
            spikes = np.where(rng.random(len(dates)) < 0.05, rng.uniform(1.5, 2.5, len(dates)), 1.0)
            seats = rng.poisson(cal.CLASS_MEAN_SEATS[cls], len(dates))
            for k, day in enumerate(dates):
                peak = 1.15 if day.weekday() in (4, 6) else 1.0
                price = base * cal.CLASS_PRICE_FACTOR[cls] * peak * noise[k] * spikes[k]
                prices.append(
                    (flight_id, cls, day.isoformat(), round(float(price), 2), int(seats[k]))
                )
        return flight_id

    for dst in destinations:
        regional = table[dst].airport_type == "regional"
        share = cal.REGIONAL_ORIGIN_SHARE if regional else cal.MAJOR_ORIGIN_SHARE
        for src in origins:
            if (
                src == dst
                or haversine_km(table[src].lat, table[src].lon, table[dst].lat, table[dst].lon)
                < 300
            ):
                continue
            if rng.random() > share:
                continue
            carriers = sorted(AIRLINES)
            n_air = int(rng.integers(1, 3) if regional else rng.integers(2, 4))
            for airline in sorted(rng.choice(carriers, size=n_air, replace=False).tolist()):
                hubs = AIRLINES[airline][1]
                direct = src in hubs or dst in hubs or (not regional and rng.random() < 0.5)
                if direct:
                    hub = None
                else:
                    mid = [h for h in hubs if h not in (src, dst)]
                    hub = min(
                        mid,
                        key=lambda h: (
                            driving_km(table[src].lat, table[src].lon, table[h].lat, table[h].lon)
                            + driving_km(table[h].lat, table[h].lon, table[dst].lat, table[dst].lon)
                        ),
                    )
                n_legs = 1 if regional else int(rng.integers(1, 3))
                out_legs = [make_leg(airline, src, dst, hub) for _ in range(n_legs)]
                ret_legs = [make_leg(airline, dst, src, hub) for _ in range(n_legs)]
                for o in out_legs:
                    for r in ret_legs:
                        for cls in cal.BOOKING_CLASSES:
                            template_id += 1
                            templates.append((template_id, o, r, cls))
    insert_rows(conn, "flights", flights)
    insert_rows(conn, "flight_templates", templates)
    insert_rows(conn, "flight_prices", prices)


# ---------------------------------------------------------------------------------- permits

_PERMIT_SHAPE = {
    # type: (price range per person, party size range, duration range, capacity range)
    "day_hike": ((6.0, 16.0), (4, 8), (1, 1), (40, 300)),
    "guided_tour": ((25.0, 95.0), (6, 12), (1, 1), (20, 80)),
    "backpacking": ((10.0, 36.0), (4, 12), (1, 4), (12, 60)),
}


def _insert_permits(conn: sqlite3.Connection, seed: int) -> None:
    rng = _rng(seed, "permits")
    permits, availability = [], []
    for permit_id, (park_id, name, ptype, desc) in enumerate(PERMITS[: cal.PERMIT_COUNT], start=1):
        (plo, phi), (slo, shi), (dlo, dhi), (clo, chi) = _PERMIT_SHAPE[ptype]
        max_days = int(rng.integers(dlo + 1, dhi + 1)) if ptype == "backpacking" else 1
        start = f"{int(rng.integers(5, 11)):02d}:{int(rng.choice([0, 30])):02d}"
        permits.append(
            (
                permit_id,
                park_id,
                name,
                ptype,
                desc,
                round(float(rng.uniform(plo, phi)), 2),
                int(rng.integers(slo, shi + 1)),
                1,
                max_days,
                start,
            )
        )
        capacity = int(rng.integers(clo, chi + 1))
        sold_out = rng.uniform(0.15, 0.5)  # high demand: many dates gone
        for day in cal.NIGHTS:
            pressure = 0.35 if day.weekday() in cal.WEEKEND_WEEKDAYS else 1.0
            left = 0 if rng.random() < sold_out else int(rng.binomial(capacity, 0.5 * pressure))
            availability.append((permit_id, day.isoformat(), left))
    insert_rows(conn, "permits", permits)
    insert_rows(conn, "permit_availability", availability)
