"""Calibration tables of the POI generator: prices, hours, walking, facilities, city tastes."""

from __future__ import annotations

from dataclasses import dataclass

from travelgym.suites.behavior2trip import catalog as cat
from travelgym.suites.behavior2trip import vocab

HOTEL_BASE_PRICE = {  # CNY per night before the city's price index
    "2-Star & Below/Economy": 190, "3-Star/Comfort": 330, "4-Star/Upscale": 620,
    "5-Star/Luxury": 1400, "City Homestay": 360,
}  # fmt: skip
_HOMESTAY_CITIES = {"Lijiang", "Huangshan", "Zhangjiajie", "Guilin", "Xiamen", "Lhasa", "Sanya"}


def star_weights(city: str) -> list[float]:
    """Probabilities of vocab.STAR_LEVELS for a city's hotels (more homestays in scenic towns)."""
    homestay = 0.3 if city in _HOMESTAY_CITIES else 0.1
    rest = [0.3, 0.32, 0.24, 0.14]
    scale = (1 - homestay) / sum(rest)
    return [w * scale for w in rest] + [homestay]


_L = vocab.STAR_LEVELS  # economy, comfort, upscale, luxury, homestay
FACILITY_P: dict[str, dict[str, float]] = {
    "Free WiFi": dict(zip(_L, (0.9, 0.95, 0.97, 0.98, 0.85), strict=True)),
    "Private Bathroom": dict(zip(_L, (0.85, 0.97, 1.0, 1.0, 0.6), strict=True)),
    "Parking": dict(zip(_L, (0.45, 0.65, 0.85, 0.95, 0.35), strict=True)),
    "Gym": dict(zip(_L, (0.03, 0.2, 0.7, 0.95, 0.02), strict=True)),
    "Swimming Pool": dict(zip(_L, (0.02, 0.06, 0.35, 0.8, 0.08), strict=True)),
    "Restaurant": dict(zip(_L, (0.2, 0.45, 0.85, 1.0, 0.25), strict=True)),
}
ROOM_TYPES = (  # (type, bed, max occupancy, area m2)
    ("Standard Queen Room", "1 queen bed", 2, 22),
    ("Standard Twin Room", "2 single beds", 2, 24),
    ("Deluxe King Room", "1 king bed", 2, 32),
    ("Family Room", "1 king bed + 1 single bed", 3, 38),
    ("Executive Suite", "1 king bed", 2, 60),
    ("Loft Room", "1 queen bed", 2, 35),
)

# (city, cuisine) -> weight (default 1.0): local tastes
CUISINE_WEIGHTS: dict[tuple[str, str], float] = {}
for _cities, _cuisine, _w in (
    (("Chengdu", "Chongqing"), "Sichuan Cuisine", 5.0),
    (("Chengdu", "Chongqing"), "Hot Pot", 5.0),
    (("Changsha", "Zhangjiajie"), "Hunan Cuisine", 6.0),
    (("Guangzhou", "Shenzhen"), "Cantonese", 6.0),
    (("Shanghai", "Hangzhou", "Suzhou", "Nanjing"), "Shanghai/Zhejiang Cuisine", 5.0),
    (("Beijing", "Tianjin", "Harbin", "Dalian", "Qingdao", "Xi'an"), "Northern Chinese Food", 4.0),
    (("Xiamen", "Qingdao", "Dalian", "Sanya"), "Seafood", 4.0),
    (("Kunming", "Lijiang", "Lhasa", "Guilin"), "Other Chinese Food", 3.0),
    (("Shanghai", "Beijing", "Shenzhen"), "Western Food", 2.0),
):
    for _city in _cities:
        CUISINE_WEIGHTS[(_city, _cuisine)] = _w

PRICE_WEIGHTS: dict[str, tuple[float, float, float, float]] = {  # over vocab.PRICE_LEVELS
    "Beverages": (0.9, 0.1, 0.0, 0.0), "Snacks/Fast Food": (0.85, 0.15, 0.0, 0.0),
    "Bakery/Desserts": (0.75, 0.25, 0.0, 0.0), "Buffet": (0.0, 0.3, 0.5, 0.2),
    "Seafood": (0.1, 0.3, 0.4, 0.2), "Western Food": (0.1, 0.4, 0.35, 0.15),
    "Japanese/Korean Cuisine": (0.15, 0.35, 0.35, 0.15), "Hot Pot": (0.15, 0.55, 0.25, 0.05),
}  # fmt: skip
CUISINE_HOURS: dict[str, tuple[str, str]] = {
    "Beverages": ("09:00", "22:00"), "Snacks/Fast Food": ("06:00", "22:00"),
    "Hot Pot": ("11:00", "02:00"), "Barbecue": ("17:00", "02:00"),
    "Bakery/Desserts": ("08:00", "21:00"), "Buffet": ("11:00", "21:30"),
    "Western Food": ("11:00", "22:30"),
}  # fmt: skip


@dataclass(frozen=True)
class AttractionSpec:
    patterns: tuple[str, ...]
    walking_km: tuple[float, float]
    price: tuple[float, float]  # ticket range when not free
    free_share: float
    hours: tuple[str, str]
    duration: tuple[int, int]  # recommended visit, hours
    season: str
    tag: str


def _a(kind, walking, price, free, hours, duration, season, tag) -> AttractionSpec:
    return AttractionSpec(cat.ATTRACTION_PATTERNS[kind], walking, price, free, hours, duration,
                          season, tag)  # fmt: skip


ATTRACTION_SPECS: dict[str, AttractionSpec] = {
    "Park/Square": _a("Park/Square", (1, 4), (10, 30), 0.8, ("06:00", "22:00"), (1, 2), "All year", "Relaxing"),
    "Museum/Exhibition": _a("Museum/Exhibition", (1, 3), (20, 80), 0.5, ("09:00", "17:00"), (2, 3), "All year", "Culture"),
    "Cultural/Historic Site": _a("Cultural/Historic Site", (1.5, 5), (30, 120), 0.2, ("08:30", "17:30"), (2, 4), "Spring, Autumn", "History"),
    "Cityscape": _a("Cityscape", (1, 4), (50, 200), 0.6, ("00:00", "24:00"), (1, 2), "All year", "Night View"),
    "Natural Landscape": _a("Natural Landscape", (3, 10), (60, 250), 0.1, ("07:00", "18:00"), (3, 6), "Spring, Autumn", "Photography"),
    "Comprehensive Scenic Area": _a("Comprehensive Scenic Area", (3, 8), (40, 200), 0.2, ("08:00", "18:00"), (3, 5), "Spring, Autumn", "Sightseeing"),
    "Religious Site": _a("Religious Site", (1, 3), (5, 50), 0.3, ("07:30", "17:00"), (1, 2), "All year", "Culture"),
    "Theme Park": _a("Theme Park", (4, 9), (200, 650), 0.0, ("09:30", "21:00"), (5, 8), "All year", "Family"),
    "Outdoor Adventure": _a("Outdoor Adventure", (5, 12), (80, 300), 0.1, ("08:00", "17:30"), (4, 7), "Spring, Autumn", "Adventure"),
    "Water Activities": _a("Water Activities", (1, 5), (50, 200), 0.3, ("09:00", "18:00"), (2, 4), "Summer", "Family"),
    "Hot Spring/Wellness": _a("Hot Spring/Wellness", (1, 2.5), (150, 400), 0.0, ("10:00", "24:00"), (3, 4), "Autumn, Winter", "Wellness"),
    "Rural/Folk Village": _a("Rural/Folk Village", (2, 6), (30, 120), 0.4, ("08:00", "18:00"), (2, 4), "Spring, Autumn", "Folk Culture"),
    "Animal Watching": _a("Animal Watching", (2, 6), (80, 350), 0.05, ("08:30", "17:00"), (3, 5), "All year", "Family"),
    "Ice/Snow Sports": _a("Ice/Snow Sports", (1.5, 5), (150, 500), 0.0, ("09:00", "21:00"), (3, 5), "Winter", "Sports"),
    "Water Conservancy Facility": _a("Water Conservancy Facility", (1.5, 5), (20, 60), 0.4, ("08:00", "17:00"), (2, 3), "Summer, Autumn", "Engineering"),
}  # fmt: skip


@dataclass(frozen=True)
class EntertainmentSpec:
    price: tuple[float, float]  # CNY per person before the city's price index
    hours: tuple[str, str]


ENTERTAINMENT_SPECS: dict[str, EntertainmentSpec] = {
    "KTV": EntertainmentSpec((60, 180), ("12:00", "02:00")),
    "Bar/Pub": EntertainmentSpec((80, 220), ("19:00", "02:00")),
    "Theatre/Show": EntertainmentSpec((150, 580), ("19:00", "21:30")),
    "Escape Room": EntertainmentSpec((90, 200), ("10:00", "23:00")),
    "Spa/Massage": EntertainmentSpec((120, 400), ("11:00", "01:00")),
    "Cinema": EntertainmentSpec((40, 90), ("09:00", "24:00")),
    "Night Market": EntertainmentSpec((30, 80), ("18:00", "24:00")),
    "Live Music": EntertainmentSpec((80, 260), ("20:00", "01:00")),
    "Board Game Cafe": EntertainmentSpec((50, 120), ("13:00", "24:00")),
    "Acrobatics": EntertainmentSpec((180, 480), ("17:30", "21:00")),
}

# upper bound (km) of each walking-tolerance band; a walk fits a tolerance when it is within it
WALKING_LIMITS_KM = dict(zip(vocab.WALKING_TOLERANCE, (3.0, 5.0, float("inf")), strict=True))


def walking_level(km: float) -> str:
    """The vocab.WALKING_TOLERANCE band of a walking distance: <3 Low, 3-5 Medium, >=5 High."""
    for band, limit in WALKING_LIMITS_KM.items():
        if km < limit:
            return band
    return vocab.WALKING_TOLERANCE[-1]
