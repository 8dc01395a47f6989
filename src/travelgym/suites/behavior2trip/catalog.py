"""Reference facts of the 24 Behavior2Trip cities and the name parts the generator combines.

Names are real (cities, districts, railway stations, airlines, hotel and restaurant brands,
famous attractions); coordinates are never typed here: city centres are the 24 entries of
``pyecharts``'s city table (``pyecharts/datasets/city_coordinates.json`` of pyecharts 2.1.0,
MIT licence), vendored in ``city_coordinates.json`` beside this module, and airports come from
``airportsdata`` (:func:`city_coordinates`, :func:`airport_records`).
Climate normals (October / November mean highs and lows, rain share) calibrate the weather.
The cities' facts (one record a city, the fields of :class:`CityInfo`) and the brand tables are
data, in ``cities.json`` and ``brands.json`` beside this module.
"""

from __future__ import annotations

import csv
import importlib.util
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from travelgym.suites.behavior2trip.vocab import CITIES


@dataclass(frozen=True)
class CityInfo:
    name: str  # as in vocab.CITIES
    name_zh: str  # Chinese name (with 市, the key of pyecharts' coordinate table)
    province: str
    area_code: str  # telephone area code
    tier: float  # relative size: POI counts and flight/train frequencies scale with it
    price_index: float  # hotel and restaurant price level relative to the national mean
    airports: tuple[str, ...]  # IATA codes (airportsdata); empty: no commercial airport
    city_code: str | None  # IATA metropolitan code used in flight records
    stations: tuple[str, ...]  # railway stations, the high-speed one first
    districts: tuple[str, ...]
    climate: tuple[float, float, float, float, float]  # Oct max/min, Nov max/min (C), rain share
    famous: tuple[tuple[str, str], ...]  # (attraction name, vocab.ATTRACTION_TYPES value)


def _load(name: str):
    """The JSON data file ``name`` beside this module, its lists (nested ones too) as tuples."""
    return _frozen(json.loads(Path(__file__).with_name(name).read_text(encoding="utf-8")))


def _frozen(value):
    if isinstance(value, list):
        return tuple(map(_frozen, value))
    if isinstance(value, dict):
        return {key: _frozen(v) for key, v in value.items()}
    return value


CITY_INFO: dict[str, CityInfo] = {
    record["name"]: CityInfo(**record) for record in _load("cities.json")
}

assert tuple(CITY_INFO) == CITIES, "catalog must list the cities in vocab order"

# Extra spellings accepted for city names (besides case and punctuation differences).
CITY_ALIASES: dict[str, tuple[str, ...]] = {
    "Beijing": ("Peking", "BJS"), "Shanghai": ("SHA",), "Guangzhou": ("Canton",),
    "Xi'an": ("Xian", "Xi an", "Sian"), "Chongqing": ("Chungking",), "Lhasa": ("Lasa",),
    "Xiamen": ("Amoy",), "Qingdao": ("Tsingtao",), "Nanjing": ("Nanking",),
    "Harbin": ("Haerbin",), "Tianjin": ("Tientsin",), "Huangshan": ("Yellow Mountain",),
}  # fmt: skip

# (code, name, hub cities)
AIRLINES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("CA", "Air China", ("Beijing", "Chengdu", "Chongqing", "Tianjin")),
    ("MU", "China Eastern Airlines", ("Shanghai", "Kunming", "Xi'an", "Nanjing", "Wuhan")),
    ("CZ", "China Southern Airlines", ("Guangzhou", "Shenzhen", "Changsha", "Dalian", "Harbin")),
    ("HU", "Hainan Airlines", ("Beijing", "Sanya", "Xi'an", "Dalian")),
    ("MF", "Xiamen Airlines", ("Xiamen", "Hangzhou", "Tianjin")),
    ("ZH", "Shenzhen Airlines", ("Shenzhen", "Nanjing")),
    ("3U", "Sichuan Airlines", ("Chengdu", "Chongqing", "Kunming")),
    ("FM", "Shanghai Airlines", ("Shanghai",)),
    ("9C", "Spring Airlines", ("Shanghai",)),
    ("HO", "Juneyao Air", ("Shanghai",)),
    ("SC", "Shandong Airlines", ("Qingdao", "Xiamen")),
    ("TV", "Tibet Airlines", ("Lhasa", "Chengdu")),
    ("GJ", "Loong Air", ("Hangzhou",)),
    ("GS", "Tianjin Airlines", ("Tianjin",)),
)
LOW_COST_AIRLINES = ("9C",)  # economy cabin only
AIRCRAFT_NARROW = ("Airbus A320neo", "Airbus A321", "Boeing 737-800", "Boeing 737 MAX 8",
                   "COMAC C919", "Airbus A319")  # fmt: skip
AIRCRAFT_WIDE = ("Airbus A330-300", "Airbus A350-900", "Boeing 787-9", "Boeing 777-300ER")
AIRCRAFT_REGIONAL = ("COMAC ARJ21-700",)  # economy only
ECONOMY_CODES = ("Y", "B", "M", "H", "K", "L", "Q", "V")  # from full fare to deep discount
BUSINESS_CODES = ("C", "D", "I")

# hotel level -> brand names (the restaurant and entertainment tables are in the same file)
_BRANDS = _load("brands.json")
HOTEL_BRANDS: dict[str, tuple[str, ...]] = _BRANDS["hotels"]
HOMESTAY_WORDS = ("Courtyard", "Old Town", "Riverside", "Bamboo", "Cloud", "Lotus", "Tea House",
                  "Garden", "Lakeview", "Mountain View", "Moonlight", "Sunrise", "Blue Sky",
                  "Little Fox", "Stone Bridge", "Willow", "Orchid", "Pine", "Starry", "Maple")  # fmt: skip
HOMESTAY_NOUNS = ("Homestay", "Guesthouse", "Inn", "Lodge", "Residence", "House")
HOTEL_STYLES: dict[str, tuple[str, ...]] = {
    "5-Star/Luxury": ("Luxury", "Resort", "Business"),
    "4-Star/Upscale": ("Upscale", "Business", "Resort"),
    "3-Star/Comfort": ("Comfort", "Chain", "Business"),
    "2-Star & Below/Economy": ("Economy", "Chain", "Budget"),
    "City Homestay": ("Homestay", "Boutique", "Apartment"),
}
LANDMARKS = ("Railway Station", "Metro Station", "Convention Center", "Riverside", "Downtown",
             "University Town", "Airport", "Pedestrian Street", "Central Plaza", "Science Park",
             "Old Town", "Exhibition Center", "Financial District", "Sports Center", "Lakeside")  # fmt: skip
ROADS = ("Jiefang Road", "Renmin Road", "Zhongshan Road", "Jianshe Road", "Heping Road",
         "Xinhua Road", "Wenhua Road", "Dongfeng Road", "Changjiang Road", "Beijing Road",
         "Yan'an Road", "Huaihai Road", "Nanjing Road", "Chaoyang Road", "Qingnian Road",
         "Shengli Road", "Gongyuan Road", "Binjiang Avenue", "Century Avenue", "Xueyuan Road")  # fmt: skip

# cuisine -> (brand names, sub-cuisines for the tertiary category)
RESTAURANT_BRANDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = _BRANDS["restaurants"]

# entertainment type -> (brand names, tertiary categories)
ENTERTAINMENT_BRANDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = _BRANDS["entertainment"]

# attraction type -> name patterns ({w} a place word, {c} the city)
ATTRACTION_PATTERNS: dict[str, tuple[str, ...]] = {
    "Park/Square": ("{w} Park", "{w} Square", "{w} Forest Park", "{w} Botanical Garden"),
    "Museum/Exhibition": ("{c} {w} Museum", "{w} Art Gallery", "{c} Science Museum",
                          "{w} Memorial Hall", "{c} Planning Exhibition Hall"),
    "Cultural/Historic Site": ("{w} Ancient Street", "{w} Former Residence", "{w} Pagoda",
                               "{w} Gate", "{w} Historic Courtyard"),
    "Cityscape": ("{w} Observation Deck", "{w} Riverside Promenade", "{w} Skyline Walk",
                  "{w} Bridge", "{w} Street"),
    "Natural Landscape": ("{w} Mountain", "{w} Gorge", "{w} Lake", "{w} Waterfall", "{w} Cave"),
    "Comprehensive Scenic Area": ("{w} Scenic Area", "{w} Cultural Tourism Zone", "{w} Eco Park"),
    "Religious Site": ("{w} Temple", "{w} Monastery", "{w} Taoist Temple", "{w} Church"),
    "Theme Park": ("{w} Happy Valley", "{w} Fantawild Adventure", "{w} Amusement Park",
                   "{w} Ocean Kingdom"),
    "Outdoor Adventure": ("{w} Hiking Trail", "{w} Rock Climbing Park", "{w} Zipline Park",
                          "{w} Canyon Rafting"),
    "Water Activities": ("{w} Beach", "{w} Water Park", "{w} Lake Boating", "{w} Rafting"),
    "Hot Spring/Wellness": ("{w} Hot Spring Resort", "{w} Hot Spring", "{w} Wellness Valley"),
    "Rural/Folk Village": ("{w} Ancient Village", "{w} Folk Village", "{w} Water Town"),
    "Animal Watching": ("{w} Zoo", "{w} Aquarium", "{w} Wildlife Park", "{w} Bird Sanctuary"),
    "Ice/Snow Sports": ("{w} Ski Resort", "{w} Indoor Ski Hall", "{w} Ice Rink", "{w} Snow Park"),
    "Water Conservancy Facility": ("{w} Dam", "{w} Reservoir", "{w} Water Conservancy Park",
                                   "{w} Ship Lock"),
}  # fmt: skip
PLACE_WORDS = ("Qinghe", "Baiyun", "Longtan", "Xiangshan", "Jinshan", "Yuhua", "Fenghuang",
               "Taoyuan", "Qingshui", "Yunlong", "Wanshou", "Huilong", "Shuangxi", "Dongfang",
               "Tianfu", "Jinhua", "Lianhua", "Biyun", "Cuiwei", "Songhe", "Wolong", "Jiuxi",
               "Baihe", "Hongshan", "Luojia", "Meiling", "Xinghai", "Yuquan", "Zijin", "Qixia",
               "Feilai", "Tianping", "Shizi", "Nanhu", "Beihu", "Hexi", "Jingshan", "Liuyun")  # fmt: skip

REVIEW_GOOD = ("Clean and comfortable, would come again.", "Great location and friendly staff.",
               "Worth the price, highly recommended.", "Excellent service and atmosphere.",
               "Exceeded our expectations.", "Convenient transport nearby.")  # fmt: skip
REVIEW_MIXED = ("Decent overall but a bit crowded.", "Good value, service could be faster.",
                "Nice place, though parking was hard to find.", "Average experience, nothing special.",
                "A little noisy at night.")  # fmt: skip
REVIEW_BAD = ("Disappointing, not as described.", "Long waiting time and rude staff.",
              "Overpriced for what you get.")  # fmt: skip

WIND_DIRECTIONS = ("North", "Northeast", "East", "Southeast", "South", "Southwest", "West",
                   "Northwest")  # fmt: skip


@lru_cache(maxsize=1)
def city_coordinates() -> dict[str, tuple[float, float]]:
    """City name -> (lat, lon) of its centre, from the vendored ``city_coordinates.json``.

    The values are pyecharts 2.1.0's (its ``datasets/city_coordinates.json``, MIT licence)
    exactly as the database has always used them, so the content hash does not move."""
    table = _load("city_coordinates.json")["cities"]
    out = {}
    for name in CITY_INFO:
        lat, lon = table[name]
        out[name] = (round(float(lat), 5), round(float(lon), 5))
    return out


def _package_file(package: str, *parts: str) -> str:
    """The text of a data file of an installed ``package``, found without importing it
    (importing the package takes longer than reading the file)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return (resources.files(package).joinpath(*parts)).read_text(encoding="utf-8")
    return Path(spec.submodule_search_locations[0], *parts).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def airport_records() -> dict[str, dict]:
    """IATA code -> {name, city, lat, lon} for every airport of a catalogue city (airportsdata).

    Reads airportsdata's table as ``airportsdata.load("IATA")`` does (the last row of a code
    wins), parsing only the rows of the codes needed."""
    wanted = {code for info in CITY_INFO.values() for code in info.airports}
    table: dict[str, dict] = {}
    lines = _package_file("airportsdata", "airports.csv").splitlines()
    header = next(csv.reader(lines[:1]))
    rows = [line for line in lines[1:] if line.split(",", 2)[1].strip('"') in wanted]
    for values in csv.reader(rows, quoting=csv.QUOTE_NONNUMERIC):
        row = dict(zip(header, values, strict=True))
        table[row["iata"]] = row
    out = {}
    for name, info in CITY_INFO.items():
        for code in info.airports:
            rec = table[code]
            out[code] = {
                "code": code,
                "name": rec["name"],
                "city": name,
                "lat": round(float(rec["lat"]), 5),
                "lon": round(float(rec["lon"]), 5),
            }
    return out
