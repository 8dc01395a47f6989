"""The natural-language travel request of an instance (Figure 1): destination, dates, party size
and, on Medium and Hard, a budget derived from the hidden preferences and the database's prices
(an Easy request states none, as Figure 1's: ``budget_cny`` 0).

The departure city is the user's home city. The destination is a different city reachable from
it (by the preferred intercity mode when there is one) where every active preference category has
matching POIs; two times in five it is a city the trajectory already browsed, so the historical
experiences matter. Trip length 2-8 days (mean about 5), 0-5 companions (mean about 2.2).
"""

from __future__ import annotations

import datetime as dt
import math
import statistics
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from travelgym.suites.behavior2trip.actions import CATEGORY_FOCUS, Action
from travelgym.suites.behavior2trip.behaviour_pool import PoiCatalog, signature
from travelgym.suites.behavior2trip.preferences import City
from travelgym.suites.behavior2trip.profiles import Draws, Profile
from travelgym.suites.behavior2trip.schema import DATES

DAYS = (2, 3, 4, 5, 6, 7, 8)
DAY_WEIGHTS = (0.07, 0.14, 0.18, 0.22, 0.17, 0.12, 0.10)
COMPANIONS = (0, 1, 2, 3, 4, 5)
COMPANION_WEIGHTS = {  # family status -> weights over COMPANIONS
    "Single": (0.2, 0.3, 0.22, 0.16, 0.08, 0.04),
    "Married, no children": (0.04, 0.46, 0.2, 0.18, 0.08, 0.04),
    "Married with young children": (0.0, 0.08, 0.42, 0.3, 0.14, 0.06),
    "Married with adult children": (0.02, 0.34, 0.24, 0.22, 0.12, 0.06),
    "Widowed": (0.12, 0.3, 0.28, 0.18, 0.08, 0.04),
}
P_VISITED_DESTINATION = 0.4
MEALS_PER_DAY = 2
ATTRACTIONS_PER_DAY = 1.5
LOCAL_TRANSPORT_PER_DAY = 60  # CNY per person
FALLBACK = {"hotel": 400.0, "restaurant": 100.0, "attraction": 60.0, "transport": 500.0}


class Instruction(BaseModel):
    """The user's request: ``text`` is what the agent reads; the fields are its structure."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str
    departure_city: City
    destination_city: City
    start_date: str  # YYYY-MM-DD, inside the database's date window
    end_date: str
    days: int = Field(ge=1)
    companions: int = Field(ge=0)
    travellers: int = Field(ge=1)  # companions + the user
    rooms: int = Field(ge=1)
    budget_cny: int = Field(ge=0)  # 0: the request states no budget


def reachable_cities(profile: Profile, catalog: PoiCatalog) -> list[str]:
    """Cities other than home reachable by the preferred transport (any, when none is set)
    where every active category has a matching POI."""
    prefs = profile.preferences
    home = profile.persona.home_city
    foci = ["transport", *(CATEGORY_FOCUS[c] for c in profile.categories)]
    sigs = [(f, signature(prefs, f)) for f in dict.fromkeys(foci)]
    return [c for c in catalog.cities
            if c != home and all(catalog.matched_sig(f, c, home, s) for f, s in sigs)]  # fmt: skip


def choose_destination(profile: Profile, trajectory: Sequence[Action], catalog: PoiCatalog,
                       d: Draws) -> str:  # fmt: skip
    """A reachable city offering every active category; often one the user already browsed."""
    home = profile.persona.home_city
    ok = reachable_cities(profile, catalog) or [c for c in catalog.cities if c != home]
    visited = sorted({a.city for a in trajectory} & set(ok), key=catalog.cities.index)
    if visited and d.random() < P_VISITED_DESTINATION:
        return d.choice(visited)
    return d.choice(ok)


def _median(values: list[float], fallback: float) -> float:
    return statistics.median(values) if values else fallback


def estimate_budget(profile: Profile, catalog: PoiCatalog, dest: str, days: int,
                    travellers: int, rooms: int, d: Draws) -> int:  # fmt: skip
    """Typical cost of the trip at the user's preferred standards, with 15-45 % slack, in CNY
    rounded up to 100: hotel nights, two meals a day, tickets, round-trip transport, local
    transport."""
    prefs = profile.preferences
    home = profile.persona.home_city

    def price(focus: str) -> float:
        pois = catalog.matched(focus, dest, home, prefs) or catalog.group(focus, dest, home)
        return _median([p.price for p in pois], FALLBACK[focus])

    nights = max(days - 1, 1)
    cost = price("hotel") * nights * rooms
    cost += price("restaurant") * MEALS_PER_DAY * days * travellers
    cost += price("attraction") * ATTRACTIONS_PER_DAY * days * travellers
    cost += price("transport") * 2 * travellers
    cost += LOCAL_TRANSPORT_PER_DAY * days * travellers
    slack = 1.15 + 0.3 * d.random()
    return int(math.ceil(cost * slack / 100.0) * 100)


def party_phrase(family: str, companions: int, d: Draws) -> str:
    """How the user describes who travels (always stating the head count)."""
    if companions == 0:
        return d.choice(("travelling alone", "on my own"))
    total = companions + 1
    if companions == 1:
        who = "my spouse" if family.startswith("Married") else d.choice(("a friend", "my partner"))
        return f"with {who} (2 people in total)"
    if family == "Married with young children":
        return f"with my family ({total} people in total, children included)"
    if family == "Married with adult children":
        return f"with my family ({total} people in total)"
    return f"with {companions} {d.choice(('friends', 'companions', 'colleagues'))} ({total} people in total)"


TEMPLATES = (
    "I'm planning a {days}-day trip from {origin} to {dest}, leaving on {date}, {party}. "
    "Our total budget is {budget} CNY. Could you give me a travel plan?",
    "Could you plan {days} days in {dest} for me? I'll set off from {origin} on {date}, {party}, "
    "and the whole trip should stay within {budget} CNY.",
    "I want to visit {dest} for {days} days starting {date}, departing from {origin} {party}. "
    "Please make a travel plan that costs no more than {budget} CNY in total.",
)


# Easy requests state no budget (one preference check per Easy instance: profiles.EASY_DROPPED)
TEMPLATES_NO_BUDGET = (
    "I'm planning a {days}-day trip from {origin} to {dest}, leaving on {date}, {party}. "
    "Could you give me a travel plan?",
    "Could you plan {days} days in {dest} for me? I'll set off from {origin} on {date}, {party}.",
    "I want to visit {dest} for {days} days starting {date}, departing from {origin} {party}. "
    "Please make a travel plan.",
)


def _date_text(iso: str) -> str:
    day = dt.date.fromisoformat(iso)
    return f"{day:%B} {day.day}, {day.year}"


def make_instruction(profile: Profile, trajectory: Sequence[Action], catalog: PoiCatalog,
                     d: Draws, like: Instruction | None = None) -> Instruction:  # fmt: skip
    """Draw the request of one instance; with ``like`` another request with its trip length and
    party (destination, dates, budget and wording drawn again)."""
    dest = choose_destination(profile, trajectory, catalog, d)
    days = d.weighted(DAYS, DAY_WEIGHTS) if like is None else like.days
    family = profile.persona.family_status
    if like is None:
        companions = d.weighted(COMPANIONS, COMPANION_WEIGHTS[family])
    else:
        companions = like.companions
    travellers = companions + 1
    rooms = math.ceil(travellers / 2)
    start = d.randint(0, len(DATES) - days)
    budgeted = profile.difficulty != "easy"
    budget = estimate_budget(profile, catalog, dest, days, travellers, rooms, d) if budgeted else 0
    text = d.choice(TEMPLATES if budgeted else TEMPLATES_NO_BUDGET).format(
        days=days, origin=profile.persona.home_city, dest=dest, date=_date_text(DATES[start]),
        party=party_phrase(family, companions, d), budget=f"{budget:,}",
    )  # fmt: skip
    return Instruction(
        text=text, departure_city=profile.persona.home_city, destination_city=dest,
        start_date=DATES[start], end_date=DATES[start + days - 1], days=days,
        companions=companions, travellers=travellers, rooms=rooms, budget_cny=budget,
    )  # fmt: skip
