"""A tiny TravelPlanner in the published formats: three queries (easy, medium, hard) with
reference information drawn from the same records as a tiny database directory."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

CITIES = {"St. Petersburg": "Florida", "Rockford": "Illinois", "Chicago": "Illinois",
          "Peoria": "Illinois"}  # fmt: skip
FLIGHT_COLS = ["Flight Number", "Price", "DepTime", "ArrTime", "ActualElapsedTime",
               "FlightDate", "OriginCityName", "DestCityName", "Distance"]  # fmt: skip
FLIGHTS = [
    ["F3573659", 474, "15:40", "17:04", "2 hours 24 minutes", "2022-03-16", "St. Petersburg",
     "Rockford", 1049.0],
    ["F3573120", 346, "19:00", "22:43", "2 hours 43 minutes", "2022-03-18", "Rockford",
     "St. Petersburg", 1049.0],
    ["F1000001", 210, "07:05", "09:15", "2 hours 10 minutes", "2022-03-20", "St. Petersburg",
     "Chicago", 1000.0],
]  # fmt: skip
ACC_COLS = ["NAME", "price", "room type", "house_rules", "minimum nights", "maximum occupancy",
            "review rate number", "city"]  # fmt: skip
ACCOMMODATIONS = [
    ["Spacious 3BDR Prime Location!", 1030.0, "Entire home/apt", "No smoking", 2.0, 9, 2.0,
     "Rockford"],
    ["Private Room in a two bedroom apt.", 210.0, "Private room", "No visitors & No smoking",
     1.0, 2, 4.0, "Rockford"],
    ["Loft by the Lake", 320.0, "Entire home/apt", "No pets", 1.0, 4, 5.0, "Chicago"],
    ["Cozy shared room", 60.0, "Shared room", "No parties", 1.0, 1, 3.0, "Chicago"],
]  # fmt: skip
REST_COLS = ["Name", "Average Cost", "Cuisines", "Aggregate Rating", "City"]
RESTAURANTS = [
    ["Coco Bambu", 72, "Tea, French, Bakery, BBQ, Cafe", 4.9, "Rockford"],
    ["Flying Mango", 20, "American, BBQ, Seafood", 4.5, "Rockford"],
    ["Golden Dragon", 35, "Chinese, Desserts", 4.1, "Chicago"],
    ["Pizza Corner", 18, "Pizza, Italian", 3.2, "Chicago"],
]
ATTR_COLS = ["Name", "Latitude", "Longitude", "Address", "Phone", "Website", "City"]
ATTRACTIONS = [
    ["Burpee Museum of Natural History", 42.2773242, -89.0881425,
     "737 N Main St, Rockford, IL 61103, USA", "(815) 965-3433", "http://www.burpee.org/",
     "Rockford"],
    ["Anderson Japanese Gardens", 42.2900539, -89.0577954,
     "318 Spring Creek Rd, Rockford, IL 61107, USA", "(815) 229-9390",
     "http://andersongardens.org/", "Rockford"],
    ["Millennium Park", 41.8825524, -87.6225514, "Michigan Ave, Chicago, IL 60602, USA",
     "Unknown", "https://www.chicago.gov/", "Chicago"],
]  # fmt: skip
# origin, destination, duration, distance
DISTANCES = [
    ["St. Petersburg", "Rockford", "19 hours 21 mins", "2,100 km"],
    ["Rockford", "St. Petersburg", "19 hours 25 mins", "2,101 km"],
    ["Rockford", "Chicago", "1 hour 32 mins", "143 km"],
    ["Chicago", "St. Petersburg", "1 day 2 hours", "2,000 km"],
]


def frame_text(columns: list[str], rows: list[list], index: bool = True) -> str:
    """Rows as ``DataFrame.to_string`` prints them (right-justified; index optional)."""
    cells = [[str(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    pad = len(str(len(rows) - 1)) if index else 0

    def line(label: str, values: list[str]) -> str:
        body = " ".join(v.rjust(w) for v, w in zip(values, widths, strict=True))
        return (label.ljust(pad) + " " + body) if index else body

    return "\n".join([line("", columns)] + [line(str(i), r) for i, r in enumerate(cells)])


def drive_text(mode: str, origin: str, dest: str) -> str:
    """The reference-information text of one drive, as TravelPlanner writes it."""
    for o, d, duration, distance in DISTANCES:
        if (o, d) == (origin, dest) and "day" not in duration:
            km = float(distance.replace(",", "").split()[0])
            cost = int(km * (0.05 if mode == "self-driving" else 1))
            return (f"{mode}, from {origin} to {dest}, duration: {duration}, distance: "
                    f"{distance}, cost: {cost}")  # fmt: skip
    return f"{mode}, from {origin} to {dest}, no valid information."


def city_entries(city: str) -> list[dict[str, str]]:
    """Attractions, restaurants and accommodations of a city as reference entries."""
    return [
        {"Description": f"Attractions in {city}",
         "Content": frame_text(ATTR_COLS, [r for r in ATTRACTIONS if r[-1] == city])},
        {"Description": f"Restaurants in {city}",
         "Content": frame_text(REST_COLS, [r for r in RESTAURANTS if r[-1] == city])},
        {"Description": f"Accommodations in {city}",
         "Content": frame_text(ACC_COLS, [r for r in ACCOMMODATIONS if r[-1] == city])},
    ]  # fmt: skip


def route_entries(origin: str, dest: str, date: str) -> list[dict[str, str]]:
    """The flight, self-driving and taxi entries of one leg."""
    flights = [r for r in FLIGHTS if (r[6], r[7], r[5]) == (origin, dest, date)]
    content = (frame_text(FLIGHT_COLS, flights, index=False) if flights
               else f"There is no flight from {origin} to {dest} on {date}.")  # fmt: skip
    return [
        {"Description": f"Flight from {origin} to {dest} on {date}", "Content": content},
        {"Description": f"Self-driving from {origin} to {dest}",
         "Content": drive_text("self-driving", origin, dest)},
        {"Description": f"Taxi from {origin} to {dest}",
         "Content": drive_text("taxi", origin, dest)},
    ]  # fmt: skip


NO_CONSTRAINT = {"house rule": None, "cuisine": None, "room type": None, "transportation": None}


def query_rows() -> list[dict]:
    """The three queries as dataset rows with native values (lists, dicts)."""
    easy = {
        "org": "St. Petersburg", "dest": "Rockford", "days": 3, "visiting_city_number": 1,
        "date": ["2022-03-16", "2022-03-17", "2022-03-18"], "people_number": 1,
        "local_constraint": dict(NO_CONSTRAINT), "budget": 1700,
        "query": "Please plan a trip for me starting from St. Petersburg to Rockford spanning "
                 "3 days from March 16th to March 18th, 2022. The travel should be planned for "
                 "a single person with a budget of $1,700.",
        "level": "easy",
        "reference_information": city_entries("Rockford")
        + route_entries("St. Petersburg", "Rockford", "2022-03-16")
        + route_entries("Rockford", "St. Petersburg", "2022-03-18"),
        "annotated_plan": [
            {"org": "St. Petersburg", "dest": "Rockford", "days": 3},
            {"days": 1, "current_city": "from St. Petersburg to Rockford",
             "transportation": "Flight Number: F3573659, from St. Petersburg to Rockford, "
                               "Departure Time: 15:40, Arrival Time: 17:04",
             "breakfast": "-", "attraction": "-", "lunch": "-",
             "dinner": "Coco Bambu, Rockford",
             "accommodation": "Private Room in a two bedroom apt., Rockford"},
        ],
    }  # fmt: skip
    medium = {
        "org": "Rockford", "dest": "Chicago", "days": 3, "visiting_city_number": 1,
        "date": ["2022-03-20", "2022-03-21", "2022-03-22"], "people_number": 2,
        "local_constraint": {**NO_CONSTRAINT, "house rule": "pets"}, "budget": 1500,
        "query": "Plan a 3-day trip for 2 from Rockford to Chicago, March 20-22, 2022, budget "
                 "$1,500; we travel with our dog.",
        "level": "medium",
        "reference_information": city_entries("Chicago")
        + route_entries("Rockford", "Chicago", "2022-03-20")
        + route_entries("Chicago", "Rockford", "2022-03-22"),
        "annotated_plan": [{"org": "Rockford", "dest": "Chicago", "days": 3}],
    }  # fmt: skip
    hard = {
        "org": "St. Petersburg", "dest": "Illinois", "days": 5, "visiting_city_number": 2,
        "date": ["2022-03-20", "2022-03-21", "2022-03-22", "2022-03-23", "2022-03-24"],
        "people_number": 3,
        "local_constraint": {"house rule": None, "cuisine": ["Chinese"],
                             "room type": "entire room", "transportation": "no self-driving"},
        "budget": 5200.0,
        "query": "A 5-day trip for 3 from St. Petersburg through 2 cities of Illinois, March "
                 "20-24, 2022, $5,200; Chinese food, an entire room, no self-driving.",
        "level": "hard",
        "reference_information": city_entries("Chicago") + city_entries("Rockford")
        + route_entries("St. Petersburg", "Chicago", "2022-03-20")
        + route_entries("Chicago", "Rockford", "2022-03-22")
        + route_entries("Rockford", "St. Petersburg", "2022-03-24"),
        "annotated_plan": [{"org": "St. Petersburg", "dest": "Illinois", "days": 5}],
    }  # fmt: skip
    return [easy, medium, hard]


LITERAL_FIELDS = ("date", "local_constraint", "reference_information", "annotated_plan")


def as_exported(row: dict, test: bool = False) -> dict:
    """A row as the ``datasets`` CSV/Parquet export holds it: literal fields as Python-literal
    text (the test split without annotated plans)."""
    out = {k: (repr(v) if k in LITERAL_FIELDS else v) for k, v in row.items()}
    if test:
        out.pop("annotated_plan")
    return out


def write_csv(path: Path, rows: list[dict]) -> Path:
    """Rows as a CSV file with a header."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_dataset(root: Path) -> Path:
    """validation.csv, test.jsonl (no annotated plans) and, when pyarrow is there,
    train.parquet, each holding the three queries."""
    root.mkdir(parents=True, exist_ok=True)
    rows = query_rows()
    write_csv(root / "validation.csv", [as_exported(r) for r in rows])
    with (root / "test.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows:
            native = {k: v for k, v in row.items() if k != "annotated_plan"}
            # the JSON export keeps lists and dicts; reference information as literal text
            native["reference_information"] = repr(native["reference_information"])
            handle.write(json.dumps(native) + "\n")
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return root
    exported = [as_exported(r) for r in rows]
    pq.write_table(pa.Table.from_pylist(exported), root / "train.parquet")
    return root


def write_database(root: Path) -> Path:
    """TravelPlanner's database layout holding the records above (plus an index column and a
    row with an empty cell, which readers drop)."""
    for relative in ("flights", "accommodations", "restaurants", "attractions",
                     "googleDistanceMatrix", "background"):  # fmt: skip
        (root / relative).mkdir(parents=True, exist_ok=True)
    flights = [dict(zip(["Unnamed: 0", *FLIGHT_COLS], [i, *r], strict=True))
               for i, r in enumerate(FLIGHTS)]  # fmt: skip
    flights.append({"Unnamed: 0": 9, **dict(zip(FLIGHT_COLS, ["F9", 1, "", "", "", "2022-03-16",
                                                             "Rockford", "Chicago", 1],
                                                 strict=True))})  # fmt: skip
    write_csv(root / "flights/clean_Flights_2022.csv", flights)
    write_csv(root / "accommodations/clean_accommodations_2022.csv",
              [dict(zip(ACC_COLS, r, strict=True)) for r in ACCOMMODATIONS])  # fmt: skip
    write_csv(root / "restaurants/clean_restaurant_2022.csv",
              [dict(zip(REST_COLS, r, strict=True)) for r in RESTAURANTS])  # fmt: skip
    write_csv(root / "attractions/attractions.csv",
              [dict(zip(ATTR_COLS, r, strict=True)) for r in ATTRACTIONS])  # fmt: skip
    write_csv(root / "googleDistanceMatrix/distance.csv",
              [dict(zip(["origin", "destination", "cost", "duration", "distance"],
                        [o, d, "", dur, dist], strict=True))
               for o, d, dur, dist in DISTANCES])  # fmt: skip
    (root / "background/citySet_with_states.txt").write_text(
        "".join(f"{c}\t{s}\n" for c, s in CITIES.items()), encoding="utf-8"
    )
    return root


@pytest.fixture
def tp_dataset_dir(tmp_path) -> Path:
    """A dataset directory: validation.csv, test.jsonl and (with pyarrow) train.parquet."""
    return write_dataset(tmp_path / "dataset")


@pytest.fixture
def tp_database_dir(tmp_path) -> Path:
    """A database directory in TravelPlanner's layout with the same records."""
    return write_database(tmp_path / "database")


@pytest.fixture
def tp_suite_data(tmp_path, monkeypatch) -> tuple[Path, Path]:
    """``(dataset, database)`` directories of the richer data of :mod:`.suite_data`."""
    from tests.suites.travelplanner.suite_data import write_suite_data

    return write_suite_data(tmp_path / "suite", monkeypatch)
