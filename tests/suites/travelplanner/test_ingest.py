"""Ingesting the dataset and the database into one versioned SQLite file."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.suites.travelplanner.conftest import write_csv
from travelgym.core.errors import UserError
from travelgym.datafiles import read_manifest
from travelgym.suites.travelplanner.database import DatabaseError
from travelgym.suites.travelplanner.dataset import read_dataset
from travelgym.suites.travelplanner.ingest import (
    FORMAT_VERSION,
    NOT_INGESTED,
    ingest,
    load_queries,
    open_ingested,
)


def test_round_trip(tp_dataset_dir, tp_database_dir, tmp_path):
    meta = ingest(tp_dataset_dir, tp_database_dir, tmp_path / "data")
    path, opened = open_ingested(tmp_path / "data")
    assert str(path) == meta["path"] and path.name == "travelplanner.sqlite"
    assert path.parent == tmp_path / "data" / "travelplanner"
    assert opened == meta
    assert meta["format_version"] == FORMAT_VERSION and meta["has_database"] is True
    assert meta["splits"]["validation"] == 3 and meta["splits"]["test"] == 3
    assert meta["records"] == {"flights": 3, "accommodations": 4, "restaurants": 4,
                               "attractions": 3, "distances": 4, "cities": 4}  # fmt: skip
    assert meta["skipped"]["flights"] == 1  # the row with empty cells
    assert read_manifest(path) == meta
    read = read_dataset(tp_dataset_dir)
    for split, queries in read.items():
        assert load_queries(path, split) == queries
    conn = sqlite3.connect(path)
    assert load_queries(conn, "validation") == read["validation"]
    conn.close()


def test_the_content_hash_depends_on_the_content_only(tp_dataset_dir, tp_database_dir,
                                                      tmp_path):  # fmt: skip
    first = ingest(tp_dataset_dir, tp_database_dir, tmp_path / "a")
    again = ingest(tp_dataset_dir, tp_database_dir, tmp_path / "b")
    assert first["content_hash"] == again["content_hash"]
    assert len(first["content_hash"]) == 64
    cities = tp_database_dir / "background/citySet_with_states.txt"
    cities.write_text(cities.read_text() + "Springfield\tIllinois\n")
    changed = ingest(tp_dataset_dir, tp_database_dir, tmp_path / "c")
    assert changed["content_hash"] != first["content_hash"]
    without = ingest(tp_dataset_dir, None, tmp_path / "d")
    assert without["content_hash"] not in (first["content_hash"], changed["content_hash"])
    assert without["has_database"] is False and without["records"]["flights"] == 0


def test_one_split_from_a_file(tp_dataset_dir, tmp_path):
    meta = ingest(tp_dataset_dir / "test.jsonl", None, tmp_path, split="test")
    assert meta["splits"] == {"test": 3}
    with pytest.raises(UserError, match=r"no TravelPlanner 'validation' queries.*ingested: test"):
        load_queries(meta["path"], "validation")


def test_nothing_ingested_is_a_clear_error(tmp_path):
    with pytest.raises(UserError) as exc:
        open_ingested(tmp_path)
    assert str(exc.value) == NOT_INGESTED


def test_another_format_version_asks_to_ingest_again(tp_dataset_dir, tmp_path):
    path = ingest(tp_dataset_dir, None, tmp_path)["path"]
    conn = sqlite3.connect(path)
    conn.execute("UPDATE metadata SET value = '0' WHERE key = 'format_version'")
    conn.commit()
    conn.close()
    with pytest.raises(UserError, match="format version 0"):
        open_ingested(tmp_path)


def test_a_failed_ingest_keeps_the_previous_file(tp_dataset_dir, tp_database_dir, tmp_path):
    before = ingest(tp_dataset_dir, None, tmp_path)
    (tp_database_dir / "attractions/attractions.csv").unlink()
    with pytest.raises(DatabaseError) as exc:
        ingest(tp_dataset_dir, tp_database_dir, tmp_path)
    assert "attractions/attractions.csv: missing database file" in str(exc.value)
    assert open_ingested(tmp_path)[1]["content_hash"] == before["content_hash"]


def test_a_bad_database_cell_names_the_file_the_row_and_the_column(tp_database_dir, tmp_path,
                                                                  tp_dataset_dir):  # fmt: skip
    path = tp_database_dir / "restaurants/clean_restaurant_2022.csv"
    write_csv(path, [{"Name": "A", "Average Cost": "12", "Cuisines": "Tea",
                      "Aggregate Rating": "4", "City": "Rockford"},
                     {"Name": "B", "Average Cost": "cheap", "Cuisines": "Tea",
                      "Aggregate Rating": "4", "City": "Rockford"}])  # fmt: skip
    with pytest.raises(DatabaseError) as exc:
        ingest(tp_dataset_dir, tp_database_dir, tmp_path)
    message = str(exc.value)
    assert "\n" not in message
    assert f"{path}: row 2: column 'Average Cost'" in message and "'cheap'" in message


def test_an_attraction_with_an_empty_cell_is_dropped_as_the_script_does(tp_database_dir,
                                                                         tp_dataset_dir, tmp_path):  # fmt: skip
    """TravelPlanner's attraction search reads its file with ``dropna()``: an attraction with
    an empty Website (or any other cell) is outside its sandbox, so it is outside ours too."""
    path = tp_database_dir / "attractions/attractions.csv"
    row = {"Name": "Midway Village Museum", "Latitude": "42.28", "Longitude": "-89.0",
           "Address": "6799 Guilford Rd, Rockford", "Phone": "(815) 397-9112",
           "Website": "http://midwayvillage.com/", "City": "Rockford"}  # fmt: skip
    write_csv(path, [row, {**row, "Name": "No Website Park", "Website": ""}])
    meta = ingest(tp_dataset_dir, tp_database_dir, tmp_path)
    assert meta["records"]["attractions"] == 1 and meta["skipped"]["attractions"] == 1


def test_a_missing_database_column_is_named(tp_database_dir, tp_dataset_dir, tmp_path):
    path = tp_database_dir / "googleDistanceMatrix/distance.csv"
    write_csv(path, [{"origin": "A", "destination": "B", "duration": "1 hour"}])
    with pytest.raises(DatabaseError, match="missing column 'distance'"):
        ingest(tp_dataset_dir, tp_database_dir, tmp_path)
    cities = tp_database_dir / "background/citySet_with_states.txt"
    write_csv(path, [{"origin": "A", "destination": "B", "duration": "1 hour",
                      "distance": "12 km"}])  # fmt: skip
    cities.write_text("Rockford Illinois\n")
    with pytest.raises(DatabaseError, match="line 1: expected CITY<TAB>STATE"):
        ingest(tp_dataset_dir, tp_database_dir, tmp_path)


def test_the_metadata_table_holds_json(tp_dataset_dir, tmp_path):
    path = ingest(tp_dataset_dir, None, tmp_path)["path"]
    conn = sqlite3.connect(path)
    rows = dict(conn.execute("SELECT key, value FROM metadata"))
    conn.close()
    assert json.loads(rows["has_database"]) is False
    assert "path" not in rows  # where the file lies is not part of it


def test_an_ingest_shows_its_progress_counted_to_the_end(tp_dataset_dir, tp_database_dir,
                                                         tmp_path, monkeypatch):  # fmt: skip
    """Reading the database directory (the real flights file is about 300 MB: the ingest sat
    silent for two minutes) moves a bar by KiB read, and writing the data file one by table."""
    from travelgym import progress

    flights = tp_database_dir / "flights/clean_Flights_2022.csv"
    lines = flights.read_text(encoding="utf-8").splitlines(keepends=True)
    flights.write_text(lines[0] + "".join(lines[1:]) * 4000, encoding="utf-8")
    seen: dict[str, tuple[int | None, list[int]]] = {}

    class Recorded(progress.Step):
        def __init__(self, desc, total, unit, initial=0):
            self._bar, self.steps = None, []
            seen[desc] = (total, self.steps)

        def advance(self, n=1):
            self.steps.append(n)

        def close(self):
            pass

    monkeypatch.setattr(progress, "Step", Recorded)
    meta = ingest(tp_dataset_dir, tp_database_dir, tmp_path / "data")
    assert meta["records"]["flights"] == 3 * 4000
    total, steps = seen["travelplanner: reading the database"]
    files = [p for p in tp_database_dir.rglob("*.csv")]
    assert total == sum(-(-p.stat().st_size // 1024) for p in files) and sum(steps) == total
    assert len(steps) > 100  # moved while the flights were read, not once at the end
    total, steps = seen["travelplanner: writing the data file"]
    assert sum(steps) == total == 8
