"""The real-data path: raw Booking.com-shaped JSON in, the generator's tables out."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.db import connect_readonly, content_hash
from travelgym.geo import driving_km
from travelgym.suites.compass.ingest import IngestError, ingest_raw
from travelgym.suites.compass.reference import AIRLINES, PARKS, park_by_id
from travelgym.suites.compass.schema import TABLE_ORDER

# ------------------------------------------------------------------------- raw fixture builders


def write(root: Path, rel: str, obj: object) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=1), encoding="utf-8")
    return path


def search_hit(hotel_id: int, name: str, lat: float, lon: float, **extra) -> dict:
    hit = {
        "hotel_id": hotel_id,
        "hotel_name": name,
        "latitude": lat,
        "longitude": lon,
        "class": 3,
        "review_score": 8.4,
        "review_nr": 512,
        "city": "West Yellowstone",
        "distance_to_cc": "0.4",
        "currencycode": "USD",
    }
    hit.update(extra)
    return hit


def room(room_id: int, name: str, beds: list[tuple[str, int]], occupancy: int, **extra) -> dict:
    r = {
        "room_id": room_id,
        "room_name": name,
        "max_occupancy": occupancy,
        "room_surface_in_m2": 24.6,
        "bed_configurations": [
            {"bed_types": [{"name": n, "count": c, "bed_type": 1} for n, c in beds]}
        ],
        "facilities": [{"name": "Private bathroom", "facility_id": 38}],
    }
    r.update(extra)
    return r


def block(room_id: int, name: str, price: float, available: int, **extra) -> dict:
    b = {
        "block_id": f"{room_id}_9_2_0_0",
        "room_id": room_id,
        "name": name,
        "room_name": name.split(" - ")[0],
        "min_price": {"price": price, "currency": "USD"},
        "nr_available": available,
        "refundable": 1,
        "is_free_cancellable": 1,
        "breakfast_included": 0,
        "mealplan": "There is no meal option with this room.",
        "paymentterms": {"prepayment": {"type": "no_prepayment"}},
    }
    b.update(extra)
    return b


def leg(number: str, src: str, dst: str, dep: str, arr: str, cabin="ECONOMY", wifi=False) -> dict:
    """A booking-com15 flight leg; ``number`` is "DL1234", times are "MM-DD HH:MM" in 2025."""
    return {
        "departureTime": f"2025-{dep.replace(' ', 'T')}:00",
        "arrivalTime": f"2025-{arr.replace(' ', 'T')}:00",
        "departureAirport": {"type": "AIRPORT", "code": src},
        "arrivalAirport": {"type": "AIRPORT", "code": dst},
        "cabinClass": cabin,
        "flightInfo": {
            "flightNumber": int(number[2:]),
            "carrierInfo": {"marketingCarrier": number[:2], "operatingCarrier": number[:2]},
        },
        "carriersData": [{"name": number[:2], "code": number[:2]}],
        "amenities": [{"category": "WIFI", "cost": "PAID"}] if wifi else [],
    }


def offer(legs: list[dict], minutes: int, price: float, seats: int) -> dict:
    units = int(price)
    return {
        "token": "tok",
        "segments": [
            {
                "departureAirport": legs[0]["departureAirport"],
                "arrivalAirport": legs[-1]["arrivalAirport"],
                "departureTime": legs[0]["departureTime"],
                "arrivalTime": legs[-1]["arrivalTime"],
                "legs": legs,
                "totalTime": minutes * 60,
            }
        ],
        "priceBreakdown": {
            "total": {"currencyCode": "USD", "units": units, "nanos": round((price - units) * 1e9)}
        },
        "seatAvailability": {"numberOfSeatsAvailableAtThisPrice": seats},
    }


def flights_file(offers: list[dict]) -> dict:
    return {"status": True, "message": "Success", "data": {"flightOffers": offers}}


def make_raw(root: Path) -> Path:
    """Three park searches (one empty after de-duplication), 3 hotels, 2 flight routes, permits."""
    yell, zion = park_by_id("yell"), park_by_id("zion")
    write(
        root,
        "hotels/search_yell.json",
        {
            "result": [
                search_hit(
                    101,
                    "Best Western Desert Inn",
                    44.6621,
                    -111.1003,
                    brand="Best Western",
                    distance="40.0",
                ),
                search_hit(102, "Elk Creek Cabins", yell.lat + 0.1, yell.lon, **{"class": 0}),
            ]
        },
    )
    # The same cabin also turns up near Grand Teton; it belongs to the nearer park.
    write(
        root,
        "hotels/search_grte.json",
        {"result": [search_hit(102, "Elk Creek Cabins", yell.lat + 0.1, yell.lon, **{"class": 0})]},
    )
    write(
        root,
        "hotels/search_zion.json",
        {
            "result": [
                search_hit(
                    201,
                    "Desert Pearl Lodge",
                    zion.lat - 0.05,
                    zion.lon + 0.02,
                    city="Springdale",
                    review_score=9.1,
                    review_nr=87,
                    chain="Pearl Hotels",
                    **{"class": 4.5},
                )
            ]
        },
    )
    write(
        root,
        "hotels/details_101.json",
        {
            "hotel_id": 101,
            "facilities": [
                {"facility_name": "Outdoor swimming pool", "hotelfacilitytype_id": 103},
                {"facility_name": "Free parking", "hotelfacilitytype_id": 2},
                {"facility_name": "WiFi available in all areas", "hotelfacilitytype_id": 107},
                {"facility_name": "Pets allowed", "hotelfacilitytype_id": 4},
            ],
            "rooms": [
                room(
                    10101,
                    "King Room",
                    [("Extra-large double bed", 1)],
                    2,
                    facilities=[
                        {"name": "Air conditioning"},
                        {"name": "Private bathroom"},
                        {"name": "Tea/Coffee maker"},
                    ],
                ),
                room(
                    10102,
                    "Family Room with Bunk Beds",
                    [("Bunk bed", 2), ("Large double bed", 1)],
                    5,
                    facilities=["Kitchenette", "Mountain view", "Balcony"],
                ),
            ],
        },
    )
    write(
        root,
        "hotels/details_102.json",
        {
            "facilities": ["Restaurant", "Fitness centre", "Laundry", "Breakfast in the room"],
            "rooms": [room(10201, "Twin Cabin", [("Single bed", 2)], 2, room_surface_in_m2=None)],
        },
    )
    write(
        root,
        "hotels/details_201.json",
        {
            "hotel_id": 201,
            "facilities": [
                {"facility_name": "Facilities for disabled guests"},
                {"facility_name": "Electric vehicle charging station"},
                {"facility_name": "Pool table"},
            ],
            "rooms": [room(20101, "Double Room", [("Double bed", 1)], 2)],
        },
    )
    write(
        root,
        "hotels/availability_101_2025-08-01.json",
        {
            "hotel_id": 101,
            "arrival_date": "2025-08-01",
            "departure_date": "2025-08-02",
            "block": [
                block(10101, "King Room - Free cancellation", 189.0, 3),
                # a second occupancy block of the same rate: the cheaper one is kept
                block(10101, "King Room - Free cancellation", 179.5, 2),
                block(
                    10101,
                    "King Room - Non-refundable",
                    160.0,
                    3,
                    refundable=0,
                    is_free_cancellable=0,
                    paymentterms={"prepayment": {"type": "full_prepayment"}},
                ),
                block(
                    10102,
                    "Family Room - Breakfast included",
                    260.0,
                    1,
                    is_free_cancellable=0,
                    breakfast_included=1,
                    mealplan="Breakfast included in the price.",
                    paymentterms={
                        "cancellation": {"type": "special_conditions"},
                        "prepayment": {"type": "no_prepayment"},
                    },
                ),
            ],
        },
    )
    write(
        root,
        "hotels/availability_101_2025-08-02.json",
        {
            "block": [
                block(
                    10101,
                    "King Room - Free cancellation",
                    229.0,
                    0,
                    nr_available=None,
                    room_count=0,
                ),
                block(
                    10102,
                    "Family Room - Half board",
                    310.0,
                    2,
                    mealplan="Breakfast & dinner included",
                    product_price_breakdown={"gross_amount": {"value": 310.0, "currency": "USD"}},
                    min_price=None,
                ),
            ]
        },
    )
    write(
        root,
        "hotels/availability_201_2025-08-01.json",
        {"block": [block(20101, "Double Room", 140.0, 4, pay_in_advance=1, paymentterms=None)]},
    )
    # JFK -> BZN on Aug 1 (DL direct in two classes, DL one-stop via SLC, plus skipped offers)
    direct = ("DL1234", "JFK", "BZN", "08-01 08:00", "08-01 11:35")
    out = [
        offer([leg(*direct, wifi=True)], 335, 412.5, 4),
        offer([leg(*direct, "BUSINESS")], 335, 1280, 2),
        offer(
            [
                leg("DL500", "JFK", "SLC", "08-01 21:00", "08-02 00:10"),
                leg("DL77", "SLC", "BZN", "08-02 01:00", "08-02 02:15"),
            ],
            435,
            300,
            7,
        ),
        offer([leg(*direct, wifi=True)], 335, 399, 1),  # a cheaper fare of the same flight
        offer([leg("B61", "JFK", "BZN", "08-01 09:00", "08-01 12:40")], 340, 250, 9),  # skipped
        offer([leg(*direct, "FIRST")], 335, 2500, 1),  # skipped: first class
    ]
    write(root, "flights/search_JFK_BZN_2025-08-01.json", flights_file(out))
    back = ("DL1235", "BZN", "JFK", "08-05 12:30", "08-05 19:55")
    ret = [offer([leg(*back)], 325, 380, 6), offer([leg(*back, "BUSINESS")], 325, 1100, 3)]
    write(root, "flights/search_BZN_JFK_2025-08-05.json", flights_file(ret))
    write(
        root,
        "permits/permits.json",
        {
            "permits": [
                {
                    "park_id": "zion",
                    "name": "Angels Landing Day Hike",
                    "type": "Day hike",
                    "description": "Chain section to Angels Landing",
                    "price_per_person": 6.0,
                    "max_party_size": 6,
                    "start_time": "06:00",
                    "availability": [
                        {"date": "2025-08-02", "slots_remaining": 0},
                        {"date": "2025-08-01", "slots_remaining": 40},
                    ],
                }
            ]
        },
    )
    return root


@pytest.fixture
def raw(tmp_path: Path) -> Path:
    return make_raw(tmp_path / "raw")


def rows(db: Path, sql: str, *params) -> list[tuple]:
    conn = connect_readonly(db)
    try:
        return [tuple(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


@pytest.fixture
def db(raw: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out" / "compass.sqlite"
    ingest_raw(raw, out)
    return out


# ------------------------------------------------------------------------------------ success


def test_reference_tables_match_the_generator(db):
    assert rows(db, "SELECT count(*) FROM parks") == [(len(PARKS),)]
    assert rows(db, "SELECT count(*) FROM airlines") == [(len(AIRLINES),)]
    assert rows(db, "SELECT count(*) FROM park_airports WHERE park_id = 'yell'") == [(3,)]


def test_hotels_land_with_park_distance_brand_and_flags(db):
    got = {r[0]: r for r in rows(db, "SELECT * FROM hotels ORDER BY hotel_id")}
    assert sorted(got) == [101, 102, 201]
    h = got[101]
    assert h[1:5] == ("yell", "Best Western Desert Inn", "Best Western", "West Yellowstone")
    assert h[7:10] == (3.0, 8.4, 512)
    assert h[10] == pytest.approx(52.0)  # 40 km straight line times the road detour factor
    # pool, restaurant, parking, gym, pets, wifi, breakfast, accessible, ev, laundry
    assert h[11:] == (1, 0, 1, 0, 1, 1, 0, 0, 0, 0)
    cabin = got[102]
    yell = park_by_id("yell")
    assert cabin[1] == "yell"  # also listed near Grand Teton, but Yellowstone is nearer
    assert cabin[3] is None and cabin[7] == 1.0  # independent; class 0 (unrated) -> 1.0
    assert cabin[10] == pytest.approx(round(driving_km(cabin[5], cabin[6], yell.lat, yell.lon), 1))
    assert cabin[11:] == (0, 1, 0, 1, 0, 0, 1, 0, 0, 1)
    lodge = got[201]
    assert lodge[1:5] == ("zion", "Desert Pearl Lodge", "Pearl Hotels", "Springdale")
    assert lodge[7:10] == (4.5, 9.1, 87)
    assert lodge[11:] == (0, 0, 0, 0, 0, 0, 0, 1, 1, 0)
    assert rows(db, "SELECT count(*) FROM hotels WHERE park_id = 'grte'") == [(0,)]


def test_rooms_map_beds_and_room_facilities(db):
    got = {r[0]: r[1:] for r in rows(db, "SELECT * FROM rooms")}
    assert got[10101] == (101, "King Room", "1 king bed", "king", 2, 25, 0, 1, 1, 0, 0, 1)
    assert got[10102] == (
        101,
        "Family Room with Bunk Beds",
        "1 queen bed and 2 bunk beds",
        "queen",
        5,
        25,
        1,
        0,
        0,
        1,
        1,
        0,
    )
    assert got[10201][1:6] == ("Twin Cabin", "2 twin beds", "twin", 2, 0)  # no size -> 0
    assert got[20101][2:4] == ("1 double bed", "double")


def test_offers_map_policies_and_keep_the_cheapest_block(db):
    got = rows(
        db,
        "SELECT r.room_id, c.rate_name, o.night, o.price, o.available, o.cancellation_policy,"
        " o.meal_plan, o.prepayment FROM offers o JOIN room_configs c USING (config_id)"
        " JOIN rooms r USING (room_id) ORDER BY o.config_id, o.night",
    )
    assert got == [
        (10101, "King Room - Free cancellation", "2025-08-01", 179.5, 2, "free_cancellation", "room_only", "no_prepayment"),
        (10101, "King Room - Free cancellation", "2025-08-02", 229.0, 0, "free_cancellation", "room_only", "no_prepayment"),
        (10101, "King Room - Non-refundable", "2025-08-01", 160.0, 3, "non_refundable", "room_only", "prepayment_required"),
        (10102, "Family Room - Breakfast included", "2025-08-01", 260.0, 1, "partially_refundable", "breakfast_included", "no_prepayment"),
        (10102, "Family Room - Half board", "2025-08-02", 310.0, 2, "free_cancellation", "half_board", "no_prepayment"),
        (20101, "Double Room", "2025-08-01", 140.0, 4, "free_cancellation", "room_only", "prepayment_required"),
    ]  # fmt: skip
    configs = rows(db, "SELECT config_id, room_id FROM room_configs ORDER BY config_id")
    assert [c[0] for c in configs] == [1, 2, 3, 4, 5]


TERMS = [
    ({}, ("free_cancellation", "room_only", "no_prepayment")),
    ({"is_free_cancellable": 0}, ("partially_refundable", "room_only", "no_prepayment")),
    ({"is_free_cancellable": False, "refundable": False}, ("non_refundable", "room_only", "no_prepayment")),
    ({"paymentterms": {"cancellation": {"type": "Non-refundable"}, "prepayment": {"type": "pay at property"}}}, ("non_refundable", "room_only", "no_prepayment")),
    ({"breakfast_included": 1, "mealplan": None}, ("free_cancellation", "breakfast_included", "no_prepayment")),
    ({"mealplan": "Breakfast costs US$ 15 per person per night."}, ("free_cancellation", "room_only", "no_prepayment")),
    ({"mealplan": "All-inclusive"}, ("free_cancellation", "half_board", "no_prepayment")),
    ({"half_board": 1}, ("free_cancellation", "half_board", "no_prepayment")),
    ({"paymentterms": {"prepayment": {"type": "partial_prepayment"}}}, ("free_cancellation", "room_only", "prepayment_required")),
]  # fmt: skip


@pytest.mark.parametrize(("change", "expected"), TERMS)
def test_block_terms_vocabulary(change, expected):
    from travelgym.suites.compass.ingest_json import Loc
    from travelgym.suites.compass.ingest_offers import block_terms

    raw = block(1, "Room", 99.999, 3)
    raw.update(change)
    raw = {k: v for k, v in raw.items() if v is not None}
    assert block_terms(raw, Loc("f.json", "block[0]")) == (100.0, 3, *expected)


def test_flights_legs_prices_and_skipped_offers(db):
    flights = rows(db, "SELECT * FROM flights ORDER BY flight_id")
    by_number = {f[1]: f for f in flights}
    assert sorted(by_number) == ["DL1234", "DL1235", "DL500/DL77"]  # B6 and first class skipped
    direct = by_number["DL1234"]
    assert direct[2:] == (
        "DL",
        "JFK",
        "BZN",
        "08:00",
        "11:35",
        0,
        335,
        0,
        None,
        None,
        1,
        "in_cabin",
    )
    stop = by_number["DL500/DL77"]
    assert stop[2:] == ("DL", "JFK", "BZN", "21:00", "02:15", 1, 435, 1, "SLC", 50, 0, "in_cabin")
    prices = rows(
        db,
        "SELECT f.flight_number, p.booking_class, p.date, p.price, p.seats"
        " FROM flight_prices p JOIN flights f USING (flight_id) ORDER BY 1, 2",
    )
    assert prices == [
        ("DL1234", "business", "2025-08-01", 1280.0, 2),
        ("DL1234", "economy", "2025-08-01", 399.0, 1),  # the cheaper of two fares
        ("DL1235", "business", "2025-08-05", 1100.0, 3),
        ("DL1235", "economy", "2025-08-05", 380.0, 6),
        ("DL500/DL77", "economy", "2025-08-01", 300.0, 7),
    ]


def test_templates_pair_outbound_and_return_in_one_class(db):
    got = rows(
        db,
        "SELECT o.flight_number, r.flight_number, t.booking_class FROM flight_templates t"
        " JOIN flights o ON o.flight_id = t.outbound_flight_id"
        " JOIN flights r ON r.flight_id = t.return_flight_id ORDER BY t.template_id",
    )
    assert sorted(got) == [
        ("DL1234", "DL1235", "business"),
        ("DL1234", "DL1235", "economy"),
        ("DL500/DL77", "DL1235", "economy"),
    ]


def test_permits_and_metadata(db):
    permits = rows(db, "SELECT * FROM permits")
    assert permits == [
        (1, "zion", "Angels Landing Day Hike", "day_hike", "Chain section to Angels Landing", 6.0, 6, 1, 1, "06:00")
    ]  # fmt: skip
    assert rows(db, "SELECT * FROM permit_availability") == [
        (1, "2025-08-01", 40),
        (1, "2025-08-02", 0),
    ]
    meta = dict(rows(db, "SELECT key, value FROM metadata"))
    assert meta["source"] == "ingested" and meta["seed"] == "n/a"
    assert len(meta["content_hash"]) == 64 and int(meta["content_hash"], 16) >= 0
    conn = connect_readonly(db)
    assert content_hash(conn, TABLE_ORDER) == meta["content_hash"]
    conn.close()
    indexes = rows(
        db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name LIKE 'idx_%'"
    )
    assert indexes == [(9,)]


def test_same_input_same_hash_and_changed_input_other_hash(raw, tmp_path):
    first = ingest_raw(raw, tmp_path / "a.sqlite")
    second = ingest_raw(raw, tmp_path / "b.sqlite")
    assert first == second
    write(
        raw,
        "hotels/availability_201_2025-08-01.json",
        {"block": [block(20101, "Double Room", 141.0, 4)]},
    )
    assert ingest_raw(raw, tmp_path / "c.sqlite")["content_hash"] != first["content_hash"]


def test_minimal_raw_dir_without_flights_or_permits(tmp_path):
    root = tmp_path / "raw"
    write(root, "hotels/search_acad.json", {"result": []})
    meta = ingest_raw(root, tmp_path / "min.sqlite")
    assert meta["source"] == "ingested"
    for table in ("hotels", "offers", "flights", "permits"):
        assert rows(tmp_path / "min.sqlite", f"SELECT count(*) FROM {table}") == [(0,)]


# ------------------------------------------------------------------------------------ failures


def _edit(root: Path, rel: str, change) -> None:
    path = root / rel
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


BROKEN = [
    (
        "missing room field",
        lambda r: _edit(r, "hotels/details_101.json", lambda d: d["rooms"][0].pop("max_occupancy")),
        "hotels/details_101.json: rooms[0].max_occupancy: missing",
    ),
    (
        "wrong type",
        lambda r: _edit(
            r, "hotels/search_zion.json", lambda d: d["result"][0].update(review_nr="many")
        ),
        "hotels/search_zion.json: result[0].review_nr: expected an integer, got str",
    ),
    (
        "bad JSON",
        lambda r: (r / "hotels/details_201.json").write_text('{"rooms": [', encoding="utf-8"),
        "hotels/details_201.json: invalid JSON at line 1",
    ),
    (
        "unknown park in a file name",
        lambda r: write(r, "hotels/search_narnia.json", {"result": []}),
        "hotels/search_narnia.json: park_id: unknown park 'narnia'",
    ),
    (
        "missing details file",
        lambda r: (r / "hotels/details_102.json").unlink(),
        "hotels/details_102.json: missing file",
    ),
    (
        "unknown room in a block",
        lambda r: _edit(
            r, "hotels/availability_201_2025-08-01.json", lambda d: d["block"][0].update(room_id=5)
        ),
        "hotels/availability_201_2025-08-01.json: block[0].room_id: unknown room 5",
    ),
    (
        "unknown bed",
        lambda r: _edit(
            r,
            "hotels/details_201.json",
            lambda d: d["rooms"][0]["bed_configurations"][0]["bed_types"][0].update(name="Hammock"),
        ),
        "hotels/details_201.json: rooms[0].bed_configurations[0].bed_types[0].name: unknown bed",
    ),
    (
        "missing meal plan",
        lambda r: _edit(
            r,
            "hotels/availability_201_2025-08-01.json",
            lambda d: [d["block"][0].pop(k) for k in ("mealplan", "breakfast_included")],
        ),
        "hotels/availability_201_2025-08-01.json: block[0].mealplan: missing",
    ),
    (
        "non-USD price",
        lambda r: _edit(
            r,
            "hotels/availability_201_2025-08-01.json",
            lambda d: d["block"][0]["min_price"].update(currency="EUR"),
        ),
        "block[0].min_price.currency: 'EUR' is not USD",
    ),
    (
        "bad date in a file name",
        lambda r: write(r, "hotels/availability_201_2025-13-01.json", {"block": []}),
        "hotels/availability_201_2025-13-01.json: arrival_date: invalid date '2025-13-01'",
    ),
    (
        "night outside August 2025",
        lambda r: write(r, "hotels/availability_201_2025-09-01.json", {"block": []}),
        "availability_201_2025-09-01.json: arrival_date: 2025-09-01 is outside the booking window",
    ),
    (
        "duplicate hotel name",
        lambda r: _edit(
            r,
            "hotels/search_zion.json",
            lambda d: d["result"][0].update(hotel_name="Elk Creek Cabins"),
        ),
        "hotels/search_zion.json: result[0].hotel_name: duplicate name 'Elk Creek Cabins'",
    ),
    (
        "unknown airport in a file name",
        lambda r: write(r, "flights/search_XXX_BZN_2025-08-01.json", flights_file([])),
        "flights/search_XXX_BZN_2025-08-01.json: origin: unknown airport 'XXX'",
    ),
    (
        "missing flight number",
        lambda r: _edit(
            r,
            "flights/search_BZN_JFK_2025-08-05.json",
            lambda d: d["data"]["flightOffers"][1]["segments"][0]["legs"][0]["flightInfo"].pop(
                "flightNumber"
            ),
        ),
        "flights/search_BZN_JFK_2025-08-05.json: "
        "data.flightOffers[1].segments[0].legs[0].flightInfo.flightNumber: missing",
    ),
    (
        "missing seats",
        lambda r: _edit(
            r,
            "flights/search_JFK_BZN_2025-08-01.json",
            lambda d: d["data"]["flightOffers"][4].pop("seatAvailability"),
        ),
        "data.flightOffers[4].seatAvailability: missing",
    ),
    (
        "unknown permit type",
        lambda r: _edit(
            r, "permits/permits.json", lambda d: d["permits"][0].update(type="rafting")
        ),
        "permits/permits.json: permits[0].type: unknown value 'rafting'",
    ),
    (
        "stray file name",
        lambda r: write(r, "hotels/detail_101.json", {}),
        "hotels/detail_101.json: file name: unexpected",
    ),
]


@pytest.mark.parametrize(("change", "message"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_bad_raw_file_names_file_and_field_and_leaves_nothing(raw, tmp_path, change, message):
    change(raw)
    out = tmp_path / "out" / "compass.sqlite"
    with pytest.raises(IngestError) as info:
        ingest_raw(raw, out)
    assert message in str(info.value)
    leftovers = [
        p for p in tmp_path.rglob("*") if p.is_file() and p.relative_to(tmp_path).parts[0] != "raw"
    ]
    assert leftovers == []


def test_failure_leaves_an_existing_database_untouched(raw, tmp_path):
    out = tmp_path / "compass.sqlite"
    ingest_raw(raw, out)
    before = out.read_bytes()
    _edit(raw, "hotels/details_101.json", lambda d: d["rooms"][1].update(max_occupancy="five"))
    with pytest.raises(IngestError, match=r"rooms\[1\]\.max_occupancy: expected an integer"):
        ingest_raw(raw, out)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compass.sqlite", "raw"]


def test_write_failure_inside_the_build_leaves_no_temp_file(raw, tmp_path, monkeypatch):
    import travelgym.suites.compass.ingest as ingest

    def boom(conn, source, seed):
        raise sqlite3.OperationalError("disk full")

    monkeypatch.setattr(ingest, "finalize_metadata", boom)
    with pytest.raises(sqlite3.OperationalError):
        ingest_raw(raw, tmp_path / "x.sqlite")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["raw"]


def test_missing_raw_or_hotels_directory(tmp_path):
    with pytest.raises(IngestError, match="raw directory not found"):
        ingest_raw(tmp_path / "nowhere", tmp_path / "x.sqlite")
    (tmp_path / "empty").mkdir()
    with pytest.raises(IngestError, match="hotels/: missing directory"):
        ingest_raw(tmp_path / "empty", tmp_path / "x.sqlite")


# ---------------------------------------------------------------------------------------- CLI


def test_cli_ingest_success_and_clean_error(raw, tmp_path):
    runner = CliRunner()
    out = tmp_path / "cli.sqlite"
    result = runner.invoke(main, ["ingest", "compass", str(raw), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    meta = json.loads(result.output)
    assert meta["path"] == str(out) and meta["source"] == "ingested"
    assert len(meta["content_hash"]) == 64
    _edit(raw, "hotels/details_101.json", lambda d: d["rooms"][0].pop("max_occupancy"))
    bad = tmp_path / "bad.sqlite"
    result = runner.invoke(main, ["ingest", "compass", str(raw), "--out", str(bad)])
    assert result.exit_code == 1
    assert "Error: hotels/details_101.json: rooms[0].max_occupancy: missing" in result.output
    assert "Traceback" not in result.output and not bad.exists()
