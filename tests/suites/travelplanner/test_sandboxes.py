"""DatabaseSandbox and ReferenceSandbox answer the same lookups for the same records."""

from __future__ import annotations

import pytest

from tests.suites.travelplanner.conftest import REST_COLS, RESTAURANTS
from travelgym.core.errors import UserError
from travelgym.suites.travelplanner.dataset import read_dataset
from travelgym.suites.travelplanner.frames import parse_table, render_table
from travelgym.suites.travelplanner.ingest import ingest
from travelgym.suites.travelplanner.sandbox import Drive
from travelgym.suites.travelplanner.sandbox_db import DatabaseSandbox
from travelgym.suites.travelplanner.sandbox_reference import ReferenceSandbox


@pytest.fixture
def sandboxes(tp_dataset_dir, tp_database_dir, tmp_path):
    meta = ingest(tp_dataset_dir, tp_database_dir, tmp_path / "data")
    db = DatabaseSandbox.from_path(meta["path"])
    yield db, read_dataset(tp_dataset_dir, "validation")["validation"]
    db.close()


LEGS = {1: [("St. Petersburg", "Rockford", "2022-03-16"), ("Rockford", "St. Petersburg",
                                                             "2022-03-18")],
        2: [("Rockford", "Chicago", "2022-03-20")],
        3: [("St. Petersburg", "Chicago", "2022-03-20"), ("Rockford", "St. Petersburg",
                                                            "2022-03-24")]}  # fmt: skip
CITIES = {1: ["Rockford"], 2: ["Chicago"], 3: ["Chicago", "Rockford"]}


def _valid(drive):
    """A drive with valid information, else None: the database has no row for a route it
    lacks, where the reference information says "no valid information"."""
    return drive if drive is not None and drive.duration is not None else None


@pytest.mark.parametrize("idx", [1, 2, 3])
def test_both_sandboxes_agree(sandboxes, idx):
    db, queries = sandboxes
    ref = ReferenceSandbox(queries[idx - 1], states={"Rockford": "Illinois"})
    assert ref.skipped == 0
    for city in CITIES[idx]:
        assert ref.accommodations(city) == db.accommodations(city) != []
        assert ref.restaurants(city) == db.restaurants(city) != []
        assert ref.attractions(city) == db.attractions(city) != []
        first = db.restaurants(city)[0]
        assert ref.restaurant(first.name, city) == db.restaurant(first.name, city) == first
    for origin, dest, date in LEGS[idx]:
        assert ref.flights(origin, dest, date) == db.flights(origin, dest, date)
        for mode in ("self-driving", "taxi"):
            assert _valid(ref.drive(origin, dest, mode)) == _valid(db.drive(origin, dest, mode))


def test_what_the_records_hold(sandboxes):
    db, queries = sandboxes
    (flight,) = db.flights("St. Petersburg", "Rockford", "2022-03-16")
    assert (flight.flight_number, flight.price, flight.dep_time) == ("F3573659", 474.0, "15:40")
    assert db.flights("St. Petersburg", "Rockford", "2022-03-17") == []
    assert db.flight("F3573659", "St. Petersburg", "Rockford") == flight
    room = db.accommodation("Private Room", "Rockford")
    assert (room.price, room.minimum_nights, room.maximum_occupancy) == (210.0, 1, 2)
    assert room.house_rules == "No visitors & No smoking"
    assert db.attraction("Millennium Park", "Chicago").phone == "Unknown"
    assert db.drive("Rockford", "Chicago", "self-driving") == Drive(
        "Rockford", "Chicago", "self-driving", "1 hour 32 mins", 143.0, 7.0
    )
    assert db.drive("Rockford", "Chicago", "taxi").cost == 143.0
    assert db.drive("St. Petersburg", "Rockford", "self-driving").distance_km == 2100.0
    # a route taking days has no valid information; a route not in the matrix is absent
    assert db.drive("Chicago", "St. Petersburg", "taxi").duration is None
    assert db.drive("Peoria", "Chicago", "taxi") is None
    assert db.city_state("Peoria") == "Illinois" and db.city_state("Paris") is None
    assert db.cities_of_state("Illinois") == ["Chicago", "Peoria", "Rockford"]
    ref = ReferenceSandbox(queries[1])
    # the reference says "no valid information" for a route it searched
    assert ref.drive("Chicago", "Rockford", "taxi").duration is None
    assert ref.city_state("Chicago") is None  # no city set without the database


def test_a_database_less_ingest_has_no_database_sandbox(tp_dataset_dir, tmp_path):
    meta = ingest(tp_dataset_dir, None, tmp_path)
    with pytest.raises(UserError, match="without its database"):
        DatabaseSandbox.from_path(meta["path"])


def test_unreadable_reference_parts_are_skipped_and_counted(sandboxes):
    _, queries = sandboxes
    garbage = [
        {"Description": "Weather in Rockford", "Content": "sunny"},
        {"Description": "Restaurants in Rockford", "Content": "no table here"},
        {"Description": "Taxi from A to B", "Content": "taxi, from A to B, duration"},
        {"Description": "Flight from A to B on 2022-03-16",
         "Content": "There is no flight from A to B on 2022-03-16."},
        {"Description": "Cities in Illinois", "Content": "['Rockford', 'Chicago']"},
        {"Description": "Restaurants in Peoria",
         "Content": render_table(REST_COLS, [
             dict(zip(REST_COLS, ["Good", 10, "Tea", 4.0, "Peoria"], strict=True)),
             dict(zip(REST_COLS, ["Bad", "NaN", "Tea", 4.0, "Peoria"], strict=True))])},
    ]  # fmt: skip
    query = queries[0].model_copy(update={"reference_information": garbage})
    ref = ReferenceSandbox(query)
    assert ref.skipped == 4  # weather, the non-table, the cut drive, the NaN-cost row
    assert [r.name for r in ref.restaurants("Peoria")] == ["Good"]
    assert ref.cities_of_state("Illinois") == ["Chicago", "Rockford"]
    assert ReferenceSandbox(queries[0].model_copy(update={"reference_information": None})
                            ).skipped == 0  # fmt: skip


def test_table_text_keeps_cells_with_spaces():
    rows = [dict(zip(REST_COLS, r, strict=True)) for r in RESTAURANTS]
    for index in (True, False):
        table = parse_table(render_table(REST_COLS, rows, index=index), REST_COLS)
        assert table.skipped == 0
        assert [r["Cuisines"] for r in table.rows] == [r[2] for r in RESTAURANTS]
    assert parse_table("Name City\nx y", REST_COLS) is None
    assert parse_table("", REST_COLS) is None


def test_pandas_to_string_reads_back():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(RESTAURANTS * 4, columns=REST_COLS)
    for index in (True, False):
        table = parse_table(frame.to_string(index=index), REST_COLS)
        assert table.skipped == 0 and len(table.rows) == 16
        assert table.rows[13] == {c: str(v) for c, v in zip(REST_COLS, RESTAURANTS[1],
                                                            strict=True)}  # fmt: skip
    elided = parse_table(frame.to_string(max_rows=6), REST_COLS)
    assert elided.skipped == 1 and len(elided.rows) == 6
