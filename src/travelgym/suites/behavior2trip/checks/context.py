"""What the checks look at: a plan resolved against the database and the hidden instance.

:class:`Context` walks the plan once: every meal, attraction, entertainment visit and hotel
becomes an :class:`Item` with its database row (looked up by id, else by exact name in the day's
cities); every intercity leg a :class:`Leg` with the matching timetable rows; every local leg a
:class:`Local` with its endpoints and the MapGuide estimate for its mode. Times are minutes after
midnight; an end earlier than its start is on the next day (+1440).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from travelgym.suites.behavior2trip.checks.data import PlanDB, same_name
from travelgym.suites.behavior2trip.checks.transport import DAY, Leg, resolve_leg
from travelgym.suites.behavior2trip.context import Place, normalize
from travelgym.suites.behavior2trip.instance_model import Instance
from travelgym.suites.behavior2trip.plan import (
    LOCAL_MODES,
    MEALS,
    Day,
    IntercityLeg,
    LocalLeg,
    Plan,
    Stay,
    Visit,
    clock_minutes,
)

TABLES = {"breakfast": ("restaurants",), "lunch": ("restaurants",), "dinner": ("restaurants",),
          "attraction": ("attractions", "entertainment"),
          "entertainment": ("entertainment", "attractions"), "accommodation": ("hotels",)}  # fmt: skip


def span(start: Any, end: Any) -> tuple[int | None, int | None]:
    """Minutes of a start and end time (end on the next day when earlier than the start)."""
    s, e = clock_minutes(start), clock_minutes(end)
    if s is not None and e is not None and e < s:
        e += DAY
    return s, e


@dataclass
class Item:
    """A POI of the plan: a meal, an attraction or entertainment visit, or a hotel."""

    day: int  # 1-based position in the plan
    kind: str  # breakfast, lunch, dinner, attraction, entertainment, accommodation
    data: Visit | Stay
    table: str | None = None  # the table of the resolved row
    row: dict[str, Any] | None = None
    problem: str | None = None  # why the POI is not authentic (None: it is)

    @property
    def label(self) -> str:
        return f"day {self.day} {self.kind} {self.data.name or self.data.id or '(unnamed)'!r}"

    @property
    def is_attraction(self) -> bool:
        """An attraction of the attractions table (or, unresolved, listed as one)."""
        return self.table == "attractions" if self.table else self.kind == "attraction"

    @cached_property
    def times(self) -> tuple[int | None, int | None]:
        if isinstance(self.data, Stay):
            t = clock_minutes(self.data.check_in_time)
            return t, t
        return span(self.data.start_time, self.data.end_time)

    def names(self) -> set[str]:
        return set(self._names)

    @cached_property
    def _names(self) -> frozenset[str]:
        return frozenset(normalize(x) for x in (self.data.id, self.data.name) if x)


@dataclass
class Local:
    """A local leg with its resolved endpoints and the MapGuide estimate of its mode."""

    day: int
    data: LocalLeg
    origin: Place | None = None
    target: Place | None = None
    origin_item: Item | None = None
    target_item: Item | None = None
    estimate: float | None = None  # MapGuide minutes for the mode
    fastest: float | None = None  # MapGuide minutes by taxi
    problem: str | None = None

    @property
    def label(self) -> str:
        ends = f"{self.data.from_ or '?'} -> {self.data.to or '?'}"
        return f"day {self.day} {self.data.mode or 'local transport'} {ends}"


@dataclass
class DayView:
    index: int  # 1-based
    day: Day
    date: str  # the trip's date for this day (from the instruction)
    cities: list[str]  # city ids: the day's city and the cities its intercity legs touch
    items: list[Item] = field(default_factory=list)
    legs: list[Leg] = field(default_factory=list)
    locals: list[Local] = field(default_factory=list)
    # (len(items) when sorted, the visiting order): items are only ever appended
    _order: tuple[int, list[Item]] | None = field(default=None, repr=False, compare=False)
    # (len(items) when indexed, normalised id or name -> the first item that has it)
    _named: tuple[int, dict[str, Item]] | None = field(default=None, repr=False, compare=False)

    def meals(self) -> list[Item]:
        return [i for i in self.items if i.kind in MEALS]

    def visits(self) -> list[Item]:
        return [i for i in self.items if i.kind in ("attraction", "entertainment")]

    def stay(self) -> Item | None:
        return next((i for i in self.items if i.kind == "accommodation"), None)

    def ordered(self) -> list[Item]:
        """Items in visiting order: timed ones by start time, then untimed ones as listed."""
        if self._order is None or self._order[0] != len(self.items):
            timed = sorted((i for i in self.items if i.times[0] is not None),
                           key=lambda i: i.times[0])  # fmt: skip
            self._order = (len(self.items), timed + [i for i in self.items if i.times[0] is None])
        return list(self._order[1])

    def find(self, text: str | None) -> Item | None:
        """The first item whose normalised id or name is ``text``'s."""
        key = normalize(text or "")
        if not key:
            return None
        if self._named is None or self._named[0] != len(self.items):
            index: dict[str, Item] = {}
            for item in self.items:
                for name in item._names:
                    index.setdefault(name, item)
            self._named = (len(self.items), index)
        return self._named[1].get(key)


class Context:
    """A plan resolved against the database, with the instance it answers."""

    def __init__(self, plan: Plan, instance: Instance, db: PlanDB) -> None:
        self.plan, self.instance, self.db = plan, instance, db
        self.instruction = instance.instruction
        self.prefs = instance.profile.preferences
        self.home = db.city_id(self.instruction.departure_city)
        self.dest = db.city_id(self.instruction.destination_city)
        start = dt.date.fromisoformat(self.instruction.start_date)
        self.days = []
        for index, day in enumerate(plan.days, start=1):
            date = (start + dt.timedelta(days=index - 1)).isoformat()
            view = DayView(index, day, date, [])
            view.legs = [self._leg(view, leg) for leg in day.intercity_transport]
            cities = db.cities_in(day.city) + [c for g in view.legs for c in (g.dep, g.arr) if c]
            view.cities = list(dict.fromkeys(cities)) or [c for c in (self.dest,) if c]
            for kind in MEALS:
                if getattr(day, kind) is not None:
                    view.items.append(self._item(view, kind, getattr(day, kind)))
            view.items += [self._item(view, "attraction", v) for v in day.attractions]
            view.items += [self._item(view, "entertainment", v) for v in day.entertainment]
            if day.accommodation is not None:
                view.items.append(self._item(view, "accommodation", day.accommodation))
            view.locals = [self._local(view, leg) for leg in day.local_transport]
            self.days.append(view)
        # the plan's items and intercity legs, day by day, gathered once: the views are final
        self.items: list[Item] = [i for d in self.days for i in d.items]
        self.legs: list[Leg] = [g for d in self.days for g in d.legs]

    @property
    def nights(self) -> int:
        return max(self.instruction.days - 1, 0)

    def _item(self, view: DayView, kind: str, data: Visit | Stay) -> Item:
        item = Item(view.index, kind, data)
        tables = TABLES[kind]
        if data.id:
            hit = self.db.poi(data.id)
            if hit is None:
                item.problem = f"{item.label}: no POI with id {data.id!r}"
                return item
            item.table, item.row = hit
            if item.table not in tables:
                item.problem = f"{item.label}: {data.id} is not a {tables[0].rstrip('s')}"
                item.row = item.table = None
            elif data.name and not same_name(data.name, item.row["name"]):
                item.problem = f"{item.label}: id {data.id} is {item.row['name']!r}"
            elif item.row["city_id"] not in view.cities:
                item.problem = f"{item.label}: it is in {item.row['city']}, not in the day's city"
        elif data.name:
            hit = self.db.poi_by_name(tables, data.name, view.cities)
            if hit is None:
                item.problem = f"{item.label}: no such {tables[0].rstrip('s')} in the day's city"
            else:
                item.table, item.row = hit
        else:
            item.problem = f"{item.label}: neither id nor name"
        return item

    def _leg(self, view: DayView, data: IntercityLeg) -> Leg:
        return resolve_leg(self.db, view.index, view.date, data)

    def _local(self, view: DayView, data: LocalLeg) -> Local:
        local = Local(view.index, data)
        local.target_item = view.find(data.to)
        local.origin_item = view.find(data.from_)
        if data.from_ is None and local.target_item is not None:  # from the stop before it
            order = view.ordered()
            if local.target_item in order and order.index(local.target_item) > 0:
                local.origin_item = order[order.index(local.target_item) - 1]
        local.origin = self._place(view, local.origin_item, data.from_)
        local.target = self._place(view, local.target_item, data.to)
        if local.origin is not None and local.target is not None:
            if local.origin.city != local.target.city:
                local.problem = f"{local.label}: the two places are in different cities"
                return local
            by_mode = self.db.local_minutes(local.origin, local.target)
            local.fastest = by_mode["Taxi"]
            local.estimate = by_mode.get(data.mode or "")
            if data.mode == "Subway" and "Subway" not in by_mode:
                local.problem = f"{local.label}: {local.origin.city} has no subway"
        if data.mode is not None and data.mode not in LOCAL_MODES:
            local.problem = f"{local.label}: unknown mode {data.mode!r}"
        return local

    def _place(self, view: DayView, item: Item | None, text: str | None) -> Place | None:
        if item is not None and item.row is not None:
            r = item.row
            return Place(r["name"], item.table or "", None, r["city"], r["lat"], r["lon"])
        return self.db.place(view.cities, text)
