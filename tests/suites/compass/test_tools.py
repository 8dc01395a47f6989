"""Every COMPASS tool on the real built database, checked against the resolver and SQL."""

from __future__ import annotations

import pytest

from travelgym.suites.compass.resolver import resolve
from travelgym.suites.compass.tools import CompassContext, compass_registry

EXPECTED_TOOLS = [
    "search_hotel", "get_hotel_details", "get_room_details", "search_location_name",
    "search_airports", "search_flights", "get_flight_details", "get_airport_coordinates",
    "list_permits", "search_permit_availability", "get_permit_details",
    "notebook", "get_weekday", "calculate", "calculate_distance",
    "recommend_hotel", "recommend_flight", "recommend_permit",
]  # fmt: skip


@pytest.fixture()
def ctx(compass_db):
    context = CompassContext.from_path(compass_db)
    yield context
    context.close()


def call(ctx, name, **args):
    result = compass_registry().call(name, args, ctx)
    assert result.ok, result.error
    return result.content


def error(ctx, name, **args):
    result = compass_registry().call(name, args, ctx)
    assert not result.ok
    return result.error.category.value, result.error.message


def test_exactly_the_18_tools():
    assert compass_registry().names == EXPECTED_TOOLS


def test_search_hotel_results_are_bookable_sorted_and_complete(ctx):
    args = dict(location="Yosemite", start_date="2025-08-08", end_date="2025-08-11", num_guests=3)
    first = call(ctx, "search_hotel", **args)
    assert first["park"] == "Yosemite National Park" and first["nights"] == 3
    everything = []
    for page in range(1, first["pages"] + 1):
        everything += call(ctx, "search_hotel", **args, page=page)["results"]
    assert len(everything) == first["total_results"] > 20
    assert len({r["package_id"] for r in everything}) == len(everything)
    prices = [r["total_price"] for r in everything]
    assert prices == sorted(prices)
    for r in everything[:40]:
        offer = resolve(ctx.conn, r["package_id"])
        assert offer.bookable and offer.capacity >= 3
        assert offer.total_price == pytest.approx(r["total_price"], abs=0.01)
        assert offer.hotel["park_id"] == "yose"
    # brute force: every configuration at the park with full availability for the stay
    configs = [
        row[0]
        for row in ctx.conn.execute(
            "SELECT c.config_id FROM room_configs c JOIN rooms r USING (room_id)"
            " JOIN hotels h USING (hotel_id) WHERE h.park_id = 'yose'"
        )
    ]
    bookable = 0
    for config_id in configs:
        occ = ctx.conn.execute(
            "SELECT max_occupancy FROM rooms JOIN room_configs USING (room_id) WHERE config_id = ?",
            (config_id,),
        ).fetchone()[0]
        rooms = -(-3 // occ)
        bookable += resolve(ctx.conn, f"pkg_{config_id}_8_11_{rooms}").bookable
    assert bookable == first["total_results"]


def test_search_hotel_filters_hold(ctx):
    out = call(
        ctx,
        "search_hotel",
        location="zion",
        start_date="2025-08-04",
        end_date="2025-08-07",
        num_guests=2,
        max_price_nightly=260,
        is_pet_friendly=True,
        free_cancellation=True,
        min_review_score=7,
        sort_by="review_score",
    )
    assert out["total_results"] > 0
    scores = [r["review_score"] for r in out["results"]]
    assert scores == sorted(scores, reverse=True)
    for r in out["results"]:
        offer = resolve(ctx.conn, r["package_id"])
        assert offer.max_nightly_price <= 260
        assert offer.hotel["is_pet_friendly"] == 1 and offer.free_cancellation
        assert offer.hotel["review_score"] >= 7


def test_search_hotel_weekend_costs_more(ctx):
    def mean_price(start, end):
        res = call(
            ctx,
            "search_hotel",
            location="Zion",
            start_date=start,
            end_date=end,
            num_guests=2,
            num_rooms=1,
        )
        return sum(r["avg_nightly_price"] for r in res["results"]) / len(res["results"])

    # Aug 8 2025 is a Friday; Aug 12 a Tuesday
    assert mean_price("2025-08-08", "2025-08-09") > mean_price("2025-08-12", "2025-08-13")


def test_search_hotel_content_errors(ctx):
    cat, msg = error(
        ctx,
        "search_hotel",
        location="Atlantis",
        start_date="2025-08-08",
        end_date="2025-08-10",
        num_guests=2,
    )
    assert cat == "content" and "Known parks" in msg
    cat, msg = error(
        ctx,
        "search_hotel",
        location="Zion",
        start_date="2025-09-08",
        end_date="2025-09-10",
        num_guests=2,
    )
    assert cat == "content" and "booking window" in msg
    cat, msg = error(
        ctx,
        "search_hotel",
        location="Zion",
        start_date="2025-08-10",
        end_date="2025-08-08",
        num_guests=2,
    )
    assert cat == "content" and "after" in msg
    cat, msg = error(ctx, "search_hotel", location="Zion", start_date="2025-08-08")
    assert cat == "parameter" and "end_date" in msg and "num_guests" in msg


def test_hotel_details_by_id_and_fuzzy_name(ctx):
    hotel_id, name = ctx.conn.execute(
        "SELECT hotel_id, name FROM hotels WHERE hotel_id = 42"
    ).fetchone()
    by_id = call(ctx, "get_hotel_details", hotel_identifier=42)
    assert by_id["name"] == name and by_id["rooms"]
    misspelled = name[:-2] + name[-1].swapcase() if len(name) > 4 else name
    by_name = call(ctx, "get_hotel_details", hotel_identifier=misspelled.lower())
    assert by_name["hotel_id"] == hotel_id
    cat, msg = error(ctx, "get_hotel_details", hotel_identifier="zzzz qqqq xxxx")
    assert cat == "content"
    assert error(ctx, "get_hotel_details", hotel_identifier="999999")[0] == "content"


def test_room_details_match_resolver(ctx):
    res = call(
        ctx,
        "search_hotel",
        location="Acadia",
        start_date="2025-08-20",
        end_date="2025-08-23",
        num_guests=5,
    )
    pid = res["results"][0]["package_id"]
    room = call(ctx, "get_room_details", package_id=pid)
    offer = resolve(ctx.conn, pid)
    assert room["total_price"] == offer.total_price and room["bookable"]
    assert len(room["nightly"]) == 3 and room["capacity"] >= 5
    for bad in ("pkg_1_5_3_1", "pkg_99999999_1_2_1", "flight_1_2_3", "hello"):
        assert error(ctx, "get_room_details", package_id=bad)[0] == "content"


def test_location_search_is_fuzzy(ctx):
    out = call(ctx, "search_location_name", query="yosemity")
    assert out["matches"][0]["name"] == "Yosemite National Park"
    assert out["matches"][0]["location_type"] == "national_park"
    moab = call(ctx, "search_location_name", query="Moab")["matches"][0]
    assert moab["park"] == "Arches National Park"
    fresno = call(ctx, "search_location_name", query="Fresno")["matches"]
    assert any(m.get("airport_code") == "FAT" for m in fresno)


def test_airports_for_a_park(ctx):
    out = call(ctx, "search_airports", park_name="Zion")
    codes = [a["airport_code"] for a in out["airports"]]
    assert codes == ["SGU", "LAS"]
    hours = [a["drive_hours"] for a in out["airports"]]
    assert hours == sorted(hours)
    assert {a["airport_type"] for a in out["airports"]} == {"regional", "major"}
    coords = call(ctx, "get_airport_coordinates", airport_code="las")
    assert coords["airport_code"] == "LAS" and 35 < coords["latitude"] < 37
    assert error(ctx, "get_airport_coordinates", airport_code="XXX")[0] == "content"


def test_flight_search_and_details(ctx):
    args = dict(
        origin="JFK",
        destination="LAS",
        departure_date="2025-08-08",
        return_date="2025-08-12",
        passengers=2,
    )
    out = call(ctx, "search_flights", **args)
    assert out["total_results"] > 0
    prices = [r["price_per_passenger"] for r in out["results"]]
    assert prices == sorted(prices)
    for r in out["results"]:
        offer = resolve(ctx.conn, r["package_id"])
        assert offer.bookable and offer.min_seats >= 2
        assert offer.price_per_passenger == pytest.approx(r["price_per_passenger"], abs=0.01)
        assert r["total_price"] == pytest.approx(2 * r["price_per_passenger"], abs=0.01)
        assert (offer.origin, offer.destination) == ("JFK", "LAS")
    direct = call(ctx, "search_flights", **args, direct_flights_only=True, booking_class="economy")
    assert all(r["direct"] and r["booking_class"] == "economy" for r in direct["results"])
    airline = out["results"][0]["airline"]
    name = ctx.conn.execute("SELECT name FROM airlines WHERE code = ?", (airline,)).fetchone()[0]
    by_name = call(ctx, "search_flights", **args, airline_preference=name)
    assert by_name["total_results"] > 0 and all(r["airline"] == airline for r in by_name["results"])
    details = call(ctx, "get_flight_details", package_id=out["results"][0]["package_id"])
    assert details["outbound"]["date"] == "2025-08-08" and details["return"]["date"] == "2025-08-12"
    assert details["outbound"]["origin"] == "JFK" and details["return"]["origin"] == "LAS"
    cat, msg = error(ctx, "search_flights", **{**args, "origin": "New York"})
    assert cat == "content" and "airport code" in msg
    assert error(ctx, "search_flights", **{**args, "return_date": "2025-08-01"})[0] == "content"
    assert error(ctx, "get_flight_details", package_id="flight_999999_1_2")[0] == "content"


def test_permits(ctx):
    permits = call(ctx, "list_permits", park="Zion National Park")["permits"]
    assert {p["template_name"] for p in permits} >= {"Angels Landing Day Hike"}
    backpacking = next(p for p in permits if p["permit_type"] == "backpacking")
    days = backpacking["max_duration_days"]
    out = call(
        ctx,
        "search_permit_availability",
        park="zion",
        template_name=backpacking["template_name"].upper(),
        date_range="2025-08-01 to 2025-08-20",
        duration_days=days,
        party_size=2,
    )
    assert out["available_dates"]
    for item in out["available_dates"]:
        assert "2025-08-01" <= item["date"] <= "2025-08-20" and item["slots_remaining"] >= 2
        offer = resolve(ctx.conn, item["package_id"])
        assert offer.bookable and offer.days == days
        detail = call(ctx, "get_permit_details", package_id=item["package_id"])
        assert detail["park"] == "Zion National Park" and detail["date"] == item["date"]
    cat, msg = error(ctx, "search_permit_availability", park="Zion", template_name="Nope")
    assert cat == "content" and "Angels Landing Day Hike" in msg
    assert (
        error(
            ctx,
            "search_permit_availability",
            park="Zion",
            template_name=backpacking["template_name"],
            duration_days=14,
        )[0]
        == "content"
    )


def test_utilities(ctx):
    assert call(ctx, "get_weekday", date_str="2025-08-08")["weekday"] == "Friday"
    assert error(ctx, "get_weekday", date_str="2025-02-30")[0] == "content"
    assert call(ctx, "calculate", expression="100 + 200 * 3")["result"] == 700
    assert error(ctx, "calculate", expression="__import__('os').system('true')")[0] == "content"
    assert error(ctx, "calculate", expression="1/0")[0] == "content"
    d = call(ctx, "calculate_distance", lat1=37.0, lon1=-113.0, lat2=36.0, lon2=-115.0)
    back = call(ctx, "calculate_distance", lat1=36.0, lon1=-115.0, lat2=37.0, lon2=-113.0)
    assert d == back and d["driving_hours"] > 0 and "h" in d["driving_time"]
    assert error(ctx, "calculate_distance", lat1=91, lon1=0, lat2=0, lon2=0)[0] == "parameter"


def test_notebook_is_episode_state(ctx, compass_db):
    assert (
        call(ctx, "notebook", action="write", input_data="cheapest so far pkg_1_2_3_1")["index"]
        == 0
    )
    call(ctx, "notebook", action="write", input_data="second")
    assert call(ctx, "notebook", action="read", index=1)["note"] == "second"
    call(ctx, "notebook", action="delete", index=0)
    assert [n["note"] for n in call(ctx, "notebook", action="list_all")["notes"]] == ["second"]
    assert error(ctx, "notebook", action="read", index=5)[0] == "content"
    assert error(ctx, "notebook", action="write")[0] == "content"
    assert error(ctx, "notebook", action="erase")[0] == "parameter"
    fresh = CompassContext.from_path(compass_db)
    assert call(fresh, "notebook", action="list_all")["notes"] == []


def test_recommend_tools_validate_ids(ctx):
    hotel = call(
        ctx,
        "search_hotel",
        location="Glacier",
        start_date="2025-08-10",
        end_date="2025-08-12",
        num_guests=2,
    )["results"][0]["package_id"]
    out = call(
        ctx,
        "recommend_hotel",
        package_ids=[hotel, "pkg_99999999_1_2_1", "flight_1_2_3"],
        reasoning="cheapest",
    )
    assert [r["valid"] for r in out["results"]] == [True, False, False]
    assert not out["all_valid"]
    assert error(ctx, "recommend_hotel", package_ids=[], reasoning="x")[0] == "parameter"
    assert (
        error(ctx, "recommend_hotel", package_ids=["a", "b", "c", "d"], reasoning="x")[0]
        == "parameter"
    )
    flight = call(
        ctx,
        "search_flights",
        origin="ORD",
        destination="DEN",
        departure_date="2025-08-10",
        return_date="2025-08-14",
    )["results"][0]["package_id"]
    assert call(ctx, "recommend_flight", flight_ids=[flight], reasoning="r")["all_valid"]
    assert call(ctx, "recommend_permit", permit_ids=["permit_4_3_1"], reasoning="r")["all_valid"]
    assert not call(ctx, "recommend_permit", permit_ids=["permit_4_3_x"], reasoning="r")[
        "all_valid"
    ]


def test_registry_errors_are_categorised(ctx):
    registry = compass_registry()
    assert registry.call("book_hotel", {}, ctx).error.category.value == "tool_name"
    bad_json = registry.call("get_weekday", '{"date_str": "2025-08-08"', ctx)
    assert bad_json.error.category.value == "parameter" and "JSON" in bad_json.error.message
    extra = registry.call("get_weekday", {"date_str": "2025-08-08", "tz": "UTC"}, ctx)
    assert extra.error.category.value == "parameter" and "tz" in extra.error.message
    typed = registry.call(
        "search_flights",
        {
            "origin": "JFK",
            "destination": "LAS",
            "departure_date": "2025-08-08",
            "return_date": "2025-08-09",
            "passengers": "two",
        },
        ctx,
    )
    assert typed.error.category.value == "parameter" and "passengers" in typed.error.message
    ok = registry.call("get_weekday", '{"date_str": "2025-08-09"}', ctx)
    assert ok.ok and ok.content["weekday"] == "Saturday"


def test_search_hotel_accepts_gateway_towns(ctx):
    out = call(ctx, "search_hotel", location="Springdale", start_date="2025-08-04",
               end_date="2025-08-06", num_guests=2)  # fmt: skip
    assert out["park"] == "Zion National Park" and out["total_results"] > 0


def test_calculator_refuses_runaway_rounding(ctx):
    cat, msg = error(ctx, "calculate", expression="round(1, -10**7)")
    assert cat == "content" and "ndigits" in msg
