"""Read TravelPlanner's database directory (the one its repository releases) into sandbox
records::

    DB/flights/clean_Flights_2022.csv                 Flight Number, Price, DepTime, ArrTime,
                                                      ActualElapsedTime, FlightDate,
                                                      OriginCityName, DestCityName, Distance
    DB/accommodations/clean_accommodations_2022.csv   NAME, price, room type, house_rules,
                                                      minimum nights, maximum occupancy,
                                                      review rate number, city
    DB/restaurants/clean_restaurant_2022.csv          Name, Average Cost, Cuisines,
                                                      Aggregate Rating, City
    DB/attractions/attractions.csv                    Name, Latitude, Longitude, Address, Phone,
                                                      Website, City
    DB/googleDistanceMatrix/distance.csv              origin, destination, cost, duration,
                                                      distance ("1,234 km")
    DB/background/citySet_with_states.txt             CITY<TAB>STATE per line

Columns are found by name (other columns are ignored). As TravelPlanner's tools drop rows with a
missing value, rows with an empty cell in a column we read are skipped and counted; a cell that
is present but not a number where one is needed raises :class:`DatabaseError` naming the file,
the row and the column.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from travelgym import progress
from travelgym.core.errors import UserError
from travelgym.suites.travelplanner.sandbox import (
    Accommodation,
    Attraction,
    Distance,
    Flight,
    Restaurant,
)

FILES = {
    "flights": "flights/clean_Flights_2022.csv",
    "accommodations": "accommodations/clean_accommodations_2022.csv",
    "restaurants": "restaurants/clean_restaurant_2022.csv",
    "attractions": "attractions/attractions.csv",
    "distances": "googleDistanceMatrix/distance.csv",
    "cities": "background/citySet_with_states.txt",
}
FLIGHT_COLUMNS = ("Flight Number", "Price", "DepTime", "ArrTime", "ActualElapsedTime",
                  "FlightDate", "OriginCityName", "DestCityName", "Distance")  # fmt: skip
ACCOMMODATION_COLUMNS = ("NAME", "price", "room type", "house_rules", "minimum nights",
                         "maximum occupancy", "review rate number", "city")  # fmt: skip
RESTAURANT_COLUMNS = ("Name", "Average Cost", "Cuisines", "Aggregate Rating", "City")
ATTRACTION_COLUMNS = ("Name", "Latitude", "Longitude", "Address", "Phone", "Website", "City")
DISTANCE_COLUMNS = ("origin", "destination", "duration", "distance")


class DatabaseError(UserError, ValueError):
    """A database file that cannot be read as TravelPlanner's (one line: file, row, column)."""


@dataclass
class DatabaseRecords:
    """Everything read from a database directory, and the rows skipped per file."""

    flights: list[Flight] = field(default_factory=list)
    accommodations: list[Accommodation] = field(default_factory=list)
    restaurants: list[Restaurant] = field(default_factory=list)
    attractions: list[Attraction] = field(default_factory=list)
    distances: list[Distance] = field(default_factory=list)
    states: dict[str, str] = field(default_factory=dict)  # city -> state
    skipped: dict[str, int] = field(default_factory=dict)


def read_database(path: str | os.PathLike[str]) -> DatabaseRecords:
    """Read the database directory at ``path`` (every file of :data:`FILES` is required)."""
    root = Path(path).expanduser()
    if not root.is_dir():
        raise DatabaseError(f"{root}: database directory not found")
    for relative in FILES.values():
        if not (root / relative).is_file():
            raise DatabaseError(f"{root / relative}: missing database file (expected "
                                f"TravelPlanner's database layout, see docs/travelplanner/"
                                f"data.md)")  # fmt: skip
    out = DatabaseRecords()
    size = sum(_kib(root / FILES[kind]) for kind in TABLE_FILES)
    with progress.step("travelplanner: reading the database", total=size,
                       unit="KiB") as bar:  # fmt: skip
        read = _Reader(root, bar, out.skipped)
        out.flights = read.table("flights", FLIGHT_COLUMNS, _flight)
        out.accommodations = read.table("accommodations", ACCOMMODATION_COLUMNS, _accommodation)
        out.restaurants = read.table("restaurants", RESTAURANT_COLUMNS, _restaurant)
        # dropped like the other tables' rows with an empty cell: the script's attraction
        # search reads the file with dropna(), so such an attraction is outside its sandbox
        out.attractions = read.table("attractions", ATTRACTION_COLUMNS, _attraction)
        out.distances = read.table("distances", DISTANCE_COLUMNS, _distance,
                                   optional=("duration", "distance"))  # fmt: skip
    out.states = read_cities(root / FILES["cities"])
    return out


KIB = 1024
TABLE_FILES = ("flights", "accommodations", "restaurants", "attractions", "distances")


class _Reader:
    """The CSV tables of a database directory, read with their progress counted in KiB on
    ``bar`` (the flights file of the real database is about 300 MB)."""

    def __init__(self, root: Path, bar: progress.Step, skipped: dict[str, int]) -> None:
        self.root, self.bar, self.skipped = root, bar, skipped

    def table(self, kind: str, columns: tuple[str, ...], convert: Callable[[Cells], object],
              optional: tuple[str, ...] = ()) -> list:  # fmt: skip
        """The rows of table ``kind`` converted; rows with an empty required cell are dropped
        (counted in ``skipped``)."""
        path = self.root / FILES[kind]
        out, dropped, self.counted = [], 0, 0
        for cells in _rows(path, columns, self._counted):
            if any(not cells.text(c) for c in columns if c not in optional):
                dropped += 1
                continue
            out.append(convert(cells))
        self.skipped[kind] = dropped
        self.bar.advance(max(_kib(path) - self.counted, 0))  # the file's rest: read
        return out

    def _counted(self, lines: Iterator[str]) -> Iterator[str]:
        """``lines``, their characters (at most their bytes) counted on the bar every KiB."""
        pending = 0
        for line in lines:
            yield line
            pending += len(line)
            if pending >= KIB:
                self.bar.advance(pending // KIB)
                self.counted += pending // KIB
                pending %= KIB


def _kib(path: Path) -> int:
    """The size of ``path`` in KiB, rounded up."""
    return -(-path.stat().st_size // KIB)


MAX_NUMBER = 1e12  # larger than any price, rating, count or coordinate of the database


class Cells:
    """One CSV row's cells, with converters that name the file, row and column on error."""

    def __init__(self, path: Path, number: int, row: dict[str, str]) -> None:
        self.path, self.row_number, self.row = path, number, row

    def text(self, column: str) -> str:
        """The cell, stripped."""
        return (self.row.get(column) or "").strip()

    def number(self, column: str) -> float:
        """The cell as a number (``"1,030"`` and ``"$30"`` read as 1030 and 30)."""
        text = self.text(column).replace(",", "").lstrip("$")
        where = f"{self.path}: row {self.row_number}: column {column!r}"
        shown = self.text(column)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        try:
            value = float(text)
        except ValueError:
            raise DatabaseError(f"{where}: expected a number, got {shown!r}") from None
        if not abs(value) <= MAX_NUMBER:  # also refuses NaN and the infinities
            raise DatabaseError(f"{where}: expected a finite number of at most {MAX_NUMBER:g}, "
                                f"got {shown!r}")  # fmt: skip
        return value

    def optional_number(self, column: str) -> float | None:
        """The cell as a number, ``None`` when empty."""
        return self.number(column) if self.text(column) else None


def _rows(path: Path, columns: tuple[str, ...],
          lines: Callable[[Iterator[str]], Iterator[str]] = iter) -> Iterator[Cells]:  # fmt: skip
    csv.field_size_limit(2**31 - 1)
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(lines(handle))
            present = list(reader.fieldnames or [])
            missing = [c for c in columns if c not in present]
            if missing:
                raise DatabaseError(f"{path}: missing column {missing[0]!r} (columns present: "
                                    f"{', '.join(present) or 'none'})")  # fmt: skip
            for number, row in enumerate(reader, 1):
                yield Cells(path, number, row)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise DatabaseError(f"{path}: not a readable CSV file ({exc})") from None


def _flight(c: Cells) -> Flight:
    return Flight(c.text("Flight Number"), c.number("Price"), c.text("DepTime"),
                  c.text("ArrTime"), c.text("ActualElapsedTime"), c.text("FlightDate"),
                  c.text("OriginCityName"), c.text("DestCityName"),
                  c.number("Distance"))  # fmt: skip


def _accommodation(c: Cells) -> Accommodation:
    return Accommodation(c.text("NAME"), c.number("price"), c.text("room type"),
                         c.text("house_rules"), int(c.number("minimum nights")),
                         int(c.number("maximum occupancy")), c.number("review rate number"),
                         c.text("city"))  # fmt: skip


def _restaurant(c: Cells) -> Restaurant:
    return Restaurant(c.text("Name"), c.number("Average Cost"), c.text("Cuisines"),
                      c.number("Aggregate Rating"), c.text("City"))  # fmt: skip


def _attraction(c: Cells) -> Attraction:
    return Attraction(c.text("Name"), c.optional_number("Latitude"),
                      c.optional_number("Longitude"), c.text("Address"), c.text("Phone"),
                      c.text("Website"), c.text("City"))  # fmt: skip


def _distance(c: Cells) -> Distance:
    return Distance(c.text("origin"), c.text("destination"), c.text("duration") or None,
                    parse_km(c.text("distance"), c))  # fmt: skip


def parse_km(text: str, cells: Cells | None = None) -> float | None:
    """``"1,234 km"`` as 1234.0 (``None`` when empty); ``"800 m"`` as 0.8."""
    text = text.strip()
    if not text or text.lower() in ("nan", "none"):
        return None
    match = re.fullmatch(r"([\d,]+(?:\.\d+)?)\s*(km|m)?", text)
    if match is None:
        if cells is None:
            return None
        raise DatabaseError(f"{cells.path}: row {cells.row_number}: column 'distance': expected "
                            f"a distance such as '1,234 km', got {text!r}")  # fmt: skip
    value = float(match.group(1).replace(",", ""))
    if value > MAX_NUMBER:  # also the infinity that thousands of digits read as
        if cells is None:
            return None
        raise DatabaseError(f"{cells.path}: row {cells.row_number}: column 'distance': "
                            f"{text[:40]!r}... is out of range")  # fmt: skip
    return value / 1000 if match.group(2) == "m" else value


def read_cities(path: Path) -> dict[str, str]:
    """The city set: ``{city: state}`` from ``CITY<TAB>STATE`` lines."""
    states: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise DatabaseError(f"{path}: line {number}: expected CITY<TAB>STATE, got "
                                f"{line[:60]!r}")  # fmt: skip
        states[parts[0].strip()] = parts[1].strip()
    return states
