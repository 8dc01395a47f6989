"""The tolerant parser of Behavior2Trip plans (see ``plan.py`` for the schema): extracts the
plan from an agent's final text and reports why a plan is not deliverable."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from travelgym.suites.behavior2trip.memo import BoundedMemo
from travelgym.suites.behavior2trip.plan import LOCAL_MODES, MEALS, Day, Plan, _clock, clock_minutes
from travelgym.suites.behavior2trip.plan_json import _answer_body, json_values
from travelgym.suites.behavior2trip.plan_values import (
    _key,
    intercity_mode,
    local_mode,
    parse_minutes,
    parse_price,
)

_WRAPPERS = ("days", "plan", "travel_plan", "itinerary", "trip", "answer", "result", "schedule")


def _days_of(value: Any) -> list[Any] | None:
    """The list of day objects in a parsed answer (unwrapping common containers)."""
    if isinstance(value, list):
        inner = _days_of_dict(value[0]) if len(value) == 1 and isinstance(value[0], dict) else None
        return inner or value
    if isinstance(value, dict):
        return _days_of_dict(value) or ([value] if _looks_like_day(value) else None)
    return None


def _days_of_dict(value: dict) -> list[Any] | None:
    """The days of a wrapper (``{"days": [...]}``, ``{"Day 1": {...}, ...}``); ``None`` for a
    day object (whose ``itinerary`` or ``schedule`` lists its activities)."""
    keys = {_key(k): k for k in value}
    for wrapper in _WRAPPERS:
        inner = value.get(keys.get(wrapper, object()))
        if isinstance(inner, list | dict) and (wrapper == "days" or not _looks_like_day(value)):
            return _days_of(inner)
    numbered = sorted((int(m.group(1)), k) for k in value if (m := re.fullmatch(r"\s*day\W*(\d+)\s*", str(k), re.I)))  # fmt: skip
    if numbered:
        out = []
        for number, k in numbered:
            day = value[k]
            out.append({"day": number, **day} if isinstance(day, dict) else day)
        return out
    return None


def _looks_like_day(value: dict) -> bool:
    """Whether an object has day keys besides the wrapper names."""
    return any(_key(k) in _DAY_KEYS and _key(k) not in _WRAPPERS for k in value)


# --- normalising keys and values --------------------------------------------------------------


def _aliases(table: dict[str, tuple[str, ...]]) -> dict[str, str]:
    return {alias: canon for canon, names in table.items() for alias in (canon, *names)}


_DAY_KEYS = _aliases({
    "day": ("day_number", "day_index", "day_no"), "date": ("day_date",),
    "city": ("destination", "location", "city_name", "current_city"),
    "weather": ("weather_info", "weather_forecast", "forecast"),
    "city_info": ("city_information", "city_background", "city_description", "city_intro",
                  "about_city", "city_overview", "background"),
    "intercity_transport": ("transport", "major_transport", "intercity", "transportation",
                            "intercity_transportation", "flight", "flights", "train", "trains",
                            "bus", "travel"),
    "breakfast": (), "lunch": (), "dinner": (), "meals": ("dining", "food", "restaurants"),
    "attractions": ("attraction", "sightseeing", "spots", "scenic_spots", "sights"),
    "entertainment": ("entertainments", "nightlife", "leisure"),
    "activities": ("schedule", "itinerary", "timeline", "events"),
    "local_transport": ("local_transportation", "intracity_transport", "city_transport",
                        "transfers", "routes", "local_routes"),
    "accommodation": ("hotel", "hotels", "lodging", "stay", "accommodations"),
    "description": ("summary", "overview", "day_description", "theme"),
    "tips": ("tip", "notes", "note", "advice", "reminders"),
})  # fmt: skip
_ITEM_KEYS = _aliases({
    "id": ("poi_id", "restaurant_id", "hotel_id", "attraction_id", "entertainment_id"),
    "name": ("title", "poi_name", "restaurant", "restaurant_name", "hotel_name",
             "attraction_name", "place"),
    "start_time": ("start", "from_time", "begin", "time_start", "arrival"),
    "end_time": ("end", "to_time", "until", "time_end", "departure", "leave"),
    "time": ("time_slot", "hours", "time_range", "visit_time"),
    "price": ("cost", "price_cny", "ticket", "ticket_price", "avg_price", "price_per_person",
              "price_per_night", "fee"),
    "check_in_time": ("check_in", "checkin", "checkin_time"),
    "check_out_time": ("check_out", "checkout", "checkout_time"),
    "description": ("details", "intro", "desc", "introduction"),
    "tips": ("tip", "note", "notes", "advice"),
    "transport": ("getting_there", "route", "local_transport", "transportation", "how_to_get_there"),
})  # fmt: skip
_LEG_KEYS = _aliases({
    "mode": ("type", "transport_type", "kind", "transport_mode", "vehicle"),
    "number": ("flight_number", "train_number", "bus_number", "code", "no", "flight_no",
               "train_no", "service"),
    "from_city": ("from", "origin", "departure_city", "dep_city", "origin_city", "from_station"),
    "to_city": ("to", "destination", "arrival_city", "arr_city", "destination_city", "to_station"),
    "departure_time": ("dep_time", "depart", "departure", "depart_time", "start_time", "start"),
    "arrival_time": ("arr_time", "arrive", "arrival", "arrive_time", "end_time", "end"),
    "arrival_day_offset": ("arr_day_offset", "day_offset"),
    "price": ("fare", "cost", "price_cny", "ticket_price", "adult_total"),
    "seat_class": ("seat", "cabin", "cabin_class", "class", "seat_type"),
    "description": ("details", "desc"), "tips": ("tip", "note", "notes"),
})  # fmt: skip
_LOCAL_KEYS = _aliases({
    "from": ("origin", "from_place", "start", "source"),
    "to": ("destination", "to_place", "end", "target"),
    "mode": ("method", "type", "by", "transport", "transport_mode", "way"),
    "minutes": ("duration", "duration_min", "duration_minutes", "time", "travel_time", "mins"),
    "cost": ("price", "fare"), "start_time": ("departure_time", "depart"),
})  # fmt: skip

# --- building the models ----------------------------------------------------------------------


_CLOCK_IN_TEXT = re.compile(r"(\d{1,2}:\d{2}(?:\s*[ap]\.?m\.?)?)", re.I)
CLOCKS_KEPT = 4096  # distinct time texts remembered (a plan repeats a few dozen)


def _clock_text(value: str) -> str | None:
    """The ``HH:MM`` of the first time of day in ``value``; None when it names none."""
    if len(value) > 100:
        return _first_clock(value)
    return _CLOCKS[value]


def _first_clock(value: str) -> str | None:
    m = _CLOCK_IN_TEXT.search(value)
    if m and clock_minutes(m.group(1)) is not None:
        return _clock(m.group(1))
    return None


_CLOCKS = BoundedMemo(_first_clock, CLOCKS_KEPT)


class _Builder:
    """Turns one raw day object into :class:`Day` fields, recording what it had to drop."""

    def __init__(self, index: int, issues: list[str]) -> None:
        self.where = f"day {index}"
        self.issues = issues

    def issue(self, text: str) -> None:
        self.issues.append(f"{self.where}: {text}")

    def text(self, value: Any, what: str) -> str | None:
        if value is None:
            return None
        if isinstance(value, str):
            return value.strip() or None
        if isinstance(value, int | float | bool):
            return str(value)
        if isinstance(value, dict | list):  # e.g. {"condition": "Sunny", "high": 21}
            return json.dumps(value, ensure_ascii=False)
        self.issue(f"{what} is not text")
        return None

    def clock(self, value: Any, what: str) -> str | None:
        if value is None or value == "":
            return None
        out = _clock_text(value) if isinstance(value, str) else None
        if out is None:
            self.issue(f"{what} {value!r} is not a time of day (HH:MM)")
        return out

    def number(self, value: Any, what: str, parse=parse_price) -> float | None:
        if value is None or value == "":
            return None
        out = parse(value)
        if out is None:
            self.issue(f"{what} {value!r} is not a number")
        return out

    def fields(self, raw: Any, aliases: dict[str, str], what: str) -> dict[str, Any] | None:
        if isinstance(raw, str):
            return (
                {"name": raw} if raw.strip() and raw.strip() not in ("-", "N/A", "none") else None
            )
        if raw is None:
            return None
        if not isinstance(raw, dict):
            self.issue(f"{what} is not an object")
            return None
        out: dict[str, Any] = {}
        for k, v in raw.items():
            canon = aliases.get(_key(k))
            if canon is None:
                out.setdefault(str(k), v)  # kept as an extra field
            elif canon not in out or out[canon] in (None, "") or _key(k) == canon:
                out[canon] = v  # the canonical key wins over its aliases
        return out

    def visit(self, raw: Any, what: str, legs: list[dict]) -> dict | None:
        f = self.fields(raw, _ITEM_KEYS, what)
        if f is None:
            return None
        times = f.pop("time", None)
        if isinstance(times, str) and f.get("start_time") is None:
            found = re.findall(r"\d{1,2}:\d{2}(?:\s*[ap]\.?m\.?)?", times, re.I)
            f["start_time"] = found[0] if found else times
            if len(found) > 1 and f.get("end_time") is None:
                f["end_time"] = found[1]
        for key in ("start_time", "end_time", "check_in_time", "check_out_time"):
            if key in f:
                f[key] = self.clock(f[key], f"{what} {key}")
        f["price"] = self.number(f.get("price"), f"{what} price")
        for key in ("id", "name", "description", "tips"):
            if key in f:
                f[key] = self.text(f[key], f"{what} {key}")
        route = f.pop("transport", None)
        if route is not None:
            leg = self.attached_leg(route, f.get("id") or f.get("name"))
            if leg:
                legs.append(leg)
        return f

    def attached_leg(self, raw: Any, target: str | None) -> dict | None:
        """A route written on an item (``"transport": {"car": "~30 minutes"}``): a leg to it."""
        if isinstance(raw, str):
            return {"to": target, "mode": local_mode(raw), "minutes": parse_minutes(raw)}
        if isinstance(raw, list) and raw:
            raw = raw[0]
        if isinstance(raw, dict) and raw:
            if not any(_LOCAL_KEYS.get(_key(k)) in ("mode", "minutes") for k in raw):
                mode, value = next(iter(raw.items()))  # {"car": "~30 minutes", "metro": ...}
                raw = {"mode": mode, "minutes": value}
            leg = self.local(raw, "transport")
            if leg is not None:
                return {**leg, "to": leg.get("to") or target}
        return None

    def local(self, raw: Any, what: str) -> dict | None:
        if isinstance(raw, str):  # "Taxi, about 20 minutes"
            raw = {"mode": raw, "minutes": parse_minutes(raw), "description": raw}
        f = self.fields(raw, _LOCAL_KEYS, what)
        if f is None:
            return None
        f["mode"] = local_mode(f.get("mode"))
        f["minutes"] = self.number(f.get("minutes"), f"{what} minutes", parse_minutes)
        f["cost"] = self.number(f.get("cost"), f"{what} cost")
        if "start_time" in f:
            f["start_time"] = self.clock(f["start_time"], f"{what} start_time")
        for key in ("from", "to"):
            f[key] = self.text(f.get(key), f"{what} {key}")
        return f

    def leg(self, raw: Any, what: str) -> dict | None:
        if isinstance(raw, str):
            m = re.search(r"\b([A-Z0-9]{2}\d{2,4}|[GDCZTK]\d{1,4}|B\d{4})\b", raw)
            number = m.group(1) if m else None
            return {"mode": intercity_mode(raw, number), "number": number, "description": raw}
        f = self.fields(raw, _LEG_KEYS, what)
        if f is None:
            return None
        f["number"] = self.text(f.get("number"), f"{what} number")
        f["mode"] = intercity_mode(f.get("mode"), f.get("number"))
        for key in ("departure_time", "arrival_time"):
            value = f.get(key)
            if isinstance(value, str) and re.search(r"\+\s*1|next day", value, re.I):
                f["arrival_day_offset"] = 1 if key == "arrival_time" else 0
            f[key] = self.clock(value, f"{what} {key}")
        offset = f.get("arrival_day_offset", 0)
        f["arrival_day_offset"] = offset if isinstance(offset, int) and 0 <= offset <= 3 else 0
        f["price"] = self.number(f.get("price"), f"{what} price")
        for key in ("from_city", "to_city", "seat_class", "description", "tips"):
            if key in f:
                f[key] = self.text(f[key], f"{what} {key}")
        return f

    def many(self, raw: Any) -> list[Any]:
        if raw is None or raw == "":
            return []
        if isinstance(raw, dict) and not any(
            _key(k) in _ITEM_KEYS or _key(k) in _LEG_KEYS for k in raw
        ):
            return list(raw.values())  # {"outbound": {...}, "return": {...}}
        return raw if isinstance(raw, list) else [raw]


_SECTION_OF_PREFIX = {"R": "meal", "A": "attractions", "E": "entertainment", "H": "accommodation"}


def _meal_of(item: dict, label: str) -> str:
    """breakfast, lunch or dinner from a label or, failing that, the start time."""
    for meal in MEALS:
        if meal in label:
            return meal
    start = clock_minutes(item.get("start_time"))
    if start is None:
        return "lunch"
    return "breakfast" if start < 10 * 60 + 30 else "lunch" if start < 15 * 60 + 30 else "dinner"


def _section(raw: dict, label: str) -> str:
    """Where an entry of a mixed ``activities`` list belongs."""
    ident = str(raw.get("id") or raw.get("poi_id") or "").strip().upper()
    if re.fullmatch(r"[RAEH]\d{5}", ident):
        return _SECTION_OF_PREFIX[ident[0]]
    for words, section in (
        (("breakfast", "lunch", "dinner", "meal", "restaurant", "dining", "food"), "meal"),
        (("hotel", "accommodation", "check_in", "lodging"), "accommodation"),
        (("flight", "train", "bus", "intercity"), "intercity_transport"),
        (("transport", "transfer", "taxi", "subway", "metro", "walk", "route"), "local_transport"),
        (("entertainment", "show", "bar", "ktv", "spa", "cinema", "night"), "entertainment"),
    ):
        if any(w in label for w in words):
            return section
    return "attractions"


def _is_local(item: Any) -> bool:
    """A transport entry with a local mode or a duration and no service number."""
    if not isinstance(item, dict):
        return False
    f = {_LEG_KEYS.get(_key(k), _LOCAL_KEYS.get(_key(k))): v for k, v in item.items()}
    if f.get("number") or intercity_mode(f.get("mode")) in ("flight", "train"):
        return False
    return "minutes" in f or local_mode(f.get("mode")) in LOCAL_MODES


def _day(raw: dict, index: int, issues: list[str]) -> Day | None:
    b = _Builder(index, issues)
    f = b.fields(raw, _DAY_KEYS, "day")
    out: dict[str, Any] = {"attractions": [], "entertainment": [], "intercity_transport": [],
                           "local_transport": []}  # fmt: skip
    legs: list[dict] = []
    day = f.get("day")
    if isinstance(day, str) and (m := re.search(r"\d+", day)):
        day = int(m.group(0))
    out["day"] = day if isinstance(day, int) and not isinstance(day, bool) else None
    date = f.get("date")
    m = re.search(r"\d{4}-\d{2}-\d{2}", date) if isinstance(date, str) else None
    out["date"] = m.group(0) if m else None
    if date is not None and not m:
        b.issue(f"date {date!r} is not YYYY-MM-DD")
    for key in ("city", "weather", "city_info", "description", "tips"):
        out[key] = b.text(f.get(key), key)

    def add(section: str, item: Any, label: str) -> None:
        what = f"{section if section != 'meal' else label or 'meal'}"
        if section == "intercity_transport" and _is_local(item):
            section = "local_transport"  # a local leg listed under "transport"
        if section == "intercity_transport":
            leg = b.leg(item, "intercity_transport")
            if leg:
                out[section].append(leg)
        elif section == "local_transport":
            leg = b.local(item, "local_transport")
            if leg:
                out[section].append(leg)
        elif section == "accommodation":
            out["accommodation"] = b.visit(item, "accommodation", legs)
        else:
            visit = b.visit(item, what, legs)
            if visit is None:
                return
            if section == "meal":
                meal = _meal_of(visit, label)
                if out.get(meal) is not None:
                    b.issue(f"two {meal}s: the second one is ignored")
                else:
                    out[meal] = visit
            else:
                out[section].append(visit)

    for meal in MEALS:
        if f.get(meal) is not None:
            add("meal", f[meal], meal)
    meals = f.get("meals")
    if isinstance(meals, dict) and any(_key(k) in MEALS for k in meals):
        for k, v in meals.items():
            add("meal", v, _key(k))
    else:
        for item in b.many(meals):
            add(
                "meal",
                item,
                _key(item.get("type") or item.get("meal") or "") if isinstance(item, dict) else "",
            )
    for section in ("attractions", "entertainment", "intercity_transport", "local_transport"):
        for item in b.many(f.get(section)):
            add(section, item, "")
    if f.get("accommodation") is not None:
        stays = b.many(f["accommodation"])
        add("accommodation", stays[0] if stays else None, "")
    for item in b.many(f.get("activities")):
        if not isinstance(item, dict):
            add("attractions", item, "")
            continue
        label = _key(
            " ".join(str(item.get(k, "")) for k in ("type", "category", "kind", "activity"))
        )
        add(_section(item, label), item, label)
    out["local_transport"].extend(legs)
    extras = {k: v for k, v in f.items() if k not in _DAY_KEYS.values()}
    try:
        return Day.model_validate({**extras, **out})
    except ValueError as exc:  # a value no builder step could coerce
        b.issue(f"invalid day: {exc}")
        return None


def _raw_days(values: Iterator[Any]) -> tuple[bool, list[Any] | None]:
    """Whether ``values`` holds any value, and the first list of days found in them that holds
    a day object (else the first list of days found; None when there is none), reading the
    values only as far as needed."""
    read, first = False, None
    for value in values:
        read = True
        days = _days_of(value)
        if days:
            if any(isinstance(x, dict) for x in days):
                return True, days
            first = first or days
    return read, first


def parse_plan(text: str | None) -> tuple[Plan | None, list[str]]:
    """Extract the plan from an agent's final text. Returns ``(plan, problems)``: ``plan`` is
    ``None`` when no plan can be delivered and ``problems`` says why; for a delivered plan the
    problems are notes (e.g. no ``<answer>`` tag) and the format issues of ``plan.issues``."""
    if not isinstance(text, str) or not text.strip():
        return None, ["empty answer: no plan"]
    body, problems = _answer_body(text)
    read, raw_days = _raw_days(json_values(body))
    if not read:
        return None, [*problems, "invalid JSON: no plan could be read"]
    if not raw_days:
        return None, [*problems, "no days: the JSON holds no list of day objects"]
    issues: list[str] = []
    days = []
    for index, raw in enumerate(raw_days, start=1):
        if not isinstance(raw, dict):
            issues.append(f"day {index}: not an object")
            continue
        day = _day(raw, index, issues)
        if day is not None:
            days.append(day)
    if not days:
        return None, [*problems, *issues, "no days: no day object could be read"]
    return Plan(days=days, issues=issues), [*problems, *issues]
