"""The COMPASS database schema (Appendix F.1 of the paper), one SQLite file.

Every table is documented column by column in ``docs/compass/schema.md``. ``TABLE_ORDER`` lists
the content tables with the key used to order rows when the content hash is computed.
"""

from __future__ import annotations

SCHEMA_VERSION = "1"

DDL = """
CREATE TABLE metadata (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE parks (
    park_id       TEXT PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    state         TEXT NOT NULL,
    lat           REAL NOT NULL,
    lon           REAL NOT NULL,
    aliases       TEXT NOT NULL,          -- JSON array of common names
    gateway_towns TEXT NOT NULL           -- JSON array
);
CREATE TABLE airports (
    code         TEXT PRIMARY KEY,        -- IATA
    name         TEXT NOT NULL,
    city         TEXT NOT NULL,
    state        TEXT NOT NULL,
    lat          REAL NOT NULL,
    lon          REAL NOT NULL,
    airport_type TEXT NOT NULL CHECK (airport_type IN ('major', 'regional'))
);
CREATE TABLE park_airports (
    park_id      TEXT NOT NULL REFERENCES parks(park_id),
    airport_code TEXT NOT NULL REFERENCES airports(code),
    drive_km     REAL NOT NULL,
    drive_hours  REAL NOT NULL,
    PRIMARY KEY (park_id, airport_code)
);
CREATE TABLE airlines (
    code TEXT PRIMARY KEY,
    name TEXT NOT NULL
);
CREATE TABLE hotels (
    hotel_id        INTEGER PRIMARY KEY,
    park_id         TEXT NOT NULL REFERENCES parks(park_id),
    name            TEXT NOT NULL,
    brand           TEXT,                 -- NULL for independent properties
    town            TEXT NOT NULL,
    lat             REAL NOT NULL,
    lon             REAL NOT NULL,
    star_rating     REAL NOT NULL,        -- 1.0 .. 5.0
    review_score    REAL NOT NULL,        -- 1.0 .. 10.0
    review_count    INTEGER NOT NULL,
    distance_km     REAL NOT NULL,        -- driving distance to the park
    has_pool        INTEGER NOT NULL,
    has_restaurant  INTEGER NOT NULL,
    has_parking     INTEGER NOT NULL,
    has_gym         INTEGER NOT NULL,
    is_pet_friendly INTEGER NOT NULL,
    has_wifi        INTEGER NOT NULL,
    has_breakfast   INTEGER NOT NULL,     -- breakfast served on site
    is_accessible   INTEGER NOT NULL,
    has_ev_charging INTEGER NOT NULL,
    has_laundry     INTEGER NOT NULL
);
CREATE TABLE rooms (
    room_id              INTEGER PRIMARY KEY,
    hotel_id             INTEGER NOT NULL REFERENCES hotels(hotel_id),
    room_type            TEXT NOT NULL,
    bed_configuration    TEXT NOT NULL,
    bed_type             TEXT NOT NULL,   -- king, queen, double, twin, bunk, sofa
    max_occupancy        INTEGER NOT NULL,
    size_sqm             INTEGER NOT NULL,
    has_kitchenette      INTEGER NOT NULL,
    has_air_conditioning INTEGER NOT NULL,
    has_private_bathroom INTEGER NOT NULL,
    has_balcony          INTEGER NOT NULL,
    has_view             INTEGER NOT NULL,
    has_coffee_maker     INTEGER NOT NULL
);
CREATE TABLE room_configs (
    config_id INTEGER PRIMARY KEY,        -- a room plus a rate plan: what a package books
    room_id   INTEGER NOT NULL REFERENCES rooms(room_id),
    rate_name TEXT NOT NULL
);
CREATE TABLE offers (
    config_id           INTEGER NOT NULL REFERENCES room_configs(config_id),
    night               TEXT NOT NULL,    -- YYYY-MM-DD, the night of the stay
    price               REAL NOT NULL,    -- USD per room for this night
    available           INTEGER NOT NULL, -- rooms left
    cancellation_policy TEXT NOT NULL
        CHECK (cancellation_policy IN ('free_cancellation', 'partially_refundable', 'non_refundable')),
    meal_plan           TEXT NOT NULL
        CHECK (meal_plan IN ('room_only', 'breakfast_included', 'half_board')),
    prepayment          TEXT NOT NULL CHECK (prepayment IN ('no_prepayment', 'prepayment_required')),
    PRIMARY KEY (config_id, night)
) WITHOUT ROWID;
CREATE TABLE flights (
    flight_id       INTEGER PRIMARY KEY,  -- one-way leg (or one-stop itinerary)
    flight_number   TEXT NOT NULL,
    airline         TEXT NOT NULL REFERENCES airlines(code),
    origin          TEXT NOT NULL REFERENCES airports(code),
    destination     TEXT NOT NULL REFERENCES airports(code),
    departure_time  TEXT NOT NULL,        -- HH:MM local
    arrival_time    TEXT NOT NULL,        -- HH:MM local (may be the next day, see arrival_day_offset)
    arrival_day_offset INTEGER NOT NULL,
    duration_min    INTEGER NOT NULL,
    stops           INTEGER NOT NULL CHECK (stops IN (0, 1)),
    layover_airport TEXT REFERENCES airports(code),
    layover_min     INTEGER,
    has_wifi        INTEGER NOT NULL,
    pet_policy      TEXT NOT NULL CHECK (pet_policy IN ('in_cabin', 'cargo_only', 'not_allowed'))
);
CREATE TABLE flight_templates (
    template_id        INTEGER PRIMARY KEY, -- a round trip: outbound + return leg in one class
    outbound_flight_id INTEGER NOT NULL REFERENCES flights(flight_id),
    return_flight_id   INTEGER NOT NULL REFERENCES flights(flight_id),
    booking_class      TEXT NOT NULL CHECK (booking_class IN ('economy', 'premium_economy', 'business'))
);
CREATE TABLE flight_prices (
    flight_id     INTEGER NOT NULL REFERENCES flights(flight_id),
    booking_class TEXT NOT NULL,
    date          TEXT NOT NULL,          -- YYYY-MM-DD departure date of the leg
    price         REAL NOT NULL,          -- USD per passenger
    seats         INTEGER NOT NULL,       -- seats left in this class
    PRIMARY KEY (flight_id, booking_class, date)
) WITHOUT ROWID;
CREATE TABLE permits (
    permit_id         INTEGER PRIMARY KEY,
    park_id           TEXT NOT NULL REFERENCES parks(park_id),
    template_name     TEXT NOT NULL,
    permit_type       TEXT NOT NULL CHECK (permit_type IN ('day_hike', 'guided_tour', 'backpacking')),
    description       TEXT NOT NULL,
    price_per_person  REAL NOT NULL,
    max_party_size    INTEGER NOT NULL,
    min_duration_days INTEGER NOT NULL,
    max_duration_days INTEGER NOT NULL,
    start_time        TEXT NOT NULL,
    UNIQUE (park_id, template_name)
);
CREATE TABLE permit_availability (
    permit_id       INTEGER NOT NULL REFERENCES permits(permit_id),
    date            TEXT NOT NULL,
    slots_remaining INTEGER NOT NULL,     -- people who can still book this date
    PRIMARY KEY (permit_id, date)
) WITHOUT ROWID;
"""

INDEXES = """
CREATE INDEX idx_hotels_park ON hotels(park_id);
CREATE INDEX idx_rooms_hotel ON rooms(hotel_id);
CREATE INDEX idx_configs_room ON room_configs(room_id);
CREATE INDEX idx_offers_night ON offers(night, config_id);
CREATE INDEX idx_flights_route ON flights(origin, destination, airline);
CREATE INDEX idx_templates_outbound ON flight_templates(outbound_flight_id);
CREATE INDEX idx_templates_return ON flight_templates(return_flight_id);
CREATE INDEX idx_permits_park ON permits(park_id);
CREATE INDEX idx_park_airports_airport ON park_airports(airport_code);
"""

# Content tables in hash order, each with the ORDER BY that makes its dump canonical.
TABLE_ORDER: tuple[tuple[str, str], ...] = (
    ("parks", "park_id"),
    ("airports", "code"),
    ("park_airports", "park_id, airport_code"),
    ("airlines", "code"),
    ("hotels", "hotel_id"),
    ("rooms", "room_id"),
    ("room_configs", "config_id"),
    ("offers", "config_id, night"),
    ("flights", "flight_id"),
    ("flight_templates", "template_id"),
    ("flight_prices", "flight_id, booking_class, date"),
    ("permits", "permit_id"),
    ("permit_availability", "permit_id, date"),
)
