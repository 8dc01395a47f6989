"""The TravelPlanner sandbox: the records a plan may name (flights, accommodations, restaurants,
attractions, the distance matrix, the city set) and the one interface the evaluation and the
tools read them through.

Two sandboxes implement :class:`Sandbox`: the ingested TravelPlanner database
(:mod:`travelgym.suites.travelplanner.sandbox_db`) and one query's reference information
(:mod:`travelgym.suites.travelplanner.sandbox_reference`, sole-planning mode without the
database). :class:`MemorySandbox` holds records in memory (tests, small hand-made data).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

DriveMode = Literal["self-driving", "taxi"]


@dataclass(frozen=True)
class Flight:
    """One row of the flights table (``clean_Flights_2022.csv``)."""

    flight_number: str
    price: float
    dep_time: str  # "HH:MM"
    arr_time: str
    actual_elapsed_time: str
    flight_date: str  # "YYYY-MM-DD"
    origin_city: str
    dest_city: str
    distance: float


@dataclass(frozen=True)
class Accommodation:
    """One row of the accommodations table (price per night for the whole room)."""

    name: str
    price: float
    room_type: str  # "Entire home/apt", "Private room", "Shared room"
    house_rules: str  # e.g. "No parties & No smoking"
    minimum_nights: int
    maximum_occupancy: int
    review_rate_number: float
    city: str


@dataclass(frozen=True)
class Restaurant:
    """One row of the restaurants table (average cost per person)."""

    name: str
    average_cost: float
    cuisines: str  # comma-separated, e.g. "Chinese, Bakery"
    aggregate_rating: float
    city: str


@dataclass(frozen=True)
class Attraction:
    """One row of the attractions table."""

    name: str
    latitude: float | None
    longitude: float | None
    address: str
    phone: str
    website: str
    city: str


@dataclass(frozen=True)
class Drive:
    """One entry of the distance matrix for a mode (``None`` fields: no such route)."""

    origin: str
    destination: str
    mode: DriveMode
    duration: str | None
    distance_km: float | None
    cost: float | None


@dataclass(frozen=True)
class Distance:
    """One row of the distance matrix; the cost of a mode follows from the distance."""

    origin: str
    destination: str
    duration: str | None
    distance_km: float | None


def drive_of(row: Distance, mode: DriveMode) -> Drive:
    """The distance-matrix entry for ``mode``, priced as TravelPlanner prices it (self-driving
    5 cents a km, taxi 1 dollar a km, both rounded down). A route without a duration or a
    distance, or taking days, has no valid information: its fields are ``None``."""
    if row.duration is None or row.distance_km is None or "day" in row.duration:
        return Drive(row.origin, row.destination, mode, None, None, None)
    rate = 0.05 if mode == "self-driving" else 1.0
    return Drive(row.origin, row.destination, mode, row.duration, row.distance_km,
                 float(int(row.distance_km * rate)))  # fmt: skip


class Sandbox(ABC):
    """What the evaluation and the tools may look up. City names are TravelPlanner's (e.g.
    ``"St. Petersburg"``); name lookups follow the evaluation script: a record matches when its
    name contains the given name and its city equals the given city."""

    @abstractmethod
    def flights(self, origin: str, destination: str, date: str | None = None) -> list[Flight]:
        """Flights from ``origin`` to ``destination`` (on ``date`` when given)."""

    @abstractmethod
    def accommodations(self, city: str) -> list[Accommodation]:
        """Accommodations in ``city``."""

    @abstractmethod
    def restaurants(self, city: str) -> list[Restaurant]:
        """Restaurants in ``city``."""

    @abstractmethod
    def attractions(self, city: str) -> list[Attraction]:
        """Attractions in ``city``."""

    @abstractmethod
    def drive(self, origin: str, destination: str, mode: DriveMode) -> Drive | None:
        """The distance-matrix entry for ``mode`` (``None``: the sandbox has none)."""

    @abstractmethod
    def city_state(self, city: str) -> str | None:
        """The state of a city of the city set (``None``: not in it)."""

    @abstractmethod
    def cities_of_state(self, state: str) -> list[str]:
        """The cities of ``state`` in the city set."""

    # lookups by name, as the evaluation script matches them
    def flight(self, number: str, origin: str, destination: str) -> Flight | None:
        """The flight ``number`` from ``origin`` to ``destination``, if any."""
        return next((f for f in self.flights(origin, destination) if f.flight_number == number),
                    None)  # fmt: skip

    def accommodation(self, name: str, city: str) -> Accommodation | None:
        """The first accommodation of ``city`` whose name contains ``name``."""
        return _named(self.accommodations(city), name)

    def restaurant(self, name: str, city: str) -> Restaurant | None:
        """The first restaurant of ``city`` whose name contains ``name``."""
        return _named(self.restaurants(city), name)

    def attraction(self, name: str, city: str) -> Attraction | None:
        """The first attraction of ``city`` whose name contains ``name``."""
        return _named(self.attractions(city), name)


def _named(rows, name: str):
    name = name.strip()
    if not name:
        return None
    exact = next((r for r in rows if r.name == name), None)
    return exact or next((r for r in rows if name in r.name), None)


@dataclass
class MemorySandbox(Sandbox):
    """A sandbox of records held in memory."""

    flight_rows: list[Flight] = field(default_factory=list)
    accommodation_rows: list[Accommodation] = field(default_factory=list)
    restaurant_rows: list[Restaurant] = field(default_factory=list)
    attraction_rows: list[Attraction] = field(default_factory=list)
    drives: list[Drive] = field(default_factory=list)
    states: dict[str, str] = field(default_factory=dict)  # city -> state

    def flights(self, origin, destination, date=None):
        return [f for f in self.flight_rows if f.origin_city == origin
                and f.dest_city == destination and (date is None or f.flight_date == date)]  # fmt: skip

    def accommodations(self, city):
        return [a for a in self.accommodation_rows if a.city == city]

    def restaurants(self, city):
        return [r for r in self.restaurant_rows if r.city == city]

    def attractions(self, city):
        return [a for a in self.attraction_rows if a.city == city]

    def drive(self, origin, destination, mode):
        return next((d for d in self.drives if (d.origin, d.destination, d.mode)
                     == (origin, destination, mode)), None)  # fmt: skip

    def city_state(self, city):
        return self.states.get(city)

    def cities_of_state(self, state):
        return sorted(c for c, s in self.states.items() if s == state)

    def extend(self, rows: Iterable[object]) -> None:
        """Add records of any of the kinds above."""
        kinds = {Flight: self.flight_rows, Accommodation: self.accommodation_rows,
                 Restaurant: self.restaurant_rows, Attraction: self.attraction_rows,
                 Drive: self.drives}  # fmt: skip
        for row in rows:
            kinds[type(row)].append(row)
