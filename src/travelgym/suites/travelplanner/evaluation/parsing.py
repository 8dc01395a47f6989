"""How TravelPlanner's evaluation script reads the text of a plan: ``"Name, City"`` places,
``"from A to B"`` legs, parenthesised state suffixes, flight numbers, modes and attraction
lists. Each helper reproduces the script's reading, quirks included (they decide verdicts)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from travelgym.suites.travelplanner.records import DayPlan

# "from A to B": A is the shortest text before " to ", B runs to the next comma (or the end).
_FROM_TO = re.compile(r"from\s+(.+?)\s+to\s+([^,]+)(?=[,\s]|$)")

# the six fields a day must hold besides ``days`` and ``current_city``
PLAN_FIELDS = ("transportation", "breakfast", "attraction", "lunch", "dinner", "accommodation")
MEALS = ("breakfast", "lunch", "dinner")

# the script's marker for days past the end of a shorter trip
NO_INFO_DAY = "You don't need to fill in the information for this or later days."


def filled(value: str | None) -> bool:
    """Whether a plan field names something (neither empty nor ``"-"``)."""
    return bool(value) and value != "-"


def from_to(text: str) -> tuple[str | None, str | None]:
    """``(A, B)`` of the first ``"from A to B"`` in ``text`` (case-sensitive ``from``/``to``;
    ``B`` ends at the next comma), or ``(None, None)``."""
    match = _FROM_TO.search(text)
    return (match.group(1), match.group(2)) if match else (None, None)


def strip_parenthesis(text: str) -> str:
    """The text before the first ``"("`` that a ``")"`` follows, unstripped (``"Denver
    (Colorado)"`` gives ``"Denver "``, which then matches no city: the script's reading)."""
    start = text.find("(")
    if start >= 0 and text.find(")", start) >= 0:
        return text[:start]
    return text


def name_city(text: str) -> tuple[str, str] | None:
    """``(name, city)`` of ``"Name, City"``: the city is what follows the last comma (with a
    parenthesised suffix dropped), the name everything before it; ``None`` when there is no
    comma or nothing after the last one."""
    head, sep, tail = text.rpartition(",")
    if not sep or not tail:
        return None
    return head.strip(), strip_parenthesis(tail.strip()).strip()


def attraction_list(text: str) -> list[str]:
    """The attractions of ``"A, City;B, City;"``: the pieces between ``';'`` without the last
    one, as the script splits them (so an attraction after the final ``';'`` is not read)."""
    return text.split(";")[:-1]


def filled_meals(day: DayPlan) -> Iterator[tuple[str, str]]:
    """``(meal, text)`` of each meal the day fills, breakfast to dinner."""
    for meal in MEALS:
        text = getattr(day, meal)
        if filled(text):
            yield meal, text


def day_attractions(day: DayPlan) -> list[str]:
    """The attractions of the day, as :func:`attraction_list` splits a filled field."""
    return attraction_list(day.attraction) if filled(day.attraction) else []


def is_travel_day(current_city: str) -> bool:
    """Whether a ``current_city`` is a leg for the route and city checks (``'from'`` in it)."""
    return "from" in current_city


def day_cities(current_city: str) -> list[str] | str | None:
    """The cities a day is in, as the script's current-city check reads them: ``[A, B]`` of a
    ``"from A to B"`` day, but for any other day the city name itself as a *string*, whose
    characters the check then iterates (``None``: a ``'from'`` day without a leg)."""
    if is_travel_day(current_city):
        origin, destination = from_to(current_city)
        if origin is None or destination is None:
            return None
        return [strip_parenthesis(origin), strip_parenthesis(destination)]
    return strip_parenthesis(current_city)


def leg(day: DayPlan) -> tuple[str | None, str | None]:
    """The leg of a day's transportation: its own ``"from A to B"``, else the current city's."""
    origin, destination = from_to(day.transportation)
    if origin is None or destination is None:
        origin, destination = from_to(day.current_city)
    return origin, destination


def is_flight(transportation: str) -> bool:
    """Whether the sandbox and cost checks read a transportation as a flight."""
    return "flight number" in transportation.lower()


def flight_number(transportation: str) -> str | None:
    """The number after ``"Flight Number: "`` (case-sensitive) up to the next comma."""
    _, sep, rest = transportation.partition("Flight Number: ")
    return rest.split(",")[0] if sep else None


def drive_mode(transportation: str) -> str | None:
    """The ground mode the sandbox and cost checks read: self-driving before taxi."""
    lowered = transportation.lower()
    if "self-driving" in lowered:
        return "self-driving"
    if "taxi" in lowered:
        return "taxi"
    return None


def transport_kind(transportation: str) -> str | None:
    """The mode the non-conflicting-transportation check reads: taxi, then self-driving, then
    flight (``None``: none of them)."""
    lowered = transportation.lower()
    for needle, kind in (("taxi", "Taxi"), ("self-driving", "Self-driving"), ("flight", "Flight")):
        if needle in lowered:
            return kind
    return None


def present(day: DayPlan, field: str) -> bool:
    """Whether the day's record held ``field`` (a submission line may leave a key out; the
    script fails a plan missing one, which a ``"-"`` default would hide)."""
    return field in day.model_fields_set
