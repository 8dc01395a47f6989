"""Train seats and fares: which seats a train sells and what each of them costs.

High-speed trains (G, D) sell Second and First Class Seats; regular trains (Z, T, K) Hard Seats,
Hard Sleepers and Soft Sleepers (``vocab.TRAIN_SEAT_TYPES`` maps them onto Table 9's seat
classes). A fare is the per-km rate of the train type times the seat's multiple times the rail
distance, plus fixed parts, times the train's own factor, rounded to half a yuan as real tickets
are. The factor is wide on high-speed trains (their fares are set per train, dearer at popular
hours) and narrow on regular ones (the trains of a city pair run over lines of slightly different
length). A fare another train of the same route already has on that seat moves up by half a yuan,
so no two trains of a route sell a seat at the same fare.
"""

from __future__ import annotations

import json

import numpy as np

from travelgym.suites.behavior2trip.vocab import TRAIN_SEAT_TYPES

# CNY per rail km of the train's cheapest seat (Second Class Seat, Hard Seat): faster is dearer.
# A rail km is 1.25 great-circle km: a G second class seat costs about 0.50 CNY per great-circle
# km (0.44-0.56 with the train factor), a regular hard seat 0.16-0.19.
BASE_RATE = {"G": 0.40, "D": 0.28, "Z": 0.15, "T": 0.14, "K": 0.13}
FIXED = {"G": 5.0, "D": 5.0, "Z": 2.0, "T": 2.0, "K": 2.0}  # booking fee
# seat -> (multiple of the base rate, fixed extra CNY for a berth and bedding)
SEAT_PRICE = {"Second Class Seat": (1.0, 0.0), "First Class Seat": (1.6, 0.0),
              "Hard Seat": (1.0, 0.0), "Hard Sleeper": (1.6, 10.0),
              "Soft Sleeper": (2.5, 15.0)}  # fmt: skip
TRAIN_FACTOR = {"G": (0.88, 1.12), "D": (0.9, 1.1), "Z": (0.96, 1.04), "T": (0.96, 1.04),
                "K": (0.96, 1.04)}  # fmt: skip
SHORT_MINUTES = 150  # regular trains shorter than this often sell no sleepers


def seats_sold(r: np.random.Generator, letter: str, minutes: int, premium: bool) -> list[str]:
    """The seat types a train sells, cheapest first; ``premium`` says whether it sells the
    premium class (First Class Seat, Soft Sleeper). Every train sells a "Second Class Seat"
    of Table 9 (a second class seat, hard seat or hard sleeper)."""
    if letter in ("G", "D", "C"):
        return ["Second Class Seat"] + (["First Class Seat"] if premium else [])
    seats = ["Hard Seat"] if letter != "Z" or r.random() < 0.5 else []
    if letter == "Z" or minutes >= SHORT_MINUTES or r.random() < 0.4:
        seats.append("Hard Sleeper")
    return seats + (["Soft Sleeper"] if premium else [])


class RouteFares:
    """Fares of the trains of one route, each train its own factor, none repeated on a seat."""

    def __init__(self, r: np.random.Generator, rail_km: float) -> None:
        self.r, self.rail_km = r, rail_km
        self.taken: dict[str, set[float]] = {}

    def fares(self, letter: str, seats: list[str]) -> list[tuple[str, float]]:
        """(seat type, fare) for one train selling ``seats``."""
        factor = float(self.r.uniform(*TRAIN_FACTOR[letter]))
        out = []
        for seat in seats:
            multiple, extra = SEAT_PRICE[seat]
            raw = (BASE_RATE[letter] * multiple * self.rail_km + FIXED[letter] + extra) * factor
            fare = round(raw * 2) / 2
            taken = self.taken.setdefault(seat, set())
            while fare in taken:
                fare += 0.5
            taken.add(fare)
            out.append((seat, fare))
        return out


def seat_columns(fares: list[tuple[str, float]]) -> tuple[float, float | None, str, float]:
    """The trains-table columns of a train's fares: the cheapest fare of each Table 9 class
    (second, first or None), the ``seats`` JSON and the lowest fare."""
    by_class: dict[str, float] = {}
    for seat, fare in fares:
        label = TRAIN_SEAT_TYPES[seat]
        by_class[label] = min(fare, by_class.get(label, fare))
    seats = [{"seat_type": s, "seat_class": TRAIN_SEAT_TYPES[s], "fare": f}
             for s, f in sorted(fares, key=lambda x: x[1])]  # fmt: skip
    second = by_class["Second Class Seat"]
    return second, by_class.get("First Class Seat"), json.dumps(seats), min(by_class.values())
