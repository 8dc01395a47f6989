"""MapGuide: routes between two places, within a city or between two cities.

Within a city the distance is the great circle between the two places; walking takes 1.25 times
it at 4.8 km/h, road trips 1.3 times it (taxi and ride-sharing at 28 km/h, bus at 18 km/h plus
stops, subway at 35 km/h plus walking to and waiting at stations, where the city has a metro).
Road trips longer than 10 km (an airport or an outlying station) leave the streets for the
expressway: beyond the first 10 km taxis and ride-sharing drive 70 km/h, buses 50 km/h (Lhasa's
Gonggar airport, 45 km out, is an hour's drive, not two).
Between cities MapGuide gives the driving estimate (80 km/h on 1.3 times the distance) and a
summary of the direct flights, trains and long-distance buses between the two cities.
"""

from __future__ import annotations

import math
from typing import Any

from travelgym.geo import haversine_km
from travelgym.suites.behavior2trip.context import Place, TripsContext
from travelgym.toolkit import tool

NO_METRO = {"Lijiang", "Zhangjiajie", "Huangshan", "Lhasa", "Sanya", "Guilin"}
WALK_FACTOR, ROAD_FACTOR = 1.25, 1.3
URBAN_KM = 10.0  # road km driven at street speed before an expressway takes over


def _route(mode: str, km: float, minutes: float, cost: float) -> dict[str, Any]:
    return {"mode": mode, "distance_km": round(km, 1), "minutes": int(math.ceil(minutes)),
            "cost": round(float(cost), 1)}  # fmt: skip


def city_routes(a: Place, b: Place) -> tuple[float, list[dict[str, Any]]]:
    """Straight-line km and the walking, subway, bus, taxi and ride-sharing options."""
    km = haversine_km(a.lat, a.lon, b.lat, b.lon)
    walk, road = km * WALK_FACTOR, km * ROAD_FACTOR
    taxi_cost = 13 + max(0.0, road - 3) * 2.5
    routes = [_route("Walking", walk, walk / 4.8 * 60, 0)]
    if a.city not in NO_METRO:
        routes.append(_route("Subway", road, 13 + road / 35 * 60, min(10, 3 + road // 10)))
    car, bus = _road_minutes(road, 28, 70), _road_minutes(road, 18, 50)
    routes += [
        _route("Bus", road, 12 + bus, 2),
        _route("Taxi", road, 4 + car, taxi_cost),
        _route("Ride-sharing", road, 7 + car, taxi_cost * 0.85),
    ]
    return km, routes


def _road_minutes(road_km: float, street_kmh: float, expressway_kmh: float) -> float:
    """Minutes on the road: the first :data:`URBAN_KM` in the streets, the rest on expressways."""
    urban = min(road_km, URBAN_KM)
    return urban / street_kmh * 60 + (road_km - urban) / expressway_kmh * 60


def _intercity(ctx: TripsContext, a: dict, b: dict) -> list[dict[str, Any]]:
    ids = (a["city_id"], b["city_id"])
    out = []
    flights = ctx.conn.execute(
        """SELECT COUNT(DISTINCT flight_number), MIN(duration_min), MIN(adult_total)
             FROM flights WHERE dep_city_id = ? AND arr_city_id = ?""",
        ids,
    ).fetchone()
    out.append(_summary("Airplane", flights, "FlightSearch", per_day=flights[0]))
    for kind in ("High-speed Rail", "Regular Train"):
        trains = ctx.conn.execute(
            """SELECT COUNT(*), MIN(travel_minutes), MIN(fare) FROM trains
                WHERE dep_city_id = ? AND arr_city_id = ? AND train_type = ?""",
            (*ids, kind),
        ).fetchone()
        out.append(_summary(kind, trains, "TrainSearch", per_day=trains[0]))
    buses = ctx.rows(
        """SELECT bus_id, bus_number, dep_station, arr_station, dep_time, arr_time,
                  arr_day_offset, travel_minutes, fare
             FROM buses WHERE dep_city_id = ? AND arr_city_id = ? ORDER BY dep_time, bus_id""",
        ids,
    )
    bus = {"mode": "Long-distance Bus", "available": bool(buses), "departures": buses}
    if buses:
        bus |= {"fastest_minutes": min(x["travel_minutes"] for x in buses),
                "lowest_fare": min(x["fare"] for x in buses)}  # fmt: skip
    out.append(bus)
    return out


def _summary(mode: str, row: tuple, tool_name: str, per_day: int) -> dict[str, Any]:
    if not row[0]:
        return {"mode": mode, "available": False}
    return {"mode": mode, "available": True, "services_per_day": per_day,
            "fastest_minutes": row[1], "lowest_fare": row[2], "search_with": tool_name}  # fmt: skip


@tool
def MapGuide(
    ctx: TripsContext,
    origin_cityName: str,
    origin: str,
    destination_cityName: str,
    destination: str,
) -> dict:
    """Plan routes from a place to another, within one city or between two cities.

    Places are POI names or ids (from the search tools), railway or bus stations, airports, or
    the city name itself (the city centre); names match ignoring case, and close misspellings
    are accepted when unambiguous.

    Args:
        origin_cityName: City of the origin, e.g. 'Beijing'.
        origin: The origin place, e.g. 'The Forbidden City', 'H00012' or 'Beijing South'.
        destination_cityName: City of the destination (the same city for a local route).
        destination: The destination place.

    Returns:
        The resolved origin and destination (name, type, id, coordinates), the straight-line
        distance in km and the routes: within a city Walking, Subway (where there is a metro),
        Bus, Taxi and Ride-sharing with distance, minutes and cost (CNY); between cities Driving
        plus an intercity summary per mode (Airplane, High-speed Rail, Regular Train,
        Long-distance Bus) saying whether it runs, how often, the fastest time and lowest fare.
    """
    city_a = ctx.resolve_city(origin_cityName, "origin city")
    city_b = ctx.resolve_city(destination_cityName, "destination city")
    a = ctx.resolve_place(city_a, origin)
    b = ctx.resolve_place(city_b, destination)
    out: dict[str, Any] = {"origin": a.as_dict(), "destination": b.as_dict()}
    if city_a["city_id"] == city_b["city_id"]:
        km, routes = city_routes(a, b)
        return out | {"same_city": True, "distance_km": round(km, 2), "routes": routes}
    km = haversine_km(a.lat, a.lon, b.lat, b.lon)
    road = km * ROAD_FACTOR
    driving = _route("Driving", road, road / 80 * 60, road * 0.8)
    return out | {
        "same_city": False,
        "distance_km": round(km, 1),
        "routes": [driving],
        "intercity": _intercity(ctx, city_a, city_b),
    }
