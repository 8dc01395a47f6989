"""The base of the hard-constraint language: each kind is one class compiled three ways.

- ``hotel_where`` / ``stay_having`` / ``flight_where`` / ``permit_where``: SQL filters (with
  parameters) for the ground-truth solver's component queries;
- ``check(plan)``: the verdict on a concrete plan's facts (``None`` = satisfied, else why not);
- ``sentence()``: how a user says it.

Structural kinds (park, dates, travellers, rooms, budget, trip coherence, permit) also shape the
solver's search space: see ``solver.py``. Constraints serialise as a discriminated union on
``kind`` and round-trip exactly through JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from travelgym.suites.compass.facts import PlanFacts
from travelgym.suites.compass.reference import PARKS

Clause = tuple[str, tuple]
PARK_NAMES = {p.park_id: p.name for p in PARKS}
HotelAmenityName = Literal[
    "has_pool", "has_restaurant", "has_parking", "has_gym", "is_pet_friendly", "has_wifi",
    "has_breakfast", "is_accessible", "has_ev_charging", "has_laundry",
]  # fmt: skip
RoomFeatureName = Literal[
    "has_kitchenette", "has_air_conditioning", "has_private_bathroom", "has_balcony", "has_view",
    "has_coffee_maker",
]  # fmt: skip
AMENITY_PHRASES = {
    "has_pool": "a pool", "has_restaurant": "a restaurant on site", "has_parking": "parking",
    "has_gym": "a gym", "is_pet_friendly": "to be pet friendly (we bring our dog)",
    "has_wifi": "Wi-Fi", "has_breakfast": "breakfast served at the hotel",
    "is_accessible": "to be wheelchair accessible", "has_ev_charging": "EV charging",
    "has_laundry": "laundry facilities", "has_kitchenette": "a kitchenette",
    "has_air_conditioning": "air conditioning", "has_private_bathroom": "a private bathroom",
    "has_balcony": "a balcony", "has_view": "a view", "has_coffee_maker": "a coffee maker",
}  # fmt: skip


@dataclass(frozen=True)
class TaskSpec:
    """The numbers other constraints' SQL needs: party size and rooms."""

    travellers: int
    rooms: int


def dollars(amount_cents: int) -> str:
    """Format cents as dollars."""
    return f"${amount_cents / 100:,.2f}"


class ConstraintBase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    revelation: Literal["initial", "progressive"] = "initial"
    component: ClassVar[str] = "hotel"

    def hotel_where(self, spec: TaskSpec) -> Clause | None:
        return None

    def stay_having(self, spec: TaskSpec) -> Clause | None:
        return None

    def flight_where(self, spec: TaskSpec) -> Clause | None:
        return None

    def permit_where(self, spec: TaskSpec) -> Clause | None:
        return None

    def check(self, plan: PlanFacts) -> str | None:
        raise NotImplementedError

    def sentence(self) -> str:
        raise NotImplementedError


class ComponentConstraint(ConstraintBase):
    """A constraint on its ``component``'s facts alone: a plan without that component fails it,
    otherwise ``check_facts`` gives the verdict."""

    def check(self, plan):
        facts = getattr(plan, self.component)
        if facts is None:
            return missing(plan, self.component)
        return self.check_facts(facts)

    def check_facts(self, facts: dict) -> str | None:
        raise NotImplementedError


def missing(plan: PlanFacts, component: str) -> str | None:
    """The violation for a plan that lacks a component."""
    return None if getattr(plan, component) else f"the plan has no {component}"
