"""The hand-made TravelPlanner of ``conftest`` with enough records for a full plan: a third and
fourth restaurant in Rockford and Chicago (one serving Chinese food) and the drive from Chicago
to Rockford. With it the scripted baseline's plans are hand-checked:

- easy (St. Petersburg -> Rockford, 3 days, 1 person, $1,700): flights both ways ($820), two
  nights in the private room ($420), three meals: passes every constraint;
- medium (Rockford -> Chicago, 3 days, 2 people, pets, $1,500): self-driving both ways (cheaper
  than taxis), the shared room (the loft forbids pets; 2 rooms x 2 nights): passes everything;
- hard (St. Petersburg -> 2 cities of Illinois, 5 days, 3 people, entire room, Chinese, no
  self-driving, $5,200): the only order with transport on every leg is Chicago then Rockford
  (flight $630, taxis $145 and $2,101), the entire homes cost $640 and $2,060: every
  commonsense and hard constraint passes except the budget (with meals, $5,942).
"""

from __future__ import annotations

from pathlib import Path

from tests.suites.travelplanner import conftest

EXTRA_RESTAURANTS = [
    ["Lucky Wok", 15, "Chinese, Seafood", 4.0, "Rockford"],
    ["Maple Diner", 12, "American, Cafe", 3.8, "Rockford"],
    ["Deep Dish House", 22, "Pizza, American", 4.4, "Chicago"],
    ["Lakeview Bistro", 30, "French, Cafe", 4.6, "Chicago"],
]  # fmt: skip
EXTRA_DISTANCES = [["Chicago", "Rockford", "1 hour 35 mins", "145 km"]]
# (commonsense failures, hard failures) of the baseline's plan per task
EXPECTED = {
    "validation-1": ([], []),
    "validation-2": ([], []),
    "validation-3": ([], ["budget"]),
}


def write_suite_data(root: Path, monkeypatch) -> tuple[Path, Path]:
    """``(dataset directory, database directory)`` of the richer data under ``root``."""
    monkeypatch.setattr(conftest, "RESTAURANTS", conftest.RESTAURANTS + EXTRA_RESTAURANTS)
    monkeypatch.setattr(conftest, "DISTANCES", conftest.DISTANCES + EXTRA_DISTANCES)
    return conftest.write_dataset(root / "dataset"), conftest.write_database(root / "database")
