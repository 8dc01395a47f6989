"""Every Behavior2Trip tool on the built small database, checked against direct SQL."""

from __future__ import annotations

import json

import pytest

from travelgym.suites.behavior2trip import vocab
from travelgym.suites.behavior2trip.schema import DATES
from travelgym.suites.behavior2trip.tools import TripsContext, trips_registry

EXPECTED_TOOLS = [
    "AccommodationSearch", "AttractionSearch", "EntertainmentSearch", "FlightSearch", "MapGuide",
    "RestaurantSearch", "TrainSearch", "WeatherSearch", "Python",
]  # fmt: skip
RATING_ORDER = lambda r: (-r["rating"], -r["review_count"], r["id"])  # noqa: E731


@pytest.fixture(scope="module")
def ctx(trips_db):
    context = TripsContext.from_path(trips_db)
    yield context
    context.close()


def call(ctx, name, **args):
    result = trips_registry().call(name, args, ctx)
    assert result.ok, result.error
    json.dumps(result.payload(), allow_nan=False)
    return result.content


def error(ctx, name, **args):
    result = trips_registry().call(name, args, ctx)
    assert not result.ok
    return result.error.category.value, result.error.message


def count(ctx, sql, *params):
    return ctx.conn.execute(sql, params).fetchone()[0]


def test_exactly_the_9_tools():
    assert trips_registry().names == EXPECTED_TOOLS


@pytest.mark.parametrize(
    "name", ["Xi'an", "xian", "XI AN", "xi-an", " Xian ", "西安", "SIA", "XIY"]
)
def test_city_names_are_forgiving(ctx, name):
    assert call(ctx, "AccommodationSearch", city=name, n=1)["city"] == "Xi'an"


def test_unknown_city_lists_the_cities(ctx):
    category, message = error(ctx, "RestaurantSearch", city="Atlantis")
    assert category == "content" and "Beijing" in message and "Lhasa" in message


@pytest.mark.parametrize("n", [0, -1, 51, 1.5, "five"])
def test_n_is_bounded(ctx, n):
    assert error(ctx, "AttractionSearch", city="Beijing", n=n)[0] == "parameter"


def test_accommodation_filters_order_and_count(ctx):
    prefs = {"star_rating": ["4-Star/Upscale", "5-Star/Luxury"], "amenities": ["Gym", "Parking"]}
    out = call(ctx, "AccommodationSearch", city="Beijing", n=50, preferences=prefs)
    expected = count(
        ctx,
        "SELECT COUNT(*) FROM hotels WHERE city_id = 'beijing' AND secondary_category IN (?, ?)"
        " AND facilities LIKE '%\"Gym\"%' AND facilities LIKE '%\"Parking\"%'",
        *prefs["star_rating"],
    )
    assert out["total_matches"] == expected > 0 and out["count"] == min(50, expected)
    assert out["preferences"] == prefs
    for r in out["results"]:
        assert r["star_level"] in prefs["star_rating"]
        assert {"Gym", "Parking"} <= set(r["facilities"]) and r["id"].startswith("H")
        assert r["rooms"] and r["city"] == "Beijing"
    assert out["results"] == sorted(out["results"], key=RATING_ORDER)
    top = call(ctx, "AccommodationSearch", city="Beijing", n=3, preferences=prefs)["results"]
    assert top == out["results"][:3]
    default = call(ctx, "AccommodationSearch", city="Beijing")
    assert default["count"] == 5 and default["total_matches"] == 80


def test_preference_keys_and_values_are_validated(ctx):
    category, message = error(ctx, "AccommodationSearch", city="Beijing",
                              preferences={"Star Rating Requirement": "Five-Star/Luxury"})  # fmt: skip
    assert category == "parameter" and "star_rating, amenities" in message
    category, message = error(ctx, "RestaurantSearch", city="Beijing",
                              preferences={"cuisine": ["Hunan Cuisine", "Martian"]})  # fmt: skip
    assert category == "parameter" and "Martian" in message and "Sichuan Cuisine" in message
    assert (
        error(ctx, "RestaurantSearch", city="Beijing", preferences={"cuisine": 3})[0] == "parameter"
    )
    assert error(ctx, "RestaurantSearch", city="Beijing", preferences="Hot Pot")[0] == "parameter"
    # forgiving spelling of keys and values; a single value works as a list of one
    out = call(ctx, "RestaurantSearch", city="Beijing",
               preferences={"Cuisine": "hot pot", "PRICE_LEVEL": "budget (30-80 cny/person)"})  # fmt: skip
    assert out["preferences"] == {"cuisine": ["Hot Pot"],
                                  "price_level": ["Budget (30-80 CNY/person)"]}  # fmt: skip
    assert call(ctx, "RestaurantSearch", city="Beijing", preferences={})["total_matches"] == 360
    assert (
        call(ctx, "RestaurantSearch", city="Beijing", preferences={"cuisine": []})["total_matches"]
        == 360
    )


@pytest.mark.parametrize("city", ["Chengdu", "Sanya", "Lhasa"])
def test_restaurant_filters(ctx, city):
    for cuisine in vocab.CUISINES[::4]:
        for level in vocab.PRICE_LEVELS:
            prefs = {
                "cuisine": [cuisine],
                "price_level": [level],
                "environment": ["Quiet", "Lively"],
            }
            out = call(ctx, "RestaurantSearch", city=city, n=50, preferences=prefs)
            expected = count(
                ctx,
                "SELECT COUNT(*) FROM restaurants r JOIN cities c USING (city_id) WHERE c.name = ?"
                " AND secondary_category = ? AND price_level = ? AND dining_environment IN (?, ?)",
                city, cuisine, level, "Quiet", "Lively",
            )  # fmt: skip
            assert out["total_matches"] == expected
            lo, hi = vocab.PRICE_RANGES[level]
            for r in out["results"]:
                assert r["cuisine"] == cuisine and r["price_level"] == level
                assert lo <= r["price_per_person"] <= hi and r["environment"] in ("Quiet", "Lively")
            assert out["results"] == sorted(out["results"], key=RATING_ORDER)


def test_every_single_preference_value_finds_something_everywhere(ctx):
    cases = [("AccommodationSearch", "star_rating", vocab.STAR_LEVELS),
             ("AccommodationSearch", "amenities", vocab.FACILITIES),
             ("AttractionSearch", "attraction_type", vocab.ATTRACTION_TYPES),
             ("AttractionSearch", "walk_tolerance", vocab.WALKING_TOLERANCE),
             ("EntertainmentSearch", "type", vocab.ENTERTAINMENT_TYPES),
             ("RestaurantSearch", "cuisine", vocab.CUISINES),
             ("RestaurantSearch", "price_level", vocab.PRICE_LEVELS),
             ("RestaurantSearch", "environment", vocab.DINING_ENVIRONMENTS)]  # fmt: skip
    for city in vocab.CITIES[::5]:
        for tool_name, key, values in cases:
            everything = call(ctx, tool_name, city=city, n=1)["total_matches"]
            for value in values:
                found = call(ctx, tool_name, city=city, n=1, preferences={key: [value]})
                assert found["total_matches"] > 0, (city, key, value)
                if value != "High (5km+)":
                    assert found["total_matches"] < everything, (city, key, value)


def test_attraction_walking_and_types(ctx):
    low = call(ctx, "AttractionSearch", city="Hangzhou", n=50,
               preferences={"walk_tolerance": "Low (1-3km)"})  # fmt: skip
    assert all(r["walking_km"] < 3 for r in low["results"])
    both = call(ctx, "AttractionSearch", city="Hangzhou", n=50,
                preferences={"walk_tolerance": ["Low (1-3km)", "Medium (3-5km)"]})  # fmt: skip
    assert all(r["walking_km"] < 5 for r in both["results"])
    assert both["total_matches"] == count(
        ctx, "SELECT COUNT(*) FROM attractions WHERE city_id = 'hangzhou' AND walking_km < 5"
    )
    high = call(
        ctx, "AttractionSearch", city="Hangzhou", preferences={"walk_tolerance": "High (5km+)"}
    )
    assert high["total_matches"] == 60
    museums = call(ctx, "AttractionSearch", city="Beijing", n=50,
                   preferences={"attraction_type": ["Museum/Exhibition", "Religious Site"]})  # fmt: skip
    assert {r["attraction_type"] for r in museums["results"]} <= {
        "Museum/Exhibition",
        "Religious Site",
    }
    assert {"National Museum of China", "Lama Temple"} <= {r["name"] for r in museums["results"]}


def test_entertainment(ctx):
    out = call(
        ctx, "EntertainmentSearch", city="Shanghai", n=50, preferences={"type": ["KTV", "Cinema"]}
    )
    assert out["total_matches"] == count(
        ctx, "SELECT COUNT(*) FROM entertainment WHERE city_id = 'shanghai'"
        " AND secondary_category IN ('KTV', 'Cinema')")  # fmt: skip
    assert all(r["type"] in ("KTV", "Cinema") and r["id"].startswith("E") for r in out["results"])
    assert out["results"] == sorted(out["results"], key=RATING_ORDER)


def test_flight_search(ctx):
    date = "2025-10-15"
    out = call(ctx, "FlightSearch", origin="beijing", destination="Chengdu", departure_date=date,
               n=50, preferences={"cabin_class": ["Economy Class"]})  # fmt: skip
    expected = count(ctx, "SELECT COUNT(*) FROM flights WHERE dep_city_id = 'beijing' AND "
                     "arr_city_id = 'chengdu' AND dep_date = ? AND cabin_class = 'Economy Class'",
                     date)  # fmt: skip
    assert out["total_matches"] == expected > 0
    keys = [(r["dep_time"], r["adult_total"], r["flight_id"]) for r in out["results"]]
    assert keys == sorted(keys)
    for r in out["results"]:
        assert r["cabin_class"] == "Economy Class" and r["dep_date"] == date
        assert r["dep_airport_code"] in ("PEK", "PKX") and r["arr_airport_code"] in ("CTU", "TFU")
        assert r["adult_total"] == r["adult_fare"] + r["fuel_surcharge"] + r["airport_fee"]
    both = call(ctx, "FlightSearch", origin="BJS", destination="CTU", departure_date=date, n=50)
    assert both["total_matches"] > expected
    assert call(ctx, "FlightSearch", origin="Beijing", destination="Tianjin",
                departure_date=date)["results"] == []  # fmt: skip
    for bad in ("2025-12-01", "2025-09-30", "15/10/2025", "2025-10-1", "tomorrow"):
        category, message = error(ctx, "FlightSearch", origin="Beijing", destination="Chengdu",
                                  departure_date=bad)  # fmt: skip
        assert category == "content" and "2025-10-01" in message
    assert error(ctx, "FlightSearch", origin="Suzhou", destination="Beijing",
                 departure_date=date)[0] == "content"  # fmt: skip
    assert error(ctx, "FlightSearch", origin="Beijing", destination="beijing",
                 departure_date=date)[0] == "content"  # fmt: skip
    assert error(ctx, "FlightSearch", origin="Beijing", destination="Chengdu")[0] == "parameter"


def test_train_search(ctx):
    out = call(ctx, "TrainSearch", origin="Beijing", destination="Shanghai", n=50)
    assert out["total_matches"] == count(
        ctx,
        "SELECT COUNT(*) FROM trains WHERE dep_city_id = 'beijing' AND arr_city_id = 'shanghai'",
    )
    assert [r["dep_time"] for r in out["results"]] == sorted(r["dep_time"] for r in out["results"])
    for r in out["results"]:
        assert r["train_type"] in ("High-speed Rail", "Regular Train")
        assert r["seats"][0]["seat_class"] == "Second Class Seat"
        assert {s["seat_class"] for s in r["seats"]} <= set(vocab.TRAIN_SEAT_CLASSES)
        # the real seat next to its Table 9 class, cheapest first, as the train type sells them
        sold = (vocab.HIGH_SPEED_SEAT_TYPES if r["train_type"] == "High-speed Rail"
                else vocab.REGULAR_SEAT_TYPES)  # fmt: skip
        assert all(s["seat_type"] in sold and s["seat_class"] == vocab.TRAIN_SEAT_TYPES[
            s["seat_type"]] for s in r["seats"])  # fmt: skip
        assert [s["fare"] for s in r["seats"]] == sorted(s["fare"] for s in r["seats"])
    lhasa = call(ctx, "TrainSearch", origin="Lhasa", destination="Chengdu", date="2025-11-02")
    assert lhasa["date"] == "2025-11-02"
    assert {r["train_type"] for r in lhasa["results"]} == {"Regular Train"}
    assert "Hard Sleeper" in {s["seat_type"] for r in lhasa["results"] for s in r["seats"]}
    none = call(ctx, "TrainSearch", origin="Lhasa", destination="Xiamen")
    assert none["results"] == [] and "FlightSearch" in none["note"]
    assert (
        error(ctx, "TrainSearch", origin="Beijing", destination="Shanghai", date="2026-01-01")[0]
        == "content"
    )


def test_weather_search(ctx):
    out = call(ctx, "WeatherSearch", city="Harbin", date="2025-11-27", n=10)
    assert [r["date"] for r in out["results"]] == ["2025-11-27", "2025-11-28", "2025-11-29"]
    assert out["description"].startswith("Harbin")
    default = call(ctx, "WeatherSearch", city="Sanya")
    assert [r["date"] for r in default["results"]] == list(DATES[:5])
    for r in default["results"]:
        assert r["weather"] in vocab.WEATHER_KINDS and r["max_temp"] >= r["min_temp"]


def test_mapguide_within_a_city(ctx):
    out = call(ctx, "MapGuide", origin_cityName="Beijing", origin="the forbidden city",
               destination_cityName="BEIJING", destination="Temple of Heaven")  # fmt: skip
    assert out["same_city"] and out["origin"]["id"] == "A00001"
    modes = {r["mode"]: r for r in out["routes"]}
    assert set(modes) == set(vocab.INTRACITY_TRANSPORT)
    assert modes["Walking"]["minutes"] > modes["Taxi"]["minutes"] and modes["Walking"]["cost"] == 0
    assert modes["Taxi"]["cost"] > modes["Subway"]["cost"]
    hotel = call(ctx, "AccommodationSearch", city="Lijiang", n=1)["results"][0]
    by_id = call(ctx, "MapGuide", origin_cityName="Lijiang", origin=hotel["id"],
                 destination_cityName="Lijiang", destination="Lijiang Old Town")  # fmt: skip
    assert by_id["origin"]["name"] == hotel["name"]
    assert "Subway" not in {r["mode"] for r in by_id["routes"]}  # no metro in Lijiang
    same = call(ctx, "MapGuide", origin_cityName="Lijiang", origin=hotel["name"],
                destination_cityName="Lijiang", destination=hotel["id"])  # fmt: skip
    assert same["distance_km"] == 0
    category, message = error(ctx, "MapGuide", origin_cityName="Beijing", origin="Potala Palace",
                              destination_cityName="Beijing", destination="Temple of Heaven")  # fmt: skip
    assert category == "content" and "Potala Palace" in message


def test_mapguide_takes_the_expressway_beyond_the_streets(ctx):
    """Up to 10 road km a taxi drives 28 km/h; beyond, 70 km/h: Lhasa's Gonggar airport
    (about 45 km out) is about an hour away, not two, and a short hop is unchanged."""

    def taxi(city, a, b):
        out = call(ctx, "MapGuide", origin_cityName=city, origin=a, destination_cityName=city,
                   destination=b)  # fmt: skip
        return {r["mode"]: r for r in out["routes"]}["Taxi"], out["distance_km"]

    def expected(road):  # the documented formula (distances are shown rounded to 0.1 km)
        return 4 + min(road, 10) / 28 * 60 + max(0.0, road - 10) / 70 * 60

    airport, km = taxi("Lhasa", "Lhasa Gonggar Airport", "Lhasa")
    assert 40 < km < 50 and 55 <= airport["minutes"] <= 75
    hop, _ = taxi("Beijing", "the forbidden city", "Temple of Heaven")
    for route in (airport, hop):
        assert abs(route["minutes"] - expected(route["distance_km"])) <= 1
    # farther is never quicker
    far, _ = taxi("Beijing", "Beijing Daxing International Airport", "Beijing")
    near, _ = taxi("Beijing", "Beijing Capital International Airport", "Beijing")
    assert far["minutes"] > near["minutes"] > hop["minutes"]


def test_mapguide_between_cities(ctx):
    out = call(ctx, "MapGuide", origin_cityName="Beijing", origin="Beijing South",
               destination_cityName="Tianjin", destination="Tianjin Eye")  # fmt: skip
    assert not out["same_city"] and out["routes"][0]["mode"] == "Driving"
    modes = {m["mode"]: m for m in out["intercity"]}
    assert set(modes) == set(vocab.INTERCITY_TRANSPORT)
    assert not modes["Airplane"]["available"] and modes["High-speed Rail"]["available"]
    assert modes["Long-distance Bus"]["available"] and modes["Long-distance Bus"]["departures"]
    far = call(ctx, "MapGuide", origin_cityName="Shanghai", origin="Shanghai",
               destination_cityName="Lhasa", destination="Potala Palace")  # fmt: skip
    far_modes = {m["mode"]: m for m in far["intercity"]}
    assert far_modes["Airplane"]["available"] and not far_modes["Long-distance Bus"]["available"]
    assert far["origin"]["type"] == "city centre"


def test_python_runs_in_the_sandbox(ctx):
    out = call(ctx, "Python", code="import math\nprint(math.ceil(1275 * 3 / 2))")
    assert out == {**out, "ok": True, "stdout": "1913\n", "error": None}
    failed = call(ctx, "Python", code="raise ValueError('boom')")
    assert not failed["ok"] and failed["error"] == "exception" and "boom" in failed["traceback"]
    refused = call(ctx, "Python", code="import subprocess\nsubprocess.run(['true'])")
    assert refused["error"] == "refused"
    assert error(ctx, "Python", code="x" * 20_001)[0] == "parameter"
    assert error(ctx, "Python")[0] == "parameter"
