"""The two-stage tools: what each returns, and clean refusals of bad arguments."""

from __future__ import annotations

import pytest

from travelgym.suites.travelplanner.dataset import read_dataset
from travelgym.suites.travelplanner.ingest import ingest
from travelgym.suites.travelplanner.sandbox_db import DatabaseSandbox
from travelgym.suites.travelplanner.sandbox_reference import ReferenceSandbox
from travelgym.suites.travelplanner.tools import PAPER_NAMES, PlannerContext, make_registry


@pytest.fixture
def world(tp_dataset_dir, tp_database_dir, tmp_path):
    meta = ingest(tp_dataset_dir, tp_database_dir, tmp_path / "data")
    db = DatabaseSandbox.from_path(meta["path"])
    yield PlannerContext(db), read_dataset(tp_dataset_dir, "validation")["validation"]
    db.close()


def call(ctx, name, **args):
    return make_registry().call(name, args, ctx)


def test_the_registry_has_the_seven_tools_with_their_paper_names():
    registry = make_registry()
    assert registry.names == list(PAPER_NAMES)
    for name, paper in PAPER_NAMES.items():
        assert registry[name].description.startswith(paper + ":")
        assert registry[name].context_param == "ctx"
    assert make_registry() is registry


def test_flight_search(world):
    ctx, _ = world
    result = call(ctx, "flight_search", departure_city="St. Petersburg",
                  destination_city="Rockford", date="2022-03-16")  # fmt: skip
    assert result.ok and result.content["count"] == 1
    (flight,) = result.content["results"]
    assert flight["Flight Number"] == "F3573659" and flight["Price"] == 474.0
    assert flight["OriginCityName"] == "St. Petersburg" and flight["DepTime"] == "15:40"
    none = call(ctx, "flight_search", departure_city="Rockford", destination_city="Chicago",
                date="2022-03-16")  # fmt: skip
    assert none.ok and none.content["results"] == []
    assert none.content["message"] == "There is no flight from Rockford to Chicago on 2022-03-16."


def test_city_searches(world):
    ctx, _ = world
    acc = call(ctx, "accommodation_search", city="Rockford").content
    assert [r["NAME"] for r in acc["results"]] == ["Spacious 3BDR Prime Location!",
                                                   "Private Room in a two bedroom apt."]  # fmt: skip
    assert acc["results"][1]["house_rules"] == "No visitors & No smoking"
    assert acc["results"][1]["maximum occupancy"] == 2
    rest = call(ctx, "restaurant_search", city=" Chicago ").content
    assert rest["description"] == "Restaurants in Chicago"
    assert [(r["Name"], r["Average Cost"]) for r in rest["results"]] == [
        ("Golden Dragon", 35.0),
        ("Pizza Corner", 18.0),
    ]
    attr = call(ctx, "attraction_search", city="Chicago").content
    assert attr["results"][0]["Name"] == "Millennium Park" and attr["count"] == 1
    empty = call(ctx, "attraction_search", city="Atlantis").content
    assert empty["count"] == 0 and "no attraction" in empty["message"]
    cities = call(ctx, "city_search", state="Illinois").content
    assert cities == {"state": "Illinois", "cities": ["Chicago", "Peoria", "Rockford"]}


def test_google_distance_matrix(world):
    ctx, _ = world
    drive = call(ctx, "google_distance_matrix", origin="Rockford", destination="Chicago",
                 mode="self-driving").content  # fmt: skip
    assert (drive["duration"], drive["distance"], drive["cost"]) == ("1 hour 32 mins", 143.0, 7)
    assert drive["text"] == ("self-driving, from Rockford to Chicago, duration: 1 hour 32 mins, "
                             "distance: 143 km, cost: 7")  # fmt: skip
    taxi = call(ctx, "google_distance_matrix", origin="St. Petersburg", destination="Rockford",
                mode="taxi").content  # fmt: skip
    assert taxi["cost"] == 2100 and "distance: 2,100 km" in taxi["text"]
    for origin, dest in (("Chicago", "St. Petersburg"), ("Peoria", "Chicago")):
        none = call(ctx, "google_distance_matrix", origin=origin, destination=dest,
                    mode="taxi").content  # fmt: skip
        assert none["cost"] is None and none["text"].endswith("no valid information.")


@pytest.mark.parametrize(("name", "args", "category"), [
    ("flight_search", {"departure_city": "A", "destination_city": "B"}, "parameter"),
    ("flight_search", {"departure_city": "A", "destination_city": "B", "date": "16/03/2022"},
     "parameter"),
    ("flight_search", {"departure_city": "A", "destination_city": "B", "date": "2022-02-30"},
     "content"),
    ("flight_search", {"departure_city": 3, "destination_city": "B", "date": "2022-03-16"},
     "parameter"),
    ("accommodation_search", {"city": ""}, "parameter"),
    ("accommodation_search", {"city": "   "}, "parameter"),
    ("restaurant_search", {"city": "Rockford", "cuisine": "Tea"}, "parameter"),
    ("attraction_search", {"city": "x" * 101}, "parameter"),
    ("google_distance_matrix", {"origin": "A", "destination": "B", "mode": "walking"},
     "parameter"),
    ("city_search", {"state": "Atlantis"}, "content"),
    ("notebook_write", {"short_description": "flights"}, "content"),
    ("notebook_write", {"short_description": ""}, "parameter"),
    ("FlightSearch", {}, "tool_name"),
])  # fmt: skip
def test_bad_arguments_are_refused_cleanly(world, name, args, category):
    ctx, _ = world
    result = make_registry().call(name, args, ctx)
    assert not result.ok and result.error.category.value == category
    assert result.error.message


def test_the_notebook_reads_back_as_the_reference_sandbox(world):
    ctx, queries = world
    steps = [
        ("flight_search", {"departure_city": "St. Petersburg", "destination_city": "Rockford",
                           "date": "2022-03-16"}),
        ("google_distance_matrix", {"origin": "Rockford", "destination": "Chicago",
                                    "mode": "taxi"}),
        ("accommodation_search", {"city": "Rockford"}),
        ("restaurant_search", {"city": "Rockford"}),
        ("attraction_search", {"city": "Rockford"}),
        ("city_search", {"state": "Illinois"}),
    ]  # fmt: skip
    for i, (name, args) in enumerate(steps):
        assert call(ctx, name, **args).ok
        written = call(ctx, "notebook_write", short_description=f"step {i}").content
        assert written["index"] == i and "its index is" in written["message"]
    notebook = ctx.reference_information()
    assert [e["Description"] for e in notebook] == [f"step {i}" for i in range(len(steps))]
    ref = ReferenceSandbox(queries[0].model_copy(update={"reference_information": notebook}))
    db = ctx.sandbox
    assert ref.skipped == 0
    assert ref.flights("St. Petersburg", "Rockford", "2022-03-16") == db.flights(
        "St. Petersburg", "Rockford", "2022-03-16"
    )
    assert ref.drive("Rockford", "Chicago", "taxi") == db.drive("Rockford", "Chicago", "taxi")
    assert ref.accommodations("Rockford") == db.accommodations("Rockford")
    assert ref.restaurants("Rockford") == db.restaurants("Rockford")
    assert ref.attractions("Rockford") == db.attractions("Rockford")
    assert ref.cities_of_state("Illinois") == db.cities_of_state("Illinois")


def test_tools_work_over_the_reference_sandbox(world):
    _, queries = world
    ctx = PlannerContext(ReferenceSandbox(queries[0]))
    result = call(ctx, "restaurant_search", city="Rockford")
    assert [r["Name"] for r in result.content["results"]] == ["Coco Bambu", "Flying Mango"]
