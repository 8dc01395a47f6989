"""Real reference data: the 20 parks, the airports that serve them, departure cities, airlines.

Park coordinates are the National Park Service's published centre points. Airport names, cities
and coordinates are read from the maintained ``airportsdata`` package by IATA code; only the codes
and which airports serve which park are chosen here. The parks are data, in ``parks.json`` beside
this module (one record a park, the fields of :class:`Park`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from travelgym.geo import driving_hours, driving_km, haversine_km


@dataclass(frozen=True)
class Park:
    park_id: str
    name: str
    state: str
    lat: float
    lon: float
    aliases: tuple[str, ...]
    gateway_towns: tuple[str, ...]
    airports: tuple[str, ...]  # IATA codes of the airports that serve the park


def _park(record: dict) -> Park:
    """A park from its record in ``parks.json`` (the lists as tuples)."""
    return Park(**{field: tuple(v) if isinstance(v, list) else v for field, v in record.items()})


PARKS: tuple[Park, ...] = tuple(
    map(_park, json.loads(Path(__file__).with_name("parks.json").read_text(encoding="utf-8")))
)

# Ten departure cities and their main airport (origins of every flight search).
DEPARTURE_CITIES: dict[str, str] = {
    "New York": "JFK",
    "Chicago": "ORD",
    "Los Angeles": "LAX",
    "Dallas": "DFW",
    "Houston": "IAH",
    "Atlanta": "ATL",
    "San Francisco": "SFO",
    "Seattle": "SEA",
    "Boston": "BOS",
    "Denver": "DEN",
}

# Large-hub airports (FAA large-hub classification); every other airport is "regional".
MAJOR_AIRPORTS = frozenset(
    {
        "ATL",
        "BOS",
        "DEN",
        "DFW",
        "IAD",
        "IAH",
        "JFK",
        "LAS",
        "LAX",
        "MIA",
        "ORD",
        "PHX",
        "SEA",
        "SFO",
        "SLC",
        "CLT",
        "ANC",
    }
)

# Four real US carriers with their hubs among the airports above (layover points).
AIRLINES: dict[str, tuple[str, tuple[str, ...]]] = {
    "AA": ("American Airlines", ("DFW", "ORD", "PHX", "MIA", "CLT")),
    "DL": ("Delta Air Lines", ("ATL", "SLC", "SEA", "JFK", "LAX")),
    "UA": ("United Airlines", ("DEN", "ORD", "SFO", "IAD", "IAH")),
    "AS": ("Alaska Airlines", ("SEA", "ANC", "SFO", "LAX")),
}


def park_by_id(park_id: str) -> Park:
    """Return the park with this id (KeyError if unknown)."""
    for park in PARKS:
        if park.park_id == park_id:
            return park
    raise KeyError(park_id)


def nearest_park(park_id: str, max_km: float = 600.0) -> str | None:
    """The park nearest to ``park_id`` as the crow flies, if within ``max_km`` (the second park
    a user may consider for the same trip)."""
    home = park_by_id(park_id)
    distance = {p.park_id: haversine_km(home.lat, home.lon, p.lat, p.lon) for p in PARKS}
    del distance[park_id]
    best = min(distance, key=distance.__getitem__)
    return best if distance[best] <= max_km else None


def all_airport_codes() -> list[str]:
    """Every airport the database needs: park airports, departure airports and airline hubs."""
    codes = {code for park in PARKS for code in park.airports}
    codes |= set(DEPARTURE_CITIES.values())
    codes |= {hub for _, hubs in AIRLINES.values() for hub in hubs}
    return sorted(codes)


@dataclass(frozen=True)
class Airport:
    code: str
    name: str
    city: str
    state: str
    lat: float
    lon: float
    airport_type: str  # "major" or "regional"


@lru_cache(maxsize=1)
def airports() -> dict[str, Airport]:
    """Airports by IATA code, with names and coordinates from ``airportsdata``."""
    import airportsdata

    table = airportsdata.load("IATA")
    out: dict[str, Airport] = {}
    for code in all_airport_codes():
        row = table[code]
        out[code] = Airport(
            code=code,
            name=row["name"],
            city=row["city"],
            state=row["subd"],
            lat=float(row["lat"]),
            lon=float(row["lon"]),
            airport_type="major" if code in MAJOR_AIRPORTS else "regional",
        )
    return out


def park_airport_links() -> list[tuple[str, str, float, float]]:
    """(park_id, airport code, driving km, driving hours) for every airport serving a park."""
    table = airports()
    links = []
    for park in PARKS:
        for code in park.airports:
            ap = table[code]
            links.append(
                (
                    park.park_id,
                    code,
                    round(driving_km(park.lat, park.lon, ap.lat, ap.lon), 1),
                    round(driving_hours(park.lat, park.lon, ap.lat, ap.lon), 2),
                )
            )
    return links
