"""The sandbox of one query's reference information: sole-planning without the database.

Each reference entry is ``{"Description": ..., "Content": ...}``. Descriptions name what the
content holds: ``"Flight from A to B on 2022-03-16"``, ``"Self-driving from A to B"``, ``"Taxi
from A to B"``, ``"Accommodations in C"``, ``"Restaurants in C"``, ``"Attractions in C"`` (and
``"Cities in S"``). Table contents are ``DataFrame.to_string`` text (:mod:`.frames`) or
TravelPlanner's "There is no ..." sentence; a drive is ``"self-driving, from A to B, duration:
1 hour 5 mins, distance: 90 km, cost: 4"`` or ``"..., no valid information."``. Entries, and
table rows, that cannot be read are skipped and counted in :attr:`ReferenceSandbox.skipped`.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Mapping

from travelgym.suites.travelplanner.database import (
    ACCOMMODATION_COLUMNS,
    ATTRACTION_COLUMNS,
    FLIGHT_COLUMNS,
    RESTAURANT_COLUMNS,
    parse_km,
)
from travelgym.suites.travelplanner.frames import parse_table
from travelgym.suites.travelplanner.records import Query
from travelgym.suites.travelplanner.sandbox import (
    Accommodation,
    Attraction,
    Drive,
    Flight,
    MemorySandbox,
    Restaurant,
)

_FLIGHT_DESC = re.compile(r"flights? from (.+) to (.+) on (\d{4}-\d{2}-\d{2})", re.I)
_DRIVE_DESC = re.compile(r"(self-driving|taxi) from (.+) to (.+)", re.I)
_CITY_DESC = re.compile(r"(accommodations|restaurants|attractions) in (.+)", re.I)
_STATE_DESC = re.compile(r"cities in (.+)", re.I)
_DRIVE = re.compile(r"(?:self-driving|driving|taxi)\s*,\s*from (.+?) to (.+?),\s*duration:\s*"
                    r"(.+?),\s*distance:\s*(.+?),\s*cost:\s*\$?([\d.,]+)\.?", re.I)  # fmt: skip


class RowError(ValueError):
    """A table row with a cell that is not what its column needs."""


def _num(value: str) -> float:
    try:
        number = float(value.replace(",", "").lstrip("$"))
    except ValueError:
        raise RowError(value) from None
    if number != number:  # NaN: TravelPlanner's tools drop such rows
        raise RowError(value)
    return number


def _optional(value: str) -> float | None:
    return None if value in ("", "NaN") else _num(value)


def _flight(r: dict[str, str]) -> Flight:
    return Flight(r["Flight Number"], _num(r["Price"]), r["DepTime"], r["ArrTime"],
                  r["ActualElapsedTime"], r["FlightDate"], r["OriginCityName"],
                  r["DestCityName"], _num(r["Distance"]))  # fmt: skip


def _accommodation(r: dict[str, str]) -> Accommodation:
    return Accommodation(r["NAME"], _num(r["price"]), r["room type"], r["house_rules"],
                         int(_num(r["minimum nights"])), int(_num(r["maximum occupancy"])),
                         _num(r["review rate number"]), r["city"])  # fmt: skip


def _restaurant(r: dict[str, str]) -> Restaurant:
    return Restaurant(r["Name"], _num(r["Average Cost"]), r["Cuisines"],
                      _num(r["Aggregate Rating"]), r["City"])  # fmt: skip


def _attraction(r: dict[str, str]) -> Attraction:
    return Attraction(r["Name"], _optional(r["Latitude"]), _optional(r["Longitude"]),
                      r["Address"], r["Phone"], r["Website"], r["City"])  # fmt: skip


_KINDS: dict[str, tuple[tuple[str, ...], Callable[[dict[str, str]], object]]] = {
    "flight": (FLIGHT_COLUMNS, _flight),
    "accommodations": (ACCOMMODATION_COLUMNS, _accommodation),
    "restaurants": (RESTAURANT_COLUMNS, _restaurant),
    "attractions": (ATTRACTION_COLUMNS, _attraction),
}


class ReferenceSandbox(MemorySandbox):
    """:class:`Sandbox` of the records in ``query``'s reference information. ``states``
    (city -> state) supplies the city set, which the reference information lacks."""

    def __init__(self, query: Query, states: Mapping[str, str] | None = None) -> None:
        super().__init__(states=dict(states or {}))
        self.skipped = 0  # entries or table rows that could not be read
        for unit in query.reference_information or []:
            # a notebook entry says what was searched in "Search" (tools.search)
            described = unit.get("Search") or unit.get("Description", "")
            self.add_entry(described, unit.get("Content", ""))

    def add_entry(self, description: str, content: str) -> None:
        """Add the records of one reference entry (unreadable parts counted as skipped)."""
        # the content keeps its leading spaces: a table's header is aligned by them
        description = description.strip()
        content = content.rstrip().lstrip("\n")
        if match := _FLIGHT_DESC.fullmatch(description):
            self._table("flight", content)
        elif match := _DRIVE_DESC.fullmatch(description):
            mode = "taxi" if match.group(1).lower() == "taxi" else "self-driving"
            self._drive(mode, match.group(2).strip(), match.group(3).strip(), content)
        elif match := _CITY_DESC.fullmatch(description):
            self._table(match.group(1).lower(), content)
        elif match := _STATE_DESC.fullmatch(description):
            self._cities(match.group(1).strip(), content)
        else:
            self.skipped += 1

    def _table(self, kind: str, content: str) -> None:
        columns, convert = _KINDS[kind]
        rows = _json_rows(content.strip())
        if rows is None:
            table = parse_table(content, columns)
            if table is None:
                # "There is no flight from A to B on D." is an answer with no rows
                self.skipped += 0 if content.strip().lower().startswith("there is no") else 1
                return
            rows, self.skipped = table.rows, self.skipped + table.skipped
        for row in rows:
            try:
                self.extend([convert({c: str(row.get(c, "")).strip() for c in columns})])
            except (RowError, KeyError):
                self.skipped += 1

    def _drive(self, mode, origin: str, destination: str, content: str) -> None:
        content = content.strip()
        match = _DRIVE.match(content)
        if match is None:
            if "no valid information" in content.lower():
                self.drives.append(Drive(origin, destination, mode, None, None, None))
            else:
                self.skipped += 1
            return
        km = parse_km(match.group(4))
        try:
            cost = _num(match.group(5).rstrip("."))
        except RowError:
            cost = None
        if km is None or cost is None:
            self.skipped += 1
            return
        self.drives.append(Drive(match.group(1).strip(), match.group(2).strip(), mode,
                                 match.group(3).strip(), km, cost))  # fmt: skip

    def _cities(self, state: str, content: str) -> None:
        try:
            cities = ast.literal_eval(content.strip())
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            cities = [c.strip() for c in content.split("\n") if c.strip()]
        if not isinstance(cities, (list, tuple)) or not all(isinstance(c, str) for c in cities):
            self.skipped += 1
            return
        self.states.update({c: state for c in cities})


def _json_rows(content: str) -> list[dict] | None:
    """Rows given as a JSON list of objects (a re-export of the rows), else ``None``."""
    if not content.startswith("["):
        return None
    try:
        rows = json.loads(content)
    except (ValueError, RecursionError):
        return None
    return rows if isinstance(rows, list) and all(isinstance(r, dict) for r in rows) else None
