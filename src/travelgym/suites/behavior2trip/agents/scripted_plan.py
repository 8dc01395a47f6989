"""The scripted baseline's plan pieces: the day templates, what a stop stands for, a timed
day, and the day as plan-format JSON (docs/behavior2trip/plan_format.md) with its cost."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from travelgym.suites.behavior2trip.agents.schedule import Stop, hhmm

DESCRIPTION_CHARS = 160
# (kind, city role, hint: the clock time the slot is meant for)
ARRIVAL_TEMPLATES = (
    (("breakfast", "home", 8 * 60), ("leg",), ("lunch", "dest", 12 * 60),
     ("attraction", "dest", 14 * 60), ("dinner", "dest", 18 * 60), ("hotel",)),
    (("breakfast", "home", 7 * 60), ("leg",), ("attraction", "dest", 10 * 60),
     ("lunch", "dest", 12 * 60), ("attraction", "dest", 14 * 60), ("dinner", "dest", 18 * 60),
     ("hotel",)),
    (("breakfast", "home", 9 * 60), ("lunch", "home", 11 * 60 + 30), ("leg",),
     ("attraction", "dest", 15 * 60), ("dinner", "dest", 18 * 60), ("hotel",)),
    (("leg",), ("breakfast", "dest", 9 * 60), ("attraction", "dest", 10 * 60),
     ("lunch", "dest", 12 * 60), ("attraction", "dest", 14 * 60), ("dinner", "dest", 18 * 60),
     ("hotel",)),
    (("breakfast", "home", 8 * 60), ("attraction", "home", 9 * 60 + 30),
     ("lunch", "home", 12 * 60), ("leg",), ("dinner", "dest", 19 * 60), ("hotel",)),
)  # fmt: skip
FULL_DAY = (("breakfast", "dest", 8 * 60), ("attraction", "dest", 9 * 60 + 30),
            ("lunch", "dest", 12 * 60), ("attraction", "dest", 14 * 60),
            ("dinner", "dest", 18 * 60), ("hotel",))  # fmt: skip
DEPARTURE_TEMPLATES = (
    (("breakfast", "dest", 8 * 60), ("attraction", "dest", 9 * 60 + 30),
     ("lunch", "dest", 12 * 60), ("attraction", "dest", 14 * 60), ("dinner", "dest", 18 * 60),
     ("leg",)),
    (("breakfast", "dest", 8 * 60), ("attraction", "dest", 9 * 60 + 30),
     ("lunch", "dest", 12 * 60), ("attraction", "dest", 14 * 60), ("leg",),
     ("dinner", "home", 19 * 60)),
    (("breakfast", "dest", 8 * 60), ("attraction", "dest", 9 * 60 + 30),
     ("lunch", "dest", 12 * 60), ("leg",), ("dinner", "home", 18 * 60)),
    (("breakfast", "dest", 8 * 60), ("attraction", "dest", 9 * 60 + 30), ("leg",),
     ("lunch", "home", 13 * 60), ("attraction", "home", 14 * 60 + 30),
     ("dinner", "home", 18 * 60)),
)  # fmt: skip


@dataclass
class Pick:
    """What a stop stands for: a POI row or an intercity leg, in a city."""

    kind: str
    city: str
    row: dict[str, Any] | None = None
    leg: dict[str, Any] | None = None

    @property
    def place_in(self) -> str:
        """Where the stop starts (a POI id, a station or airport)."""
        return self.leg["from_place"] if self.leg else self.row["id"]

    @property
    def place_out(self) -> str:
        return self.leg["to_place"] if self.leg else self.row["id"]

    @property
    def label_in(self) -> str:
        """The same place as the plan names it."""
        return self.leg["from_place"] if self.leg else self.row["name"]

    @property
    def label_out(self) -> str:
        return self.leg["to_place"] if self.leg else self.row["name"]

    @property
    def city_out(self) -> str:
        return self.leg["to_city"] if self.leg else self.city


@dataclass
class DayDraft:
    """A timed day: its stops and the local legs between them."""

    stops: list[Stop]
    locals: list[dict[str, Any]] = field(default_factory=list)
    timed: bool = True  # the timing rules hold
    local_ok: bool = True  # local transport within the daily limit

    @property
    def local_minutes(self) -> int:
        return sum(x["minutes"] for x in self.locals)

    def meets(self, level: str) -> bool:
        """``exact``: every rule holds; ``timed``: all but the local-transport limit; ``any``."""
        return level == "any" or (self.timed and (level == "timed" or self.local_ok))


def render_day(draft: DayDraft, index: int, ins: Any, weather: dict[str, str],
               city_info: str) -> dict[str, Any]:  # fmt: skip
    """Day ``index`` (1-based) of the trip ``ins`` (the instruction) as plan JSON."""
    date = (dt.date.fromisoformat(ins.start_date) + dt.timedelta(days=index - 1)).isoformat()
    last = index == ins.days
    city = ins.destination_city
    if index == 1:
        city = f"{ins.departure_city} -> {ins.destination_city}"
    elif last:
        city = f"{ins.destination_city} -> {ins.departure_city}"
    day: dict[str, Any] = {"day": index, "date": date, "city": city,
                           "weather": weather.get(date, "no forecast available")}  # fmt: skip
    if index == 1:
        day["city_info"] = city_info
    day["intercity_transport"] = []
    day["attractions"], day["entertainment"] = [], []
    for stop in draft.stops:
        pick: Pick = stop.ref
        if pick.leg is not None:
            day["intercity_transport"].append(_leg_json(pick.leg))
        elif pick.kind == "hotel":
            day["accommodation"] = _stay_json(pick.row, stop.start)
        elif pick.kind in ("breakfast", "lunch", "dinner"):
            day[pick.kind] = _visit_json(pick.row, stop, "price_per_person")
        elif pick.kind == "attraction":
            day["attractions"].append(_visit_json(pick.row, stop, "ticket_price"))
        else:
            day["entertainment"].append(_visit_json(pick.row, stop, "price_per_person"))
    day["local_transport"] = [_local_json(x, draft.stops) for x in draft.locals]
    for key in ("intercity_transport", "attractions", "entertainment"):
        if not day[key]:
            del day[key]
    return day


def plan_cost(days: list[dict[str, Any]], travellers: int, rooms: int) -> float:
    """The party's total (as the budget check counts it)."""
    t = travellers
    total = 0.0
    for day in days:
        for leg in day.get("intercity_transport", []):
            total += leg["price"] * t
        for meal in ("breakfast", "lunch", "dinner"):
            if day.get(meal):
                total += day[meal]["price"] * t
        for visit in day.get("attractions", []) + day.get("entertainment", []):
            total += visit["price"] * t
        if day.get("accommodation"):
            total += day["accommodation"]["price"] * rooms
        total += sum(x.get("cost") or 0 for x in day.get("local_transport", []))
    return round(total, 2)


def _describe(row: dict[str, Any]) -> str:
    text = (row.get("details") or "").strip()
    return text[:DESCRIPTION_CHARS]


def _visit_json(row: dict[str, Any], stop: Stop, price_key: str) -> dict[str, Any]:
    out = {"id": row["id"], "name": row["name"], "start_time": hhmm(stop.start),
           "end_time": hhmm(stop.end), "price": row.get(price_key) or 0.0,
           "description": _describe(row)}  # fmt: skip
    if "recommended_duration" in row:
        out["tips"] = (
            f"Recommended visit {row['recommended_duration']}; {row.get('ticket_info', '')}".strip(
                "; "
            )
        )
    elif "cuisine" in row:
        out["tips"] = (
            f"{row['cuisine']}, {row.get('environment', '')} setting, about {row.get('price_per_person', 0):g} CNY per person"
        )
    return out


def _stay_json(row: dict[str, Any], check_in: int) -> dict[str, Any]:
    return {"id": row["id"], "name": row["name"], "check_in_time": hhmm(check_in),
            "check_out_time": row.get("check_out_time"), "price": row["price_per_night"],
            "description": _describe(row),
            "tips": f"{row.get('star_level', '')}; facilities: {', '.join(row.get('facilities') or [])}"}  # fmt: skip


def _leg_json(leg: dict[str, Any]) -> dict[str, Any]:
    out = {"mode": leg["mode"], "number": leg["number"], "from_city": leg["from_city"],
           "to_city": leg["to_city"], "departure_time": leg["dep_time"],
           "arrival_time": leg["arr_time"], "arrival_day_offset": leg["offset"],
           "price": leg["price"],
           "description": f"{leg['vocab']} {leg['number']} from {leg['from_place']} to {leg['to_place']}"}  # fmt: skip
    if leg["seat_class"]:
        out["seat_class"] = leg["seat_class"]
    return out


def _local_json(x: dict[str, Any], stops: list[Stop]) -> dict[str, Any]:
    """A local leg, leaving when the previous stop ends (or in time for the next one)."""
    out = {"from": x["from"], "to": x["to"], "mode": x["mode"], "minutes": x["minutes"],
           "cost": x["cost"]}  # fmt: skip
    if x["after"] is not None:
        leave = stops[x["after"]].end
    else:
        leave = stops[x["before"]].start - x["minutes"]
    if leave is not None and leave >= 6 * 60 and leave + x["minutes"] <= 23 * 60:
        out["start_time"] = hhmm(leave)
    return out


def weather_text(w: dict[str, Any]) -> str:
    return (f"{w['weather']}, {w['min_temp']}-{w['max_temp']}°C, {w['wind_direction']} wind "
            f"level {w['wind_level']}, air quality {w['air_quality']}")  # fmt: skip
