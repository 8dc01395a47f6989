"""The scripted baseline's information gathering: every fact comes from a tool call (recorded
in the episode), cached per episode; candidates are tool rows."""

from __future__ import annotations

import math
from typing import Any

from travelgym.geo import haversine_km
from travelgym.suites.behavior2trip.agents.base import TripToolSession
from travelgym.suites.behavior2trip.context import Place
from travelgym.suites.behavior2trip.plan import clock_minutes
from travelgym.suites.behavior2trip.tools.mapguide import city_routes

DAY = 24 * 60
BREAKFAST_CUISINES = ["Snacks/Fast Food", "Bakery/Desserts", "Beverages"]
WALK_MAX_MINUTES = 8  # walk a local leg when it is this short
PARTY_PER_CAR = 4
TRAIN_SEATS = ("Second Class Seat", "First Class Seat")
FLIGHT_CABINS = ("Economy Class", "Business Class")
MODE_OF_VOCAB = {"Airplane": "flight", "High-speed Rail": "train", "Regular Train": "train",
                 "Long-distance Bus": "bus"}  # fmt: skip


def hours_of(row: dict[str, Any]) -> tuple[int, int] | None:
    """Opening minutes of a POI row (a close at or before the opening is after midnight)."""
    o, c = clock_minutes(row.get("open_time")), clock_minutes(row.get("close_time"))
    if o is None or c is None:
        return None
    return (o, c + DAY if c <= o else c)


def km(a: dict[str, Any], b: dict[str, Any]) -> float:
    return haversine_km(a["lat"], a["lon"], b["lat"], b["lon"])


class Toolbox:
    """Tool calls through the episode's environment, each distinct call made once."""

    def __init__(self, env: TripToolSession, travellers: int) -> None:
        self.env = env
        self.travellers = travellers
        self._cache: dict[tuple, Any] = {}
        self._routes: dict[tuple, Any] = {}  # MapGuide's legs and places, by names

    def call(self, name: str, **args: Any) -> Any:
        key = (name, tuple(sorted((k, repr(v)) for k, v in args.items())))
        if key not in self._cache:
            record = self.env.call(name, args)
            self._cache[key] = self.env.payload(record) if record.ok else None
        return self._cache[key]

    def search(
        self, name: str, city: str, preferences: dict | None = None, n: int = 50
    ) -> list[dict]:
        args: dict[str, Any] = {"city": city, "n": n}
        if preferences:
            args["preferences"] = preferences
        payload = self.call(name, **args)
        return list(payload["results"]) if payload else []

    def route(self, city: str, origin: str, destination: str,
              ends: tuple[dict, dict] | None = None) -> dict[str, Any]:  # fmt: skip
        """The local leg between two places: walking when short, else the fastest ride, with
        minutes and the party's cost. With ``ends`` (the two places' coordinates) it is
        estimated by MapGuide's documented formula without a call (for trying out days);
        unknown places fall back to a 30-minute taxi. Callers only read the leg it returns."""
        if ends is not None:
            a, b = (Place(str(x.get("name")), "", None, city, x["lat"], x["lon"]) for x in ends)
            return self._best(city_routes(a, b)[1])
        key = (city, origin, destination)
        hit = self._routes.get(key)
        if hit is None:  # the call is made once per places, as by call()'s cache
            payload = self.call("MapGuide", origin_cityName=city, origin=origin,
                                destination_cityName=city, destination=destination)  # fmt: skip
            hit = self._routes[key] = self._best((payload or {}).get("routes"))
        return hit

    def locate(self, city: str, place: str) -> dict[str, Any] | None:
        """Where MapGuide places ``place`` of ``city`` (None when it cannot), asked once."""
        key = ("locate", city, place)
        if key not in self._routes:
            payload = self.call("MapGuide", origin_cityName=city, origin=place,
                                destination_cityName=city, destination=city)  # fmt: skip
            self._routes[key] = payload["origin"] if payload else None
        return self._routes[key]

    def _best(self, routes: list[dict[str, Any]] | None) -> dict[str, Any]:
        """The leg :meth:`route` takes among MapGuide's ``routes``."""
        if not routes:
            return {"mode": "Taxi", "minutes": 30, "cost": 30.0}
        return best_leg(routes, self.travellers)


def best_leg(routes: list[dict[str, Any]], travellers: int) -> dict[str, Any]:
    """The leg the scripted planners take among MapGuide's ``routes`` (a walk up to
    :data:`WALK_MAX_MINUTES`, else the faster of taxi and subway) and its cost for
    ``travellers`` (a taxi per :data:`PARTY_PER_CAR`, a subway ticket each)."""
    walk = next((r for r in routes if r["mode"] == "Walking"), None)
    if walk and walk["minutes"] <= WALK_MAX_MINUTES:
        best = walk
    else:
        best = min((r for r in routes if r["mode"] in ("Taxi", "Subway")),
                   key=lambda r: r["minutes"])  # fmt: skip
    cars = math.ceil(travellers / PARTY_PER_CAR)
    cost = best["cost"] * (cars if best["mode"] == "Taxi" else travellers)
    return {"mode": best["mode"], "minutes": int(best["minutes"]), "cost": round(cost, 1)}


def intercity(box: Toolbox, origin: str, destination: str) -> dict[str, dict[str, Any]]:
    """MapGuide's intercity summary between two cities: mode -> availability (and, for
    long-distance buses, the departures)."""
    payload = box.call("MapGuide", origin_cityName=origin, origin=origin,
                       destination_cityName=destination, destination=destination)  # fmt: skip
    return {s["mode"]: s for s in (payload or {}).get("intercity", [])}


def leg_options(box: Toolbox, origin: str, destination: str, date: str, mode: str,
                seat: str | None) -> list[dict[str, Any]]:  # fmt: skip
    """Intercity services of one Table 9 mode on a date, as plan legs (times in minutes);
    only modes MapGuide says run are searched."""
    summary = intercity(box, origin, destination)
    if not summary.get(mode, {}).get("available"):
        return []
    kind = MODE_OF_VOCAB[mode]
    out = []
    if kind == "flight":
        cabin = seat if seat in FLIGHT_CABINS else "Economy Class"
        payload = box.call("FlightSearch", origin=origin, destination=destination,
                           departure_date=date, n=50, preferences={"cabin_class": [cabin]})  # fmt: skip
        for r in (payload or {}).get("results", []):
            offset = 1 if r["arr_date"] != r["dep_date"] else 0
            out.append(_leg("flight", mode, r["flight_number"], r["dep_airport"], r["arr_airport"],
                            r["dep_time"], r["arr_time"], offset, r["adult_total"], cabin))  # fmt: skip
    elif kind == "train":
        payload = box.call("TrainSearch", origin=origin, destination=destination, n=50, date=date)
        for r in (payload or {}).get("results", []):
            if r["train_type"] != mode:
                continue
            fares: dict[str, float] = {}
            for s in r["seats"]:  # cheapest first: a class's cheapest seat
                fares.setdefault(s["seat_class"], s["fare"])
            chosen = seat if seat in fares else "Second Class Seat"
            if chosen not in fares:
                continue
            out.append(_leg("train", mode, r["train_number"], r["dep_station"], r["arr_station"],
                            r["dep_time"], r["arr_time"], r["arr_day_offset"], fares[chosen],
                            chosen))  # fmt: skip
    else:
        for r in summary[mode].get("departures", []):
            out.append(_leg("bus", mode, r["bus_number"], r["dep_station"], r["arr_station"],
                            r["dep_time"], r["arr_time"], r["arr_day_offset"], r["fare"], None))  # fmt: skip
    for leg in out:
        leg.update(from_city=origin, to_city=destination)
    return out


def _leg(kind, mode, number, dep_place, arr_place, dep_time, arr_time, offset, price, seat) -> dict:
    dep, arr = clock_minutes(dep_time), clock_minutes(arr_time)
    arr += DAY * (offset or 0)
    if arr < dep:
        arr += DAY
    return {"mode": kind, "vocab": mode, "number": number, "from_place": dep_place,
            "to_place": arr_place, "dep": dep, "arr": arr, "dep_time": dep_time,
            "arr_time": arr_time, "offset": offset or 0, "price": price, "seat_class": seat}  # fmt: skip


def daytime(leg: dict[str, Any]) -> bool:
    """No travel between 23:00 and 06:00 (Table 8: avoid midnight travel)."""
    return leg["dep"] >= 6 * 60 and leg["arr"] <= 23 * 60
