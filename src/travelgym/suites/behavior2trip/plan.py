"""Behavior2Trip travel plans: the JSON schema of a multi-day plan and a tolerant parser.

An agent's final answer holds the plan as a JSON list with one object per day (paper Figure 11)
inside ``<answer></answer>``. :func:`parse_plan` extracts it from the answer text (``<answer>`` or
``<result>`` tags, code fences, a bare list or object, a ``{"days": [...]}`` wrapper, common key
variants) and returns ``(plan, problems)``; the plan is *delivered* when it is not ``None``.
Values that cannot be coerced (a price that is no number, a time that is no time) are dropped
and recorded in ``Plan.issues``, which the ``format.json`` check reports. The format is
documented field by field in ``docs/behavior2trip/plan_format.md``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from travelgym.suites.behavior2trip import vocab
from travelgym.suites.behavior2trip.memo import BoundedMemo

LOCAL_MODES = (*vocab.INTRACITY_TRANSPORT, "Driving", "Transit")
MEALS = ("breakfast", "lunch", "dinner")
IntercityMode = Literal["flight", "train", "bus"]


_CLOCK = re.compile(r"\s*(\d{1,2})(?::(\d{2}))?(?::\d{2})?\s*([ap]\.?m\.?)?\s*", re.I)
MINUTES_KEPT = 4096  # distinct texts remembered (plans and the database use a few hundred)


def clock_minutes(text: Any) -> int | None:
    """Minutes after midnight of ``HH:MM`` (also ``H:MM``, ``9:30 AM``, ``21:00:00``,
    ``24:00``); ``None`` when ``text`` is no time of day."""
    if not isinstance(text, str):
        return None
    if len(text) > 40:
        return _parse_clock(text)
    return _MINUTES[text]


def _parse_clock(text: str) -> int | None:
    m = _CLOCK.fullmatch(text)
    if not m or (m.group(2) is None and m.group(3) is None):
        return None
    hour, minute = int(m.group(1)), int(m.group(2) or 0)
    if m.group(3):
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if m.group(3)[0].lower() == "p" else 0)
    if minute > 59 or hour > 24 or (hour == 24 and minute):
        return None
    return hour * 60 + minute


_MINUTES = BoundedMemo(_parse_clock, MINUTES_KEPT)


def _clock(value: Any) -> Any:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    minutes = clock_minutes(value)
    if minutes is None:
        raise ValueError(f"{value!r} is not a time of day (HH:MM)")
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


Clock = Annotated[str | None, BeforeValidator(_clock)]


class _Item(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    description: str | None = None
    tips: str | None = None


class _Poi(_Item):
    """An item that names a POI of the database (by its id or name)."""

    id: str | None = None
    name: str | None = None


class Visit(_Poi):
    """A meal (restaurant), an attraction or an entertainment visit. ``price`` is CNY per
    person."""

    start_time: Clock = None
    end_time: Clock = None
    price: float | None = None


class Stay(_Poi):
    """The night's hotel. ``price`` is CNY per room and night."""

    check_in_time: Clock = None
    check_out_time: Clock = None
    price: float | None = None


class IntercityLeg(_Item):
    """A flight, train or long-distance bus between two cities. ``price`` is CNY per person;
    ``arrival_day_offset`` counts the days after departure it arrives."""

    mode: IntercityMode | None = None
    number: str | None = None
    from_city: str | None = None
    to_city: str | None = None
    departure_time: Clock = None
    arrival_time: Clock = None
    arrival_day_offset: int = 0
    price: float | None = None
    seat_class: str | None = None


class LocalLeg(_Item):
    """Local transport from one place of the day to the next (POI ids or names, stations,
    airports). ``mode`` is one of :data:`LOCAL_MODES`; ``cost`` is CNY for the party."""

    from_: str | None = Field(None, alias="from")
    to: str | None = None
    mode: str | None = None
    minutes: float | None = None
    cost: float | None = None
    start_time: Clock = None


class Day(_Item):
    """One day of the plan. ``city`` is where the day is spent (``"Beijing -> Shanghai"`` on a
    travel day is fine); ``date`` is ``YYYY-MM-DD``."""

    day: int | None = None
    date: str | None = None
    city: str | None = None
    weather: str | None = None
    city_info: str | None = None
    intercity_transport: list[IntercityLeg] = Field(default_factory=list)
    breakfast: Visit | None = None
    lunch: Visit | None = None
    dinner: Visit | None = None
    attractions: list[Visit] = Field(default_factory=list)
    entertainment: list[Visit] = Field(default_factory=list)
    local_transport: list[LocalLeg] = Field(default_factory=list)
    accommodation: Stay | None = None


class Plan(BaseModel):
    """A parsed plan: the days in order, plus the format problems met while parsing."""

    days: list[Day]
    issues: list[str] = Field(default_factory=list, exclude=True)

    def to_json(self) -> list[dict[str, Any]]:
        """The canonical JSON: a list of day objects, fields left at their defaults omitted."""
        return [d.model_dump(mode="json", by_alias=True, exclude_defaults=True) for d in self.days]


def plan_json_schema() -> dict[str, Any]:
    """The JSON schema of the answer: an array of :class:`Day` objects."""
    return {"type": "array", "items": Day.model_json_schema(by_alias=True)}


__all__ = ["MEALS", "Day", "IntercityLeg", "LocalLeg", "Plan", "Stay", "Visit", "clock_minutes",
           "plan_json_schema"]  # fmt: skip
