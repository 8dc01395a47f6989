"""Intercity legs of a plan matched against the flight, train and bus timetables."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from travelgym.suites.behavior2trip.checks.data import PlanDB
from travelgym.suites.behavior2trip.context import normalize
from travelgym.suites.behavior2trip.plan import IntercityLeg, clock_minutes
from travelgym.suites.behavior2trip.plan_values import intercity_mode
from travelgym.suites.behavior2trip.vocab import REGULAR_SEAT_TYPES, TRAIN_SEAT_TYPES

DAY = 24 * 60
TIME_TOLERANCE = 5  # minutes a plan's departure or arrival time may differ from the timetable


def _first(*values: int | None) -> int | None:
    return next((v for v in values if v is not None), None)


@dataclass
class Leg:
    """An intercity leg with the timetable rows it matches."""

    day: int
    date: str
    data: IntercityLeg
    mode: str | None  # flight, train, bus
    dep: str | None  # city ids
    arr: str | None
    rows: list[dict[str, Any]] = field(default_factory=list)
    row: dict[str, Any] | None = None  # the row of the chosen cabin / seat
    fare: float | None = None  # CNY per person from the database
    problem: str | None = None

    @property
    def label(self) -> str:
        return f"day {self.day} {self.data.mode or 'transport'} {self.data.number or '(no number)'}"

    @property
    def times(self) -> tuple[int | None, int | None]:
        """Departure and arrival minutes (plan times, else the timetable's)."""
        r = self.row or {}
        dep = _first(clock_minutes(self.data.departure_time), clock_minutes(r.get("dep_time")))
        arr = _first(clock_minutes(self.data.arrival_time), clock_minutes(r.get("arr_time")))
        offset = self.data.arrival_day_offset or r.get("arr_day_offset") or 0
        if (
            self.mode == "flight"
            and r
            and r.get("arr_date", r.get("dep_date")) != r.get("dep_date")
        ):
            offset = max(offset, 1)
        if dep is not None and arr is not None:
            arr += DAY * offset
            if arr < dep:
                arr += DAY
        return dep, arr

    @property
    def vocab_mode(self) -> str | None:
        """The Table 9 intercity mode: Airplane, High-speed Rail, Regular Train, Long-distance Bus."""
        if self.mode == "flight":
            return "Airplane"
        if self.mode == "bus":
            return "Long-distance Bus"
        if self.mode == "train":
            if self.rows:
                return self.rows[0]["train_type"]
            number = (self.data.number or "").strip().upper()
            return "High-speed Rail" if number[:1] in ("G", "D", "C") else "Regular Train"
        return None


def seat_class(text: str | None, mode: str | None) -> str | None:
    """The vocabulary seat class a plan's text names for ``mode`` (the text itself when it
    names none of that mode's classes; ``None`` when empty)."""
    key = normalize(text or "")
    if not key:
        return None
    if mode == "flight":
        if "business" in key:
            return "Business Class"
        if "economy" in key or key == "y":
            return "Economy Class"
    elif mode == "train":
        # hard seats and hard sleepers are a regular train's standard class, soft sleepers
        # (and soft seats) its premium one (vocab.TRAIN_SEAT_TYPES)
        if "second" in key or "2nd" in key or "hard" in key:
            return "Second Class Seat"
        if "first" in key or "1st" in key or "soft" in key:
            return "First Class Seat"
    return text


def train_seat(row: dict[str, Any], data: IntercityLeg) -> dict[str, Any] | None:
    """The seat of a train row a plan's leg names: the seat type it names (``Hard Sleeper``),
    else one of the seats of the seat class it names, the one whose fare is nearest the leg's
    price (the cheapest without a price); ``None`` when the train sells no such seat."""
    key = normalize(data.seat_class or "")
    seats = json.loads(row["seats"])
    named = [s for s in seats if normalize(s["seat_type"]) == key]
    if named or any(normalize(t) == key for t in REGULAR_SEAT_TYPES):
        return named[0] if named else None
    label = seat_class(data.seat_class, "train")
    same = [s for s in seats if s["seat_class"] == label]
    price = data.price
    return min(same, key=lambda s: (abs(s["fare"] - price) if price is not None else 0, s["fare"]),
               default=None)  # fmt: skip


def resolve_leg(db: PlanDB, day: int, date: str, data: IntercityLeg) -> Leg:
    """Match one leg: service number, route (and date for flights), seat class and times."""
    number = (data.number or "").strip().upper()
    mode = data.mode or intercity_mode(None, number)
    dep, arr = (next(iter(db.cities_in(c)), None) for c in (data.from_city, data.to_city))
    leg = Leg(day, date, data, mode, dep, arr)
    if not number or mode is None:
        leg.problem = f"{leg.label}: {'no service number' if not number else 'unknown mode'}"
        return leg
    rows = {"flight": lambda: db.flights(number, date, dep, arr), "train": lambda: db.trains(number),
            "bus": lambda: db.buses(number)}[mode]()  # fmt: skip
    rows = [r for r in rows if dep in (None, r["dep_city_id"]) and arr in (None, r["arr_city_id"])]
    if not rows:
        route = f"{data.from_city or '?'} -> {data.to_city or '?'}"
        when = f" on {date}" if mode == "flight" else ""
        leg.problem = f"{leg.label}: no {mode} {number} {route}{when} in the timetable"
        return leg
    leg.rows, leg.dep, leg.arr = rows, rows[0]["dep_city_id"], rows[0]["arr_city_id"]
    seat = seat_class(data.seat_class, mode)
    problems = []
    if mode == "flight":
        cabin = seat or "Economy Class"
        leg.row = next((r for r in rows if r["cabin_class"] == cabin), None)
        if leg.row is None:
            problems.append(f"no {cabin} on {number}")
            leg.row = rows[0]
        leg.fare = leg.row["adult_total"]
    else:
        leg.row = rows[0]
        leg.fare = leg.row["fare"]
        if mode == "train" and seat is not None:
            chosen = train_seat(leg.row, data)
            if chosen is None:
                key = normalize(data.seat_class or "")
                named = next((t for t in TRAIN_SEAT_TYPES if normalize(t) == key), seat)
                problems.append(f"no {named} on {number}")
            else:
                leg.fare = chosen["fare"]
    for key, column in (("departure_time", "dep_time"), ("arrival_time", "arr_time")):
        given, real = clock_minutes(getattr(data, key)), clock_minutes(leg.row[column])
        if given is not None and real is not None and abs(given - real) > TIME_TOLERANCE:
            problems.append(
                f"{key.replace('_', ' ')} {getattr(data, key)} (timetable: {leg.row[column]})"
            )
    if problems:
        leg.problem = f"{leg.label}: " + ", ".join(problems)
    return leg
