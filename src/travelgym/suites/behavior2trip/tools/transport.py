"""Transport and weather tools: FlightSearch, TrainSearch, WeatherSearch."""

from __future__ import annotations

import json
from typing import Any

from travelgym.geo import haversine_km
from travelgym.suites.behavior2trip import vocab
from travelgym.suites.behavior2trip.context import TripsContext
from travelgym.suites.behavior2trip.schema import DATES
from travelgym.suites.behavior2trip.tools.common import (
    N,
    matches,
    parse_date,
    placeholders,
    preferences_type,
)
from travelgym.toolkit import ContentError, tool

FLIGHT_KEYS = {"cabin_class": vocab.FLIGHT_SEAT_CLASSES}
FlightPreferences = preferences_type(FLIGHT_KEYS)

_FLIGHT_COLS = """flight_id, flight_number, airline, airline_code, dep_city, arr_city,
    dep_airport, dep_airport_code, dep_terminal, arr_airport, arr_airport_code, arr_terminal,
    dep_date, dep_time, arr_date, arr_time, duration_min, aircraft, cabin_class, cabin_code,
    adult_fare, adult_total, child_fare, child_total, fuel_surcharge, airport_fee, discount,
    on_time_rate, meal, codeshare"""
_TRAIN_COLS = """train_id, train_number, train_type, dep_city, arr_city, dep_station, arr_station,
    dep_time, arr_time, arr_day_offset, travel_minutes, travel_time, seats"""


def _route(ctx: TripsContext, origin: str, destination: str) -> tuple[dict, dict]:
    a = ctx.resolve_city(origin, "origin city")
    b = ctx.resolve_city(destination, "destination city")
    if a["city_id"] == b["city_id"]:
        raise ContentError(f"origin and destination are both {a['name']}; use MapGuide in a city")
    return a, b


def _first(ctx: TripsContext, table: str, columns: str, cond: str, params: list, order_by: str,
           n: int) -> tuple[int, list[dict[str, Any]]]:  # fmt: skip
    """How many rows of ``table`` meet ``cond``, and the first ``n`` of them by ``order_by``."""
    total = ctx.conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {cond}", params).fetchone()[0]
    sql = f"SELECT {columns} FROM {table} WHERE {cond} ORDER BY {order_by} LIMIT ?"
    return total, ctx.rows(sql, [*params, n])


def _km(a: dict, b: dict) -> float:
    return round(haversine_km(a["lat"], a["lon"], b["lat"], b["lon"]))


@tool
def FlightSearch(
    ctx: TripsContext,
    origin: str,
    destination: str,
    departure_date: str,
    n: N = 5,
    preferences: FlightPreferences = None,
) -> dict:
    """Find direct flights between two cities on a date (one row per flight and cabin).

    Results are ordered by departure time, then adult total price, then flight_id.

    Args:
        origin: Departure city name (or an IATA city/airport code such as 'PEK').
        destination: Arrival city name (or an IATA city/airport code).
        departure_date: Date of departure, YYYY-MM-DD (2025-10-01 to 2025-11-29).
        n: Number of flight offers to return (1-50).
        preferences: Optional filter. cabin_class: cabins, any of them matches (e.g.
            ['Business Class']).

    Returns:
        The route, date, number of matching offers and the top n with flight_id, flight number,
        airline, airports and terminals, departure and arrival times, duration, aircraft, cabin,
        fares and totals (CNY), discount, on-time rate and meal; a note when no flight flies the
        route.
    """
    a, b = _route(ctx, origin, destination)
    date = parse_date(departure_date, "departure_date")
    for city in (a, b):
        if city["city_code"] is None:
            raise ContentError(f"{city['name']} has no airport; search trains (TrainSearch) or "
                               "fly to a nearby city such as Shanghai")  # fmt: skip
    cabins = (preferences or {}).get("cabin_class") or list(vocab.FLIGHT_SEAT_CLASSES)
    cond = f"dep_city_id = ? AND arr_city_id = ? AND dep_date = ? AND cabin_class IN ({placeholders(cabins)})"
    params = [a["city_id"], b["city_id"], date, *cabins]
    total, results = _first(ctx, "flights", _FLIGHT_COLS, cond, params,
                             "dep_time, adult_total, flight_id", n)  # fmt: skip
    order = "departure time, then adult total price, then flight_id"
    out: dict[str, Any] = {"origin": a["name"], "destination": b["name"],
                           "departure_date": date, "preferences": preferences or {},
                           **matches(order, total, results)}  # fmt: skip
    if total == 0:
        out["note"] = (f"no direct flight from {a['name']} to {b['name']} on {date} "
                       f"({_km(a, b)} km apart); try TrainSearch")  # fmt: skip
    return out


@tool
def TrainSearch(
    ctx: TripsContext, origin: str, destination: str, n: N = 5, date: str | None = None
) -> dict:
    """Find direct trains between two cities (high-speed and regular; they run daily).

    Results are ordered by departure time, then train_id.

    Args:
        origin: Departure city name.
        destination: Arrival city name.
        n: Number of trains to return (1-50).
        date: Optional travel date, YYYY-MM-DD (2025-10-01 to 2025-11-29); the timetable is the
            same every day.

    Returns:
        The route, the number of trains and the top n with train_id, number, type (High-speed
        Rail or Regular Train), stations, times, travel time and seats, cheapest first: the
        seat type the train sells (high-speed: Second / First Class Seat; regular: Hard Seat,
        Hard Sleeper, Soft Sleeper), the seat class it counts as (Second Class Seat for second
        class seats, hard seats and hard sleepers; First Class Seat for first class seats and
        soft sleepers) and its fare in CNY; a note when no train runs.
    """
    a, b = _route(ctx, origin, destination)
    day = parse_date(date, "date") if date is not None else None
    params = [a["city_id"], b["city_id"]]
    cond = "dep_city_id = ? AND arr_city_id = ?"
    total, results = _first(ctx, "trains", _TRAIN_COLS, cond, params, "dep_time, train_id", n)
    for r in results:
        r["seats"] = json.loads(r["seats"])
    out: dict[str, Any] = {"origin": a["name"], "destination": b["name"], "date": day,
                           **matches("departure time, then train_id", total, results)}  # fmt: skip
    if total == 0:
        out["note"] = (f"no direct train from {a['name']} to {b['name']} ({_km(a, b)} km apart); "
                       "try FlightSearch")  # fmt: skip
    return out


@tool
def WeatherSearch(ctx: TripsContext, city: str, date: str | None = None, n: N = 5) -> dict:
    """Get the daily weather forecast of a city: n consecutive days from a date.

    Results are ordered by date.

    Args:
        city: City name.
        date: First date, YYYY-MM-DD (2025-10-01 to 2025-11-29); default the first date of the
            data window.
        n: Number of days to return (1-50), cut at the end of the window (2025-11-29).

    Returns:
        The city, a short city description and one entry per day with date, max and min
        temperature (Celsius), weather, wind and air quality.
    """
    row = ctx.resolve_city(city)
    start = parse_date(date, "date") if date is not None else DATES[0]
    results = ctx.rows(
        """SELECT date, max_temp, min_temp, weather, wind_direction, wind_level, aqi, air_quality
             FROM weather WHERE city_id = ? AND date >= ? ORDER BY date LIMIT ?""",
        [row["city_id"], start, n],
    )
    return {
        "city": row["name"],
        "province": row["province"],
        "description": row["description"],
        "count": len(results),
        "results": results,
    }
