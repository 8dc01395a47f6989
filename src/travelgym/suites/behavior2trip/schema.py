"""The Behavior2Trip POI database schema (paper Appendix A.1, Table 6), one SQLite file.

Every table is documented column by column in ``docs/behavior2trip/database.md``. Categorical
columns hold values of :mod:`travelgym.suites.behavior2trip.vocab` exactly. ``TABLE_ORDER`` lists the content
tables with the key used to order rows when the content hash is computed.

Times are ``HH:MM`` local time. A ``close_time`` earlier than ``open_time`` means the place closes
after midnight; ``24:00`` means midnight. Dates are ``YYYY-MM-DD`` inside :data:`DATES`.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from functools import cache

SCHEMA_VERSION = "2"

# The data window: 60 days of autumn 2025 (National Day Golden Week to late November). Flights
# and weather exist for every date in it; trains and buses run daily on a fixed timetable.
FIRST_DATE = dt.date(2025, 10, 1)
LAST_DATE = dt.date(2025, 11, 29)
DATES: tuple[str, ...] = tuple(
    (FIRST_DATE + dt.timedelta(days=i)).isoformat()
    for i in range((LAST_DATE - FIRST_DATE).days + 1)
)

# id prefixes of the POI tables (ids are prefix + 5 digits, e.g. H00042)
ID_PREFIXES = {"hotels": "H", "restaurants": "R", "attractions": "A", "entertainment": "E"}

_POI_COMMON = """
    city_id            TEXT NOT NULL REFERENCES cities(city_id),
    name               TEXT NOT NULL,
    details            TEXT NOT NULL,
    address            TEXT NOT NULL,
    phone              TEXT NOT NULL,
    province           TEXT NOT NULL,
    city               TEXT NOT NULL,          -- city name as in vocab.CITIES
    district           TEXT NOT NULL,
    lon                REAL NOT NULL,
    lat                REAL NOT NULL,"""

DDL = f"""
CREATE TABLE metadata (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE cities (
    city_id     TEXT PRIMARY KEY,             -- lower-case ASCII slug: beijing, xian, ...
    name        TEXT NOT NULL UNIQUE,         -- as in vocab.CITIES
    name_zh     TEXT NOT NULL,
    province    TEXT NOT NULL,
    lat         REAL NOT NULL,
    lon         REAL NOT NULL,
    area_code   TEXT NOT NULL,
    city_code   TEXT,                         -- IATA city code; NULL without an airport
    aliases     TEXT NOT NULL,                -- JSON array of accepted spellings
    districts   TEXT NOT NULL,                -- JSON array
    description TEXT NOT NULL
);
CREATE TABLE airports (
    code      TEXT PRIMARY KEY,               -- IATA
    name      TEXT NOT NULL,
    city_id   TEXT NOT NULL REFERENCES cities(city_id),
    lat       REAL NOT NULL,
    lon       REAL NOT NULL,
    terminals TEXT NOT NULL                   -- JSON array
);
CREATE TABLE stations (
    name      TEXT PRIMARY KEY,               -- e.g. 'Beijing South'
    city_id   TEXT NOT NULL REFERENCES cities(city_id),
    kind      TEXT NOT NULL CHECK (kind IN ('railway', 'bus')),
    lat       REAL NOT NULL,
    lon       REAL NOT NULL
);
CREATE TABLE hotels (
    hotel_id           TEXT PRIMARY KEY,      -- H00001
{_POI_COMMON}
    primary_category   TEXT NOT NULL,         -- 'Hotel'
    secondary_category TEXT NOT NULL,         -- star level: vocab.STAR_LEVELS
    tertiary_category  TEXT NOT NULL,         -- style: Luxury, Business, Resort, Homestay, ...
    business_hours     TEXT NOT NULL,
    check_in_time      TEXT NOT NULL,
    check_out_time     TEXT NOT NULL,
    rating_rank        INTEGER NOT NULL,      -- 1 = best rated of its star level in the city
    parking_info       TEXT NOT NULL,
    has_parking        INTEGER NOT NULL,      -- 1 iff facilities holds 'Parking'
    has_wifi           INTEGER NOT NULL,      -- 1 iff facilities holds 'Free WiFi'
    facilities         TEXT NOT NULL,         -- JSON array of vocab.FACILITIES (vocab order)
    avg_price          REAL NOT NULL,         -- CNY per night, cheapest room
    avg_rating         REAL NOT NULL,         -- 1.0 .. 5.0
    review_count       INTEGER NOT NULL,
    reviews            TEXT NOT NULL,         -- JSON array of review snippets
    room_info          TEXT NOT NULL          -- JSON array of rooms (type, bed, occupancy, ...)
);
CREATE TABLE restaurants (
    restaurant_id      TEXT PRIMARY KEY,      -- R00001
{_POI_COMMON}
    primary_category   TEXT NOT NULL,         -- 'Food & Beverage'
    secondary_category TEXT NOT NULL,         -- cuisine: vocab.CUISINES
    tertiary_category  TEXT NOT NULL,         -- sub-cuisine, e.g. 'Chongqing Hot Pot'
    business_hours     TEXT NOT NULL,
    open_time          TEXT NOT NULL,
    close_time         TEXT NOT NULL,
    rating_rank        INTEGER NOT NULL,      -- 1 = best rated of its cuisine in the city
    parking_info       TEXT NOT NULL,
    avg_price          REAL NOT NULL,         -- CNY per person, inside PRICE_RANGES[price_level]
    price_level        TEXT NOT NULL,         -- vocab.PRICE_LEVELS
    dining_environment TEXT NOT NULL,         -- vocab.DINING_ENVIRONMENTS
    avg_rating         REAL NOT NULL,
    review_count       INTEGER NOT NULL,
    reviews            TEXT NOT NULL
);
CREATE TABLE attractions (
    attraction_id      TEXT PRIMARY KEY,      -- A00001
{_POI_COMMON}
    category_name      TEXT NOT NULL,         -- 'Sightseeing'
    attraction_type    TEXT NOT NULL,         -- vocab.ATTRACTION_TYPES
    custom_type        TEXT NOT NULL,         -- tag: 'Landmark', 'Free Entry', 'Family', ...
    opening_hours      TEXT NOT NULL,
    open_time          TEXT NOT NULL,
    close_time         TEXT NOT NULL,
    best_season        TEXT NOT NULL,
    recommended_duration TEXT NOT NULL,       -- e.g. '2-3 hours'
    duration_hours     REAL NOT NULL,         -- the midpoint of recommended_duration
    walking_km         REAL NOT NULL,         -- walking a visit takes
    walking_level      TEXT NOT NULL,         -- vocab.WALKING_TOLERANCE band of walking_km
    avg_price          REAL NOT NULL,         -- ticket price, CNY per adult (0 = free)
    ticket_info        TEXT NOT NULL,
    avg_rating         REAL NOT NULL,
    review_count       INTEGER NOT NULL,
    reviews            TEXT NOT NULL,
    is_landmark        INTEGER NOT NULL       -- 1 for the city's famous real attractions
);
CREATE TABLE entertainment (
    entertainment_id   TEXT PRIMARY KEY,      -- E00001
{_POI_COMMON}
    primary_category   TEXT NOT NULL,         -- 'Entertainment'
    secondary_category TEXT NOT NULL,         -- vocab.ENTERTAINMENT_TYPES
    tertiary_category  TEXT NOT NULL,
    business_hours     TEXT NOT NULL,
    open_time          TEXT NOT NULL,
    close_time         TEXT NOT NULL,
    rating_rank        INTEGER NOT NULL,
    avg_price          REAL NOT NULL,         -- CNY per person
    avg_rating         REAL NOT NULL,
    review_count       INTEGER NOT NULL
);
CREATE TABLE flights (
    flight_id         INTEGER PRIMARY KEY,    -- one cabin of one flight on one date
    flight_number     TEXT NOT NULL,
    airline           TEXT NOT NULL,
    airline_code      TEXT NOT NULL,
    dep_city_id       TEXT NOT NULL REFERENCES cities(city_id),
    arr_city_id       TEXT NOT NULL REFERENCES cities(city_id),
    dep_city          TEXT NOT NULL,
    arr_city          TEXT NOT NULL,
    dep_city_code     TEXT NOT NULL,
    arr_city_code     TEXT NOT NULL,
    dep_airport       TEXT NOT NULL,
    arr_airport       TEXT NOT NULL,
    dep_airport_code  TEXT NOT NULL REFERENCES airports(code),
    arr_airport_code  TEXT NOT NULL REFERENCES airports(code),
    dep_date          TEXT NOT NULL,
    arr_date          TEXT NOT NULL,
    dep_time          TEXT NOT NULL,
    arr_time          TEXT NOT NULL,
    duration_min      INTEGER NOT NULL,
    dep_terminal      TEXT NOT NULL,
    arr_terminal      TEXT NOT NULL,
    aircraft          TEXT NOT NULL,
    cabin_class       TEXT NOT NULL,          -- vocab.FLIGHT_SEAT_CLASSES
    cabin_code        TEXT NOT NULL,          -- booking class letter (Y, B, ..., C)
    adult_fare        REAL NOT NULL,          -- CNY
    child_fare        REAL NOT NULL,
    adult_total       REAL NOT NULL,          -- fare + fuel surcharge + airport fee
    child_total       REAL NOT NULL,
    fuel_surcharge    REAL NOT NULL,          -- adult
    airport_fee       REAL NOT NULL,          -- adult airport construction fee
    discount          REAL NOT NULL,          -- fare / full fare of the cabin (0.3 .. 1.0)
    on_time_rate      REAL NOT NULL,          -- 0 .. 1
    meal              TEXT NOT NULL,          -- Meal, Snack, None
    codeshare         TEXT                    -- marketing flight number of a codeshare, or NULL
);
CREATE TABLE trains (
    train_id          INTEGER PRIMARY KEY,    -- runs daily
    train_number      TEXT NOT NULL,          -- G/D (high-speed), Z/T/K (regular)
    train_type        TEXT NOT NULL,          -- 'High-speed Rail' or 'Regular Train' (vocab)
    dep_city_id       TEXT NOT NULL REFERENCES cities(city_id),
    arr_city_id       TEXT NOT NULL REFERENCES cities(city_id),
    dep_city          TEXT NOT NULL,
    arr_city          TEXT NOT NULL,
    dep_station       TEXT NOT NULL REFERENCES stations(name),
    arr_station       TEXT NOT NULL REFERENCES stations(name),
    dep_time          TEXT NOT NULL,
    arr_time          TEXT NOT NULL,
    arr_day_offset    INTEGER NOT NULL,       -- days after departure the train arrives
    travel_minutes    INTEGER NOT NULL,
    travel_time       TEXT NOT NULL,          -- e.g. '4h 28m'
    fare_second_class REAL NOT NULL,          -- cheapest 'Second Class Seat' seat, CNY
    fare_first_class  REAL,                   -- cheapest 'First Class Seat' seat, NULL if none
    fare              REAL NOT NULL,          -- the lowest fare
    seats             TEXT NOT NULL           -- JSON array of seat_type, seat_class, fare objects
);
CREATE TABLE buses (
    bus_id            INTEGER PRIMARY KEY,    -- long-distance coach, runs daily
    bus_number        TEXT NOT NULL,
    dep_city_id       TEXT NOT NULL REFERENCES cities(city_id),
    arr_city_id       TEXT NOT NULL REFERENCES cities(city_id),
    dep_city          TEXT NOT NULL,
    arr_city          TEXT NOT NULL,
    dep_station       TEXT NOT NULL REFERENCES stations(name),
    arr_station       TEXT NOT NULL REFERENCES stations(name),
    dep_time          TEXT NOT NULL,
    arr_time          TEXT NOT NULL,
    arr_day_offset    INTEGER NOT NULL,
    travel_minutes    INTEGER NOT NULL,
    fare              REAL NOT NULL
);
CREATE TABLE weather (
    city_id        TEXT NOT NULL REFERENCES cities(city_id),
    date           TEXT NOT NULL,
    city           TEXT NOT NULL,
    max_temp       INTEGER NOT NULL,          -- Celsius
    min_temp       INTEGER NOT NULL,
    weather        TEXT NOT NULL,             -- vocab.WEATHER_KINDS
    wind_direction TEXT NOT NULL,
    wind_level     INTEGER NOT NULL,          -- Beaufort
    aqi            INTEGER NOT NULL,
    air_quality    TEXT NOT NULL,             -- Excellent, Good, Lightly/Moderately Polluted
    PRIMARY KEY (city_id, date)
) WITHOUT ROWID;
"""

INDEXES = """
CREATE INDEX idx_airports_city ON airports(city_id);
CREATE INDEX idx_stations_city ON stations(city_id);
CREATE INDEX idx_hotels_city ON hotels(city_id, secondary_category);
CREATE INDEX idx_restaurants_city ON restaurants(city_id, secondary_category);
CREATE INDEX idx_attractions_city ON attractions(city_id, attraction_type);
CREATE INDEX idx_entertainment_city ON entertainment(city_id, secondary_category);
CREATE INDEX idx_flights_route ON flights(dep_city_id, arr_city_id, dep_date);
CREATE INDEX idx_flights_number ON flights(flight_number, dep_date);
CREATE INDEX idx_trains_route ON trains(dep_city_id, arr_city_id);
CREATE INDEX idx_trains_number ON trains(train_number);
CREATE INDEX idx_buses_route ON buses(dep_city_id, arr_city_id);
"""

POI_TABLES: dict[str, str] = {  # table -> id column
    "hotels": "hotel_id",
    "restaurants": "restaurant_id",
    "attractions": "attraction_id",
    "entertainment": "entertainment_id",
}

# Content tables in hash order, each with the ORDER BY that makes its dump canonical.
TABLE_ORDER: tuple[tuple[str, str], ...] = (
    ("cities", "city_id"),
    ("airports", "code"),
    ("stations", "name"),
    ("hotels", "hotel_id"),
    ("restaurants", "restaurant_id"),
    ("attractions", "attraction_id"),
    ("entertainment", "entertainment_id"),
    ("flights", "flight_id"),
    ("trains", "train_id"),
    ("buses", "bus_id"),
    ("weather", "city_id, date"),
)


@cache
def _columns(table: str) -> tuple[tuple[str, str], ...]:
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(DDL)
        return tuple((row[1], row[2]) for row in conn.execute(f"PRAGMA table_info({table})"))
    finally:
        conn.close()


def table_columns(table: str) -> list[str]:
    """The column names of ``table``, in table order."""
    return [name for name, _ in _columns(table)]


def real_columns(table: str) -> frozenset[int]:
    """Indexes of the REAL columns of ``table`` (SQLite's type affinity rules)."""
    return frozenset(
        i for i, (_, decl) in enumerate(_columns(table))
        if any(k in decl.upper() for k in ("REAL", "FLOA", "DOUB"))
    )  # fmt: skip
