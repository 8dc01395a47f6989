"""Real reference data: the 20 parks, the airports that serve them, departure cities, airlines.

Park coordinates are the National Park Service's published centre points. Airport names, cities
and coordinates are read from the maintained ``airportsdata`` package by IATA code; only the codes
and which airports serve which park are chosen here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

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


PARKS: tuple[Park, ...] = (
    Park(
        "yell",
        "Yellowstone National Park",
        "WY",
        44.4280,
        -110.5885,
        ("Yellowstone", "Old Faithful", "YNP"),
        ("West Yellowstone", "Gardiner", "Cody"),
        ("BZN", "JAC", "SLC"),
    ),
    Park(
        "grte",
        "Grand Teton National Park",
        "WY",
        43.7904,
        -110.6818,
        ("Grand Teton", "Tetons", "Jackson Hole"),
        ("Jackson", "Moran", "Teton Village"),
        ("JAC", "SLC"),
    ),
    Park(
        "glac",
        "Glacier National Park",
        "MT",
        48.7596,
        -113.7870,
        ("Glacier", "Going-to-the-Sun"),
        ("West Glacier", "Whitefish", "Kalispell"),
        ("FCA",),
    ),
    Park(
        "romo",
        "Rocky Mountain National Park",
        "CO",
        40.3428,
        -105.6836,
        ("Rocky Mountain", "Rockies", "RMNP"),
        ("Estes Park", "Grand Lake"),
        ("DEN",),
    ),
    Park(
        "arch",
        "Arches National Park",
        "UT",
        38.7331,
        -109.5925,
        ("Arches", "Delicate Arch", "Moab"),
        ("Moab",),
        ("GJT", "SLC"),
    ),
    Park(
        "zion",
        "Zion National Park",
        "UT",
        37.2982,
        -113.0263,
        ("Zion", "Angels Landing", "The Narrows"),
        ("Springdale", "Hurricane", "St. George"),
        ("SGU", "LAS"),
    ),
    Park(
        "brca",
        "Bryce Canyon National Park",
        "UT",
        37.5930,
        -112.1871,
        ("Bryce", "Bryce Canyon"),
        ("Bryce Canyon City", "Tropic", "Panguitch"),
        ("SGU", "LAS"),
    ),
    Park(
        "grca",
        "Grand Canyon National Park",
        "AZ",
        36.0544,
        -112.1401,
        ("Grand Canyon", "South Rim", "GCNP"),
        ("Tusayan", "Williams", "Flagstaff"),
        ("FLG", "PHX", "LAS"),
    ),
    Park(
        "deva",
        "Death Valley National Park",
        "CA",
        36.5054,
        -117.0794,
        ("Death Valley", "Badwater"),
        ("Furnace Creek", "Beatty", "Pahrump"),
        ("LAS",),
    ),
    Park(
        "jotr",
        "Joshua Tree National Park",
        "CA",
        33.8734,
        -115.9010,
        ("Joshua Tree", "JTNP"),
        ("Twentynine Palms", "Yucca Valley", "Joshua Tree"),
        ("PSP", "LAX"),
    ),
    Park(
        "seki",
        "Sequoia National Park",
        "CA",
        36.4864,
        -118.5658,
        ("Sequoia", "General Sherman", "Kings Canyon"),
        ("Three Rivers", "Visalia"),
        ("FAT", "LAX"),
    ),
    Park(
        "yose",
        "Yosemite National Park",
        "CA",
        37.8651,
        -119.5383,
        ("Yosemite", "Half Dome", "Yosemite Valley"),
        ("Mariposa", "Oakhurst", "Groveland"),
        ("FAT", "SFO"),
    ),
    Park(
        "crla",
        "Crater Lake National Park",
        "OR",
        42.8684,
        -122.1685,
        ("Crater Lake",),
        ("Prospect", "Chiloquin", "Klamath Falls"),
        ("MFR",),
    ),
    Park(
        "olym",
        "Olympic National Park",
        "WA",
        47.8021,
        -123.6044,
        ("Olympic", "Hoh Rain Forest", "Hurricane Ridge"),
        ("Port Angeles", "Forks", "Sequim"),
        ("SEA",),
    ),
    Park(
        "mora",
        "Mount Rainier National Park",
        "WA",
        46.8800,
        -121.7269,
        ("Mount Rainier", "Rainier", "Paradise"),
        ("Ashford", "Packwood", "Enumclaw"),
        ("SEA",),
    ),
    Park(
        "acad",
        "Acadia National Park",
        "ME",
        44.3386,
        -68.2733,
        ("Acadia", "Bar Harbor", "Cadillac Mountain"),
        ("Bar Harbor", "Southwest Harbor"),
        ("BHB", "BOS"),
    ),
    Park(
        "shen",
        "Shenandoah National Park",
        "VA",
        38.2928,
        -78.6796,
        ("Shenandoah", "Skyline Drive"),
        ("Luray", "Front Royal", "Elkton"),
        ("CHO", "IAD"),
    ),
    Park(
        "grsm",
        "Great Smoky Mountains National Park",
        "TN",
        35.6118,
        -83.4895,
        ("Great Smoky Mountains", "Smokies", "Smoky Mountains"),
        ("Gatlinburg", "Pigeon Forge", "Cherokee"),
        ("TYS", "ATL"),
    ),
    Park(
        "ever",
        "Everglades National Park",
        "FL",
        25.2866,
        -80.8987,
        ("Everglades", "Shark Valley"),
        ("Homestead", "Florida City"),
        ("MIA",),
    ),
    Park(
        "dena",
        "Denali National Park",
        "AK",
        63.1148,
        -151.1926,
        ("Denali", "Mount McKinley"),
        ("Healy", "Cantwell"),
        ("FAI", "ANC"),
    ),
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
