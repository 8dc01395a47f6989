"""The scripted baseline's planning stage: a plan for a query from the records of a
:class:`~travelgym.suites.travelplanner.sandbox.Sandbox` (the reference information, or a
notebook the tools filled), with no model.

It lays the trip out as TravelPlanner's annotated plans do (travel on day 1, between cities and
on the last day; the days between spent in the cities), picks the visiting order whose every
leg has transport in one non-conflicting mode (flights and taxis, or self-driving only), the
cheapest stay per city that keeps the house rule, room type and minimum nights, restaurants
serving the asked cuisines first and otherwise the cheapest, and one attraction a day.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from travelgym.suites.travelplanner.records import DayPlan, Query
from travelgym.suites.travelplanner.sandbox import Accommodation, Sandbox

RULES = {"parties": "No parties", "smoking": "No smoking", "pets": "No pets",
         "children under 10": "No children under 10", "visitors": "No visitors"}  # fmt: skip
ROOM_TYPES = {"entire room": "Entire home/apt", "private room": "Private room",
              "shared room": "Shared room"}  # fmt: skip
MAX_ORDERS = 720


@dataclass(frozen=True)
class Leg:
    """One travel day: from ``origin`` to ``destination`` on ``date`` (day ``day``, 0-based)."""

    day: int
    origin: str
    destination: str
    date: str


def layout(query: Query, cities: list[str]) -> list[str | Leg]:
    """Each day as a :class:`Leg` or the city it is spent in: a leg on day 1, between cities and
    on the last day, the other days shared out among the cities (earlier cities first)."""
    n, total = len(cities), query.days
    spare = max(0, total - n - 1)
    stays = [spare // n + (1 if i < spare % n else 0) for i in range(n)] if n else []
    days: list[str | Leg] = []
    stops = [query.org, *cities, query.org]
    for i in range(n + 1):
        days.append(Leg(len(days), stops[i], stops[i + 1], ""))
        if i < n:
            days += [cities[i]] * stays[i]
    days = days[:total]
    return [Leg(k, d.origin, d.destination, query.date[min(k, len(query.date) - 1)])
            if isinstance(d, Leg) else d for k, d in enumerate(days)]  # fmt: skip


def transport(query: Query, sandbox: Sandbox, leg: Leg, mode: str) -> tuple[str, float] | None:
    """``(text, cost)`` of the cheapest way to travel ``leg`` in ``mode`` (``"fly-or-taxi"``
    or ``"self-driving"``) that the query allows, or None."""
    banned = query.local_constraint.transportation
    people = query.people_number
    options: list[tuple[float, str]] = []
    if mode == "fly-or-taxi":
        if banned != "no flight":
            for f in sandbox.flights(leg.origin, leg.destination, leg.date):
                options.append((f.price * people, f"Flight Number: {f.flight_number}, from "
                                f"{leg.origin} to {leg.destination}, Departure Time: "
                                f"{f.dep_time}, Arrival Time: {f.arr_time}"))  # fmt: skip
        kinds = [("taxi", "Taxi", 4)]
    else:
        kinds = [] if banned == "no self-driving" else [("self-driving", "Self-driving", 5)]
    for key, label, seats in kinds:
        drive = sandbox.drive(leg.origin, leg.destination, key)
        if drive is not None and drive.cost is not None and drive.distance_km is not None:
            km = f"{drive.distance_km:g}"
            options.append((drive.cost * math.ceil(people / seats),
                            f"{label}, from {leg.origin} to {leg.destination}, duration: "
                            f"{drive.duration}, distance: {km} km, cost: {int(drive.cost)}"))  # fmt: skip
    if not options:
        return None
    cost, text = min(options, key=lambda o: o[0])
    return text, cost


def route(query: Query, sandbox: Sandbox, candidates: list[str]) -> tuple[list[str], dict]:
    """``(cities in visiting order, {leg day: transport text})``: the first order (and mode)
    whose legs all have transport, the cheaper mode first; else the first order, legs without
    transport left out."""
    n = query.visiting_city_number
    pool = [query.dest] if n == 1 else [c for c in candidates if c != query.org]
    orders = list(itertools.islice(itertools.permutations(pool, n), MAX_ORDERS)) or [tuple(pool)]
    best: tuple[float, list[str], dict] | None = None
    fallback: tuple[int, list[str], dict] | None = None
    for order in orders:
        for mode in ("fly-or-taxi", "self-driving"):
            legs = [d for d in layout(query, list(order)) if isinstance(d, Leg)]
            found = {leg.day: transport(query, sandbox, leg, mode) for leg in legs}
            texts = {day: t[0] for day, t in found.items() if t is not None}
            if len(texts) == len(legs):
                cost = sum(t[1] for t in found.values() if t is not None)
                if best is None or cost < best[0]:
                    best = (cost, list(order), texts)
            elif fallback is None or len(texts) > fallback[0]:
                fallback = (len(texts), list(order), texts)
        if best is not None:
            break
    if best is not None:
        return best[1], best[2]
    return (fallback[1], fallback[2]) if fallback else (list(pool[:n]), {})


def stay(query: Query, sandbox: Sandbox, city: str, nights: int) -> str:
    """The accommodation for ``nights`` in ``city``: the cheapest keeping the query's rules
    (then relaxing them), as ``"Name, City"``; ``"-"`` when the city has none."""
    local = query.local_constraint
    rooms = sandbox.accommodations(city)

    def cost(a: Accommodation) -> float:
        return a.price * math.ceil(query.people_number / max(1, a.maximum_occupancy)) * nights

    def keeps(a: Accommodation) -> bool:
        if local.house_rule and RULES.get(local.house_rule, "?") in a.house_rules:
            return False
        if local.room_type == "not shared room":
            return a.room_type != "Shared room"
        return not local.room_type or a.room_type == ROOM_TYPES.get(local.room_type)

    for tier in ([a for a in rooms if keeps(a) and a.minimum_nights <= nights],
                 [a for a in rooms if a.minimum_nights <= nights], rooms):  # fmt: skip
        if tier:
            return f"{min(tier, key=cost).name}, {city}"
    return "-"


class Picker:
    """Restaurants and attractions, each used once while the city has unused ones."""

    def __init__(self, query: Query, sandbox: Sandbox) -> None:
        self.query, self.sandbox = query, sandbox
        self.wanted = list(query.local_constraint.cuisine or [])
        self.used: set[str] = set()

    def meal(self, city: str) -> str:
        """The next restaurant of ``city``: one serving a cuisine still wanted, else the
        cheapest unused one (else the cheapest)."""
        rows = sorted(self.sandbox.restaurants(city), key=lambda r: r.average_cost)
        fresh = [r for r in rows if f"{r.name}, {city}" not in self.used]
        serving = [r for r in fresh if any(c in r.cuisines for c in self.wanted)]
        chosen = (serving or fresh or rows or [None])[0]
        if chosen is None:
            return "-"
        self.wanted = [c for c in self.wanted if c not in chosen.cuisines]
        text = f"{chosen.name}, {city}"
        self.used.add(text)
        return text

    def attraction(self, city: str) -> str:
        """The next attraction of ``city`` as ``"Name, City;"``."""
        rows = self.sandbox.attractions(city)
        fresh = [a for a in rows if f"{a.name}, {city}" not in self.used]
        chosen = (fresh or rows or [None])[0]
        if chosen is None:
            return "-"
        self.used.add(f"{chosen.name}, {city}")
        return f"{chosen.name}, {city};"


def build_plan(query: Query, sandbox: Sandbox, candidates: list[str]) -> list[DayPlan]:
    """The baseline's plan for ``query`` from ``sandbox``; ``candidates``: the cities a
    multi-city trip may visit, in the order to try them."""
    cities, legs = route(query, sandbox, candidates)
    days = layout(query, cities)
    nights: dict[str, int] = {}
    for k, d in enumerate(days):
        where = d.destination if isinstance(d, Leg) else d
        if k < len(days) - 1 and where != query.org:
            nights[where] = nights.get(where, 0) + 1
    stays = {city: stay(query, sandbox, city, count) for city, count in nights.items()}
    pick = Picker(query, sandbox)
    plan = []
    for k, d in enumerate(days):
        last = k == len(days) - 1
        if isinstance(d, Leg):
            city = f"from {d.origin} to {d.destination}"
            day = DayPlan(days=k + 1, current_city=city, transportation=legs.get(k, "-"),
                          accommodation="-" if last else stays.get(d.destination, "-"))  # fmt: skip
        else:
            day = DayPlan(days=k + 1, current_city=d, breakfast=pick.meal(d),
                          attraction=pick.attraction(d), lunch=pick.meal(d), dinner=pick.meal(d),
                          accommodation="-" if last else stays.get(d, "-"))  # fmt: skip
        plan.append(day)
    return plan
