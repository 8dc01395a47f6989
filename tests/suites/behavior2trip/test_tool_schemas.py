"""Snapshot of every Behavior2Trip tool schema, and the generated reference kept in sync.

After an intended schema change, regenerate both with:
    travelgym tools behavior2trip > tests/suites/behavior2trip/snapshots/trips_tool_schemas.json
    travelgym tools behavior2trip --markdown > docs/behavior2trip/tools.md
"""

import json
from pathlib import Path

from travelgym.suites.behavior2trip import vocab
from travelgym.suites.behavior2trip.tools import TRIPS_TOOLSET, trips_registry

ROOT = Path(__file__).resolve().parents[3]

# Table 7: tool -> (parameters, preference keys)
TABLE7 = {
    "AccommodationSearch": (["city", "n", "preferences"], ["star_rating", "amenities"]),
    "AttractionSearch": (["city", "n", "preferences"], ["attraction_type", "walk_tolerance"]),
    "EntertainmentSearch": (["city", "n", "preferences"], ["type"]),
    "FlightSearch": (
        ["origin", "destination", "departure_date", "n", "preferences"],
        ["cabin_class"],
    ),
    "MapGuide": (["origin_cityName", "origin", "destination_cityName", "destination"], []),
    "RestaurantSearch": (["city", "n", "preferences"], ["cuisine", "price_level", "environment"]),
    "TrainSearch": (["origin", "destination", "n", "date"], []),
    "WeatherSearch": (["city", "date", "n"], []),
    "Python": (["code"], []),
}


def test_schemas_match_snapshot():
    snapshot = json.loads(
        (ROOT / "tests/suites/behavior2trip/snapshots/trips_tool_schemas.json").read_text()
    )
    current = trips_registry().openai_schemas()
    assert [s["function"]["name"] for s in current] == [s["function"]["name"] for s in snapshot]
    for now, then in zip(current, snapshot, strict=True):
        assert now == then, now["function"]["name"]


def test_parameters_and_preference_keys_follow_table7():
    for schema in trips_registry().openai_schemas():
        fn = schema["function"]
        params, keys = TABLE7[fn["name"]]
        assert list(fn["parameters"]["properties"]) == params
        required = set(fn["parameters"].get("required", []))
        assert required == {p for p in params if p not in ("n", "preferences", "date")}
        if "preferences" in params:
            obj = fn["parameters"]["properties"]["preferences"]["anyOf"][0]
            assert list(obj["properties"]) == keys and obj["additionalProperties"] is False
        if "n" in params:
            n = fn["parameters"]["properties"]["n"]
            assert (n["default"], n["minimum"], n["maximum"]) == (5, 1, 50)


def test_preference_enums_are_the_vocabularies():
    props = trips_registry()["RestaurantSearch"].json_schema()["properties"]
    cuisine = props["preferences"]["anyOf"][0]["properties"]["cuisine"]["anyOf"]
    assert cuisine[0]["items"]["enum"] == list(vocab.CUISINES)
    assert cuisine[1]["enum"] == list(vocab.CUISINES)


def test_every_schema_is_complete():
    for schema in trips_registry().openai_schemas():
        fn = schema["function"]
        assert fn["description"] and "Returns:" in fn["description"]
        params = fn["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        for name, prop in params["properties"].items():
            assert prop.get("description"), f"{fn['name']}.{name} has no description"
        assert "ctx" not in params["properties"]


def test_markdown_reference_is_generated_from_registry():
    assert (ROOT / "docs/behavior2trip/tools.md").read_text() == TRIPS_TOOLSET.reference()
