"""Generate flights, trains, long-distance buses and weather.

Flights: every ordered pair of cities with an airport at least 350 km apart has daily scheduled
flights (more between bigger cities); each schedule operates on most dates of the window and each
operation is one row per cabin (economy always, business except on low-cost and regional
aircraft). Fares follow a full fare of about 1.05 CNY/km with date-dependent discounts (Golden
Week and weekends dearer). Trains run daily between cities linked by rail (high-speed where both
ends have it; seats and fares in :mod:`gen_train_fares`), buses between cities within 600 km on
the mainland.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterator
from functools import lru_cache

import numpy as np

from travelgym.db import ContentHasher
from travelgym.geo import haversine_km
from travelgym.suites.behavior2trip import catalog as cat
from travelgym.suites.behavior2trip.gen_common import allocate, city_slug, draws, rng
from travelgym.suites.behavior2trip.gen_train_fares import RouteFares, seat_columns, seats_sold
from travelgym.suites.behavior2trip.schema import DATES
from travelgym.suites.behavior2trip.vocab import CITIES

FULL_FLIGHT_SCHEDULES = 6_570  # about 710k flight rows (Table 6: 710,633)
SMALL_FLIGHT_SCHEDULE_DIVISOR = 5
FULL_TRAINS = 10_371  # Table 6
SMALL_TRAIN_DIVISOR = 3
MIN_FLIGHT_KM = 350
BUS_MAX_KM = 600
_ISLAND_OR_PLATEAU = {"Sanya", "Lhasa"}
_LHASA_RAIL = {"Beijing", "Shanghai", "Guangzhou", "Chengdu", "Chongqing", "Xi'an"}
_DATE_OBJS = [dt.date.fromisoformat(d) for d in DATES]


def insert_small_transport(conn: sqlite3.Connection, seed: int, geo: dict,
                           hasher: ContentHasher) -> None:  # fmt: skip
    """Generate, insert and hash buses and weather, the last tables of the hash order."""
    rows = bus_rows(seed, geo)
    conn.executemany(f"INSERT INTO buses VALUES ({', '.join('?' * 13)})", rows)
    hasher.add_rows("buses", rows)
    _insert_weather(conn, seed, geo)
    hasher.add_table("weather")


def _km(geo: dict, a: str, b: str) -> float:
    (la, lo), (lb, lob) = geo["coords"][a], geo["coords"][b]
    return haversine_km(la, lo, lb, lob)


def hhmm(minutes: int) -> str:
    minutes %= 1440
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _demand(day: dt.date) -> float:
    """Relative demand of a travel date: Golden Week, weekends, the November lull."""
    if day <= dt.date(2025, 10, 7):
        return 1.45
    base = 0.88 if day.month == 11 else 1.0
    return base * (1.12 if day.weekday() in (4, 6) else 1.0)


def _airline_weights(a: str, b: str) -> np.ndarray:
    w = [4.0 if (a in hubs or b in hubs) else (0.15 if code in ("TV", "GS", "GJ") else 0.6)
         for code, _, hubs in cat.AIRLINES]  # fmt: skip
    arr = np.array(w)
    return arr / arr.sum()


@lru_cache(maxsize=1024)
def _airline_cdf(a: str, b: str) -> np.ndarray:
    """The cdf ``Generator.choice`` builds from :func:`_airline_weights`."""
    cdf = _airline_weights(a, b).cumsum()
    cdf /= cdf[-1]
    return cdf


def _pick_index(r: np.random.Generator, cdf: np.ndarray) -> int:
    """``r.choice(len(cdf), p=p)`` for the ``cdf`` of ``p``: the same single uniform draw."""
    return int(cdf.searchsorted(r.random(), side="right"))


# ------------------------------------------------------------------------------------ flights


def _routes(scale: str, geo: dict) -> list[tuple[str, str, int]]:
    """(from, to, number of schedules) of every flight route, in generation order."""
    fly = [c for c in CITIES if cat.CITY_INFO[c].airports]
    routes = [(a, b) for a in fly for b in fly if a != b and _km(geo, a, b) >= MIN_FLIGHT_KM]
    weights = [cat.CITY_INFO[a].tier * cat.CITY_INFO[b].tier for a, b in routes]
    full = allocate(FULL_FLIGHT_SCHEDULES, weights, minimum=1)
    counts = (
        full
        if scale == "full"
        else [max(1, round(k / SMALL_FLIGHT_SCHEDULE_DIVISOR)) for k in full]
    )
    return [(a, b, k) for (a, b), k in zip(routes, counts, strict=True)]


FlightJob = tuple[int, dict, list[tuple[str, str, int]], dict[str, int], int]
SCHEDULES_PER_JOB = 80  # about 9,000 rows


def flight_job_routes(scale: str, geo: dict) -> list[list[tuple[str, str, int]]]:
    """The routes of each flight job: whole routes, about :data:`SCHEDULES_PER_JOB` schedules
    a job (known without drawing anything, so the number of jobs is known up front)."""
    chunks: list[list[tuple[str, str, int]]] = [[]]
    schedules = 0
    for a, b, k in _routes(scale, geo):
        chunks[-1].append((a, b, k))
        schedules += k
        if schedules >= SCHEDULES_PER_JOB:
            chunks.append([])
            schedules = 0
    return [c for c in chunks if c]


def flight_jobs(
    seed: int, geo: dict, chunks: list[list[tuple[str, str, int]]]
) -> Iterator[FlightJob]:
    """The jobs of :func:`flight_rows` for ``chunks``, one at a time: flight numbers and ids
    run on across routes, so each job's start comes from making (only) the draws of the
    routes before it."""
    terminals = geo["terminals"]
    numbers: dict[str, int] = {}
    flight_id = 0
    for chunk in chunks:
        yield seed, geo, chunk, dict(numbers), flight_id
        for a, b, k in chunk:
            r = draws(rng(seed, "flights", a, b))
            for _ in range(k):
                flight_id = _schedule_rows(r, a, b, geo, terminals, numbers, flight_id, None)


def flight_rows(seed: int, geo: dict, routes: list[tuple[str, str, int]],
                numbers: dict[str, int], flight_id: int) -> list[tuple]:  # fmt: skip
    """The flights rows of ``routes`` (a job of :func:`flight_jobs`), in flight id order."""
    numbers = dict(numbers)
    rows: list[tuple] = []
    for a, b, k in routes:
        r = draws(rng(seed, "flights", a, b))
        for _ in range(k):
            flight_id = _schedule_rows(r, a, b, geo, geo["terminals"], numbers, flight_id, rows)
    return rows


_DEMAND = np.array([_demand(day) for day in _DATE_OBJS])
# ISO dates 0 and 1 days after each date of the window (a flight lands on the next day at most)
_ARR_DATES = [[(day + dt.timedelta(days=k)).isoformat() for day in _DATE_OBJS] for k in (0, 1)]
_OPERATES = 0.94


def _schedule_rows(r, a, b, geo, terminals, numbers, flight_id, rows):
    """Append the rows of one flight schedule (each operating date, each cabin) to ``rows`` and
    return the last flight id; with ``rows`` None only draw (the same numbers). The draws are
    those of generator 1.0; the fares of all dates are computed at once with the same float
    operations as its loop over dates."""
    ia, ib = cat.CITY_INFO[a], cat.CITY_INFO[b]
    code, airline, _ = cat.AIRLINES[_pick_index(r, _airline_cdf(a, b))]
    numbers[code] = numbers.get(code, 1000) + int(r.integers(1, 12))
    number = f"{code}{numbers[code]}"
    dep_ap = ia.airports[0 if len(ia.airports) == 1 or r.random() < 0.6 else 1]
    arr_ap = ib.airports[0 if len(ib.airports) == 1 or r.random() < 0.6 else 1]
    pa, pb = geo["airports"][dep_ap], geo["airports"][arr_ap]
    km = haversine_km(pa["lat"], pa["lon"], pb["lat"], pb["lon"])
    duration = int(round((km / 780 * 60 + 40) / 5) * 5)
    dep_min = int(r.integers(78, 271)) * 5  # 06:30 .. 22:30
    if km < 900 and r.random() < 0.12:
        aircraft = cat.AIRCRAFT_REGIONAL[0]
    elif km > 1500 and min(ia.tier, ib.tier) >= 1.2 and r.random() < 0.35:
        aircraft = cat.AIRCRAFT_WIDE[int(r.integers(len(cat.AIRCRAFT_WIDE)))]
    else:
        aircraft = cat.AIRCRAFT_NARROW[int(r.integers(len(cat.AIRCRAFT_NARROW)))]
    business = code not in cat.LOW_COST_AIRLINES and aircraft not in cat.AIRCRAFT_REGIONAL
    full_y = round(km * 1.05 + 80, -1)
    full_c = round(full_y * 2.8, -1)
    route_discount = float(r.uniform(0.45, 0.75))
    on_time = round(float(r.uniform(0.68, 0.96)), 3)
    meal = "Meal" if km > 1200 else ("Snack" if km > 600 or r.random() < 0.5 else "None")
    codeshare = None
    if r.random() < 0.2:
        partner = cat.AIRLINES[int(r.integers(len(cat.AIRLINES)))][0]
        codeshare = f"{partner}{int(r.integers(5000, 9999))}" if partner != code else None
    t_dep = terminals[dep_ap][int(r.integers(len(terminals[dep_ap])))]
    t_arr = terminals[arr_ap][int(r.integers(len(terminals[arr_ap])))]
    surcharge = 60.0 if km <= 800 else 120.0
    arr_min = dep_min + duration
    op = np.flatnonzero(r.random(len(DATES)) < _OPERATES)
    noise = r.lognormal(0, 0.15, size=(len(DATES), 2))[op]
    if rows is None:
        return flight_id + len(op) * (2 if business else 1)
    demand = _DEMAND[op]
    fixed = (number, airline, code, city_slug(a), city_slug(b), a, b, ia.city_code, ib.city_code,
             pa["name"], pb["name"], dep_ap, arr_ap)  # fmt: skip
    timing = (hhmm(dep_min), hhmm(arr_min), duration, t_dep, t_arr, aircraft)
    dep_dates = [DATES[d] for d in op.tolist()]
    arr_dates = _ARR_DATES[arr_min // 1440]
    arr_dates = [arr_dates[d] for d in op.tolist()]
    cabins = [_cabin_fares("Economy Class", full_y, route_discount * demand, noise[:, 0], 0.3,
                           surcharge)]  # fmt: skip
    if business:
        cabins.append(
            _cabin_fares("Business Class", full_c, 0.8 * demand, noise[:, 1], 0.6, surcharge)
        )
    tail = (on_time, meal, codeshare)
    for k in range(len(dep_dates)):
        for cabin, codes, fares, totals, discs, child in cabins:
            flight_id += 1
            rows.append((flight_id, *fixed, dep_dates[k], arr_dates[k], *timing, cabin, codes[k],
                         fares[k], child, totals[k], child + surcharge / 2, surcharge, 50.0,
                         discs[k], *tail))  # fmt: skip
    return flight_id


def _cabin_fares(cabin: str, full_fare: float, base: np.ndarray, noise: np.ndarray,
                 floor: float, surcharge: float) -> tuple:  # fmt: skip
    """(cabin, codes, fares, adult totals, discounts, child fare) of one cabin on each operating
    date: the discount ``min(1, max(floor, base * noise))`` to 2 decimals, the fare to 10 CNY.
    A clamped discount was a Python float in generator 1.0, whose fare Python's ``round``
    rounded (numpy's otherwise): those fares are rounded again the Python way."""
    raw = base * noise
    low = raw <= floor
    high = ~low & (raw >= 1.0)
    discs = np.round(np.where(low, floor, np.where(high, 1.0, raw)), 2).tolist()
    fares = np.round(full_fare * np.array(discs), -1).tolist()
    for j in np.flatnonzero(low | high).tolist():
        fares[j] = round(full_fare * discs[j], -1)
    codes = [_cabin_code(cabin, d) for d in discs]
    totals = [f + surcharge + 50.0 for f in fares]
    return cabin, codes, fares, totals, discs, round(full_fare * 0.5, -1)


@lru_cache(maxsize=1024)
def _cabin_code(cabin: str, discount: float) -> str:
    if cabin == "Business Class":
        return "C" if discount >= 0.9 else "D" if discount >= 0.75 else "I"
    steps = (0.95, 0.85, 0.75, 0.65, 0.55, 0.45, 0.38)
    for code, floor in zip(cat.ECONOMY_CODES, steps, strict=False):
        if discount >= floor:
            return code
    return cat.ECONOMY_CODES[-1]


# ------------------------------------------------------------------------------ trains, buses


def rail_modes(a: str, b: str, km: float) -> tuple[bool, bool]:
    """(high-speed, regular) availability between two cities."""
    if a in _ISLAND_OR_PLATEAU or b in _ISLAND_OR_PLATEAU:
        if "Lhasa" in (a, b):
            return False, (b if a == "Lhasa" else a) in _LHASA_RAIL
        return False, km <= 2600
    if "Lijiang" in (a, b):
        return {a, b} == {"Lijiang", "Kunming"}, km <= 2600
    return km <= 2300, km <= 3200


def train_rows(seed: int, scale: str, geo: dict) -> list[tuple]:
    """Every trains row, in train id order."""
    pairs, weights = [], []
    for a in CITIES:
        for b in CITIES:
            km = _km(geo, a, b) if a != b else 0
            if a != b and any(modes := rail_modes(a, b, km)):
                pairs.append((a, b, km, modes))
                near = 1.6 if 150 <= km <= 1300 else 1.0
                weights.append(cat.CITY_INFO[a].tier * cat.CITY_INFO[b].tier * near)
    full = allocate(FULL_TRAINS, weights, minimum=1)
    counts = full if scale == "full" else [max(1, round(k / SMALL_TRAIN_DIVISOR)) for k in full]
    serial = {"G": 1, "D": 1, "Z": 1, "T": 1, "K": 1}
    rows, train_id = [], 0
    for (a, b, km, (hsr, regular)), k in zip(pairs, counts, strict=True):
        r = draws(rng(seed, "trains", a, b))
        rail_km = km * 1.25
        # fares from their own stream, so the timetable is the one of generator 1.0
        fare_r = draws(rng(seed, "train_fares", a, b))
        route_fares = RouteFares(fare_r, rail_km)
        for j in range(k):
            fast = hsr and (not regular or j == 0 or r.random() < (0.8 if km < 1500 else 0.5))
            letter = ("G" if r.random() < 0.75 else "D") if fast else _pick_regular(r)
            speed = {"G": 300, "D": 220, "Z": 115, "T": 95, "K": 80}[letter]
            minutes = int(rail_km / speed * 60 + rail_km / 50 + 10)
            if fast:  # high-speed trains run 06:00-23:30
                latest = max(72, min(240, (1410 - minutes) // 5))
                dep = int(r.integers(72, latest + 1)) * 5
            else:
                dep = int(r.integers(0, 288)) * 5
            st_a = _station(r, a, fast)
            st_b = _station(r, b, fast)
            premium = (
                fast and (letter == "G" or r.random() < 0.85) or (not fast and r.random() < 0.6)
            )
            seats = seats_sold(fare_r, letter, minutes, premium)
            second, first, seats_json, lowest = seat_columns(route_fares.fares(letter, seats))
            train_id += 1
            serial[letter] += int(r.integers(1, 9))
            rows.append((train_id, f"{letter}{serial[letter]}",
                         "High-speed Rail" if fast else "Regular Train", city_slug(a),
                         city_slug(b), a, b, st_a, st_b, hhmm(dep), hhmm(dep + minutes),
                         (dep + minutes) // 1440, minutes, f"{minutes // 60}h {minutes % 60:02d}m",
                         second, first, lowest, seats_json))  # fmt: skip
    return rows


def _pick_regular(r: np.random.Generator) -> str:
    x = r.random()
    return "Z" if x < 0.3 else "T" if x < 0.6 else "K"


def _station(r: np.random.Generator, city: str, fast: bool) -> str:
    stations = cat.CITY_INFO[city].stations
    if fast or len(stations) == 1:
        return stations[0]
    return stations[1 + int(r.integers(len(stations) - 1))]


def bus_rows(seed: int, geo: dict) -> list[tuple]:
    """Every buses row, in bus id order."""
    rows, bus_id = [], 0
    for a in CITIES:
        for b in CITIES:
            if a == b or a in _ISLAND_OR_PLATEAU or b in _ISLAND_OR_PLATEAU:
                continue
            km = _km(geo, a, b)
            if km > BUS_MAX_KM:
                continue
            r = rng(seed, "buses", a, b)
            road_km = km * 1.3
            minutes = int(road_km / 70 * 60 + 30)
            for dep in sorted(int(x) * 5 for x in r.integers(78, 217, size=3)):
                bus_id += 1
                rows.append((bus_id, f"B{bus_id:04d}", city_slug(a), city_slug(b), a, b,
                             f"{a} Long-distance Bus Station", f"{b} Long-distance Bus Station",
                             hhmm(dep), hhmm(dep + minutes), (dep + minutes) // 1440, minutes,
                             round(road_km * 0.35 + 10)))  # fmt: skip
    return rows


# ------------------------------------------------------------------------------------ weather


def _insert_weather(conn: sqlite3.Connection, seed: int, geo: dict) -> None:
    rows = []
    for city in CITIES:
        info = cat.CITY_INFO[city]
        oct_max, oct_min, nov_max, nov_min, rain = info.climate
        r = rng(seed, "weather", city)
        lat = geo["coords"][city][0]
        anomaly = 0.0
        for d, date in enumerate(DATES):
            f = (d - 15) / 30  # 0 in mid October, 1 in mid November
            anomaly = 0.6 * anomaly + float(r.normal(0, 1.8))
            hi = round(oct_max + (nov_max - oct_max) * f + anomaly)
            lo = round(min(hi - 3, oct_min + (nov_min - oct_min) * f + anomaly * 0.8))
            kind = _weather_kind(r, rain, hi)
            base_aqi = 30 + max(0.0, lat - 28) * 3.5 + info.tier * 12 + (15 * f if lat > 34 else 0)
            aqi = int(base_aqi * float(r.lognormal(0, 0.3)) * (0.7 if "Rain" in kind else 1.0))
            wind = int(
                np.clip(r.normal(3 if kind in ("Thunderstorm", "Moderate Rain") else 2, 1), 1, 6)
            )
            direction = cat.WIND_DIRECTIONS[int(r.integers(len(cat.WIND_DIRECTIONS)))]
            rows.append((city_slug(city), date, city, hi, lo, kind, direction, wind, aqi,
                         _air_quality(aqi)))  # fmt: skip
    conn.executemany("INSERT INTO weather VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)


def _weather_kind(r: np.random.Generator, rain: float, hi: int) -> str:
    x = r.random()
    if x < rain:
        if hi <= 3:
            return "Snow"
        if hi >= 24 and r.random() < 0.25:
            return "Thunderstorm"
        return "Light Rain" if r.random() < 0.65 else "Moderate Rain"
    if x < rain + 0.04:
        return "Fog"
    y = r.random()
    return "Sunny" if y < 0.45 else "Cloudy" if y < 0.8 else "Overcast"


def _air_quality(aqi: int) -> str:
    for limit, label in ((50, "Excellent"), (100, "Good"), (150, "Lightly Polluted"),
                         (200, "Moderately Polluted")):  # fmt: skip
        if aqi <= limit:
            return label
    return "Heavily Polluted"
