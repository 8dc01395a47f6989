"""The TravelPlanner repository's reference information (``database/*_ref_info.jsonl``: one
object of description -> records per query) ingests to exactly what the Hugging Face column
(a list of Description/Content entries whose tables are ``DataFrame.to_string`` text) gives for
the same rows: the same queries and the same content hash."""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner

from tests.suites.travelplanner.conftest import query_rows, write_csv
from travelgym.cli import main
from travelgym.suites.travelplanner.dataset import DatasetError, read_dataset
from travelgym.suites.travelplanner.frames import render_records
from travelgym.suites.travelplanner.ingest import ingest

ATTRACTIONS = [
    {"Name": "Burpee Museum of Natural History", "Latitude": 42.2773242,
     "Longitude": -89.0881425, "Address": "737 N Main St, Rockford, IL 61103, USA",
     "Phone": "(815) 965-3433", "Website": "http://www.burpee.org/", "City": "Rockford"},
    {"Name": "Anderson Japanese Gardens", "Latitude": 42.29, "Longitude": -89.0577954,
     "Address": "318 Spring Creek Rd, Rockford, IL 61107, USA", "Phone": "(815) 229-9390",
     "Website": None, "City": "Rockford"},
]  # fmt: skip
FLIGHTS = [
    {"Flight Number": "F3573659", "Price": 474, "DepTime": "15:40", "ArrTime": "17:04",
     "ActualElapsedTime": "2 hours 24 minutes", "FlightDate": "2022-03-16",
     "OriginCityName": "St. Petersburg", "DestCityName": "Rockford", "Distance": 1049.0},
]  # fmt: skip
ACCOMMODATIONS = [
    {"NAME": "Spacious 3BDR Prime Location!", "price": 1030.0, "room type": "Entire home/apt",
     "house_rules": "No smoking", "minimum nights": 2.0, "maximum occupancy": 9,
     "review rate number": 2.0, "city": "Rockford"},
    {"NAME": "Private Room in a two bedroom apt.", "price": 210.5, "room type": "Private room",
     "house_rules": "No visitors & No smoking", "minimum nights": 1.0, "maximum occupancy": 2,
     "review rate number": 4.0, "city": "Rockford"},
]  # fmt: skip
RESTAURANTS = [
    {"Name": "Golden Dragon", "Average Cost": 35, "Cuisines": "Chinese, Desserts",
     "Aggregate Rating": 4.1, "City": "Chicago"},
    {"Name": "Pizza Corner", "Average Cost": 18, "Cuisines": "Pizza, Italian",
     "Aggregate Rating": 0.0, "City": "Chicago"},
]  # fmt: skip
DRIVE = ("self-driving, from St. Petersburg to Rockford, duration: 19 hours 21 mins, distance: "
         "2,100 km, cost: 105")  # fmt: skip
TAXI = "taxi, from Rockford to Chicago, duration: 1 hour 32 mins, distance: 143 km, cost: 143"

# the same rows as the Hugging Face column prints them (pandas' to_string: 6 decimals trimmed
# alike per column, NaN for a missing cell, flights without the index), written out by hand
ATTRACTIONS_TEXT = (
    "                               Name   Latitude  Longitude                                 "
    "      Address           Phone                 Website      City\n"
    "0  Burpee Museum of Natural History  42.277324 -89.088143        737 N Main St, Rockford, "
    "IL 61103, USA  (815) 965-3433  http://www.burpee.org/  Rockford\n"
    "1         Anderson Japanese Gardens  42.290000 -89.057795  318 Spring Creek Rd, Rockford, "
    "IL 61107, USA  (815) 229-9390                     NaN  Rockford"
)
FLIGHTS_TEXT = (
    "Flight Number  Price DepTime ArrTime  ActualElapsedTime FlightDate OriginCityName "
    "DestCityName  Distance\n"
    "     F3573659    474   15:40   17:04 2 hours 24 minutes 2022-03-16 St. Petersburg     "
    "Rockford    1049.0"
)
ACCOMMODATIONS_TEXT = (
    "                                 NAME   price        room type               house_rules  "
    "minimum nights  maximum occupancy  review rate number      city\n"
    "0       Spacious 3BDR Prime Location!  1030.0  Entire home/apt                No smoking  "
    "           2.0                  9                 2.0  Rockford\n"
    "1  Private Room in a two bedroom apt.   210.5     Private room  No visitors & No smoking  "
    "           1.0                  2                 4.0  Rockford"
)
RESTAURANTS_TEXT = (
    "            Name  Average Cost           Cuisines  Aggregate Rating     City\n"
    "0  Golden Dragon            35  Chinese, Desserts               4.1  Chicago\n"
    "1   Pizza Corner            18     Pizza, Italian               0.0  Chicago"
)
NO_FLIGHT = "There is no flight from Rockford to Chicago on 2022-03-20."


def object_forms() -> list[dict]:
    """The two rows' reference information as the repository publishes it."""
    return [
        {"Attractions in Rockford": ATTRACTIONS,
         "Flight from St. Petersburg to Rockford on 2022-03-16": FLIGHTS,
         "Self-driving from St. Petersburg to Rockford": DRIVE,
         "Accommodations in Rockford": ACCOMMODATIONS},
        {"Restaurants in Chicago": RESTAURANTS,
         "Flight from Rockford to Chicago on 2022-03-20": [],
         "Taxi from Rockford to Chicago": TAXI,
         "Cities in Illinois": ["Chicago", "Rockford"]},
    ]  # fmt: skip


def hugging_face_forms() -> list[list[dict]]:
    """The same reference information as the Hugging Face column holds it."""
    return [
        [{"Description": "Attractions in Rockford", "Content": ATTRACTIONS_TEXT},
         {"Description": "Flight from St. Petersburg to Rockford on 2022-03-16",
          "Content": FLIGHTS_TEXT},
         {"Description": "Self-driving from St. Petersburg to Rockford", "Content": DRIVE},
         {"Description": "Accommodations in Rockford", "Content": ACCOMMODATIONS_TEXT}],
        [{"Description": "Restaurants in Chicago", "Content": RESTAURANTS_TEXT},
         {"Description": "Flight from Rockford to Chicago on 2022-03-20", "Content": NO_FLIGHT},
         {"Description": "Taxi from Rockford to Chicago", "Content": TAXI},
         {"Description": "Cities in Illinois", "Content": ["Chicago", "Rockford"]}],
    ]  # fmt: skip


def two_rows(references: list) -> list[dict]:
    """The first two queries of the tiny dataset with ``references`` as their reference
    information."""
    rows = query_rows()[:2]
    return [{**row, "reference_information": ref} for row, ref in zip(rows, references,
                                                                       strict=True)]  # fmt: skip


def write_jsonl(path, rows: list[dict]):
    """``rows`` as a JSONL file at ``path`` (its directory made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_the_repository_form_and_the_hugging_face_form_ingest_to_the_same_hash(tmp_path):
    # the Hugging Face export: the column as Python-literal text
    hf_rows = [{**row, "reference_information": repr(row["reference_information"])}
               for row in two_rows(hugging_face_forms())]  # fmt: skip
    hf = write_jsonl(tmp_path / "hf" / "validation.jsonl", hf_rows)
    # the repository's objects, in a JSONL row as they are and in a CSV cell as JSON text
    objects = write_jsonl(tmp_path / "repo" / "validation.jsonl", two_rows(object_forms()))
    csv_rows = [{**row, **{k: json.dumps(row[k]) for k in ("date", "local_constraint",
                                                          "reference_information",
                                                          "annotated_plan")}}
                for row in two_rows(object_forms())]  # fmt: skip
    (tmp_path / "csv").mkdir()
    as_csv = write_csv(tmp_path / "csv" / "validation.csv", csv_rows)

    metas = [ingest(path, None, None, out=tmp_path / f"{path.parent.name}.sqlite")
             for path in (hf, objects, as_csv)]  # fmt: skip
    assert len({m["content_hash"] for m in metas}) == 1
    from_hf, from_repo = (read_dataset(p)["validation"] for p in (hf, objects))
    assert from_repo == from_hf
    first = from_repo[0].reference_information
    assert first is not None and first[0]["Content"] == ATTRACTIONS_TEXT
    # an empty search is TravelPlanner's sentence; a city list is kept as the column keeps it
    second = from_repo[1].reference_information
    assert second is not None and second[1]["Content"] == NO_FLIGHT
    assert json.loads(second[3]["Content"]) == ["Chicago", "Rockford"]


def test_a_different_value_gives_a_different_hash(tmp_path):
    changed = object_forms()
    changed[0]["Attractions in Rockford"] = [dict(ATTRACTIONS[0], Latitude=42.2773262),
                                             ATTRACTIONS[1]]  # fmt: skip
    paths = [write_jsonl(tmp_path / name / "validation.jsonl", two_rows(refs))
             for name, refs in (("same", object_forms()), ("changed", changed))]  # fmt: skip
    hashes = {ingest(p, None, None, out=p.with_suffix(".sqlite"))["content_hash"] for p in paths}
    assert len(hashes) == 2


@pytest.mark.parametrize(
    ("content", "problem"),
    [(42, "got 42"), ([{"Name": "x"}, "y"], "expected text, a list of records or a list of "
                                           "names")],
)  # fmt: skip
def test_a_bad_object_value_names_the_file_the_row_and_the_field(tmp_path, content, problem):
    refs = object_forms()
    refs[1]["Restaurants in Chicago"] = content
    path = write_jsonl(tmp_path / "validation.jsonl", two_rows(refs))
    with pytest.raises(DatasetError) as caught:
        read_dataset(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: row 2: ")
    assert "field 'reference_information'" in message and "'Restaurants in Chicago'" in message
    assert problem in message


def test_the_cli_refuses_a_bad_object_in_one_line(tmp_path):
    refs = object_forms()
    refs[0]["Attractions in Rockford"] = {"Name": "not a list"}
    path = write_jsonl(tmp_path / "validation.jsonl", two_rows(refs))
    result = CliRunner().invoke(main, ["ingest", "travelplanner", "--dataset", str(path),
                                       "--data-dir", str(tmp_path / "data")])  # fmt: skip
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "row 1: field 'reference_information'" in lines[0]
    assert "Traceback" not in result.output


def test_records_print_as_pandas_prints_them():
    pd = pytest.importorskip("pandas")
    rng = random.Random(7)
    columns = {"Name": lambda: rng.choice(["A", "Loft by the Lake", "-x", None]),
               "price": lambda: rng.choice([rng.randint(1, 2000), None]),
               "Latitude": lambda: rng.choice([round(rng.uniform(-90, 90), rng.randint(0, 9)),
                                               float("nan"), 1e-8, 2.5e7]),
               "minimum nights": lambda: float(rng.randint(1, 30)),
               "Average Cost": lambda: rng.randint(-5, 100)}  # fmt: skip
    for _ in range(300):
        names = rng.sample(sorted(columns), rng.randint(1, len(columns)))
        rows = [{n: columns[n]() for n in names} for _ in range(rng.randint(1, 8))]
        for index in (True, False):
            assert render_records(rows, index) == pd.DataFrame(rows).to_string(index=index)
