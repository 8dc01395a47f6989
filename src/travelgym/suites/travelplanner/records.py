"""TravelPlanner's data as pydantic models: a dataset row (:class:`Query`) and a plan
(:class:`DayPlan`, :class:`Submission`), in the field names of the published dataset and of its
submission files."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from travelgym.core.selection import select

Level = Literal["easy", "medium", "hard"]
Split = Literal["train", "validation", "test"]


class LocalConstraint(BaseModel):
    """A query's hard constraints besides the budget (``None``: not constrained). Values as the
    dataset writes them: house rule ``"parties" | "smoking" | "children under 10" | "pets" |
    "visitors"``; room type ``"entire room" | "private room" | "shared room" | "not shared
    room"``; transportation ``"no flight" | "no self-driving"``; cuisine a list such as
    ``["Chinese", "Italian"]``."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    house_rule: str | None = Field(default=None, alias="house rule")
    cuisine: list[str] | None = None
    room_type: str | None = Field(default=None, alias="room type")
    transportation: str | None = None


class Query(BaseModel):
    """One row of the TravelPlanner dataset; ``task_id`` is ``"<split>-<idx>"`` (``idx`` counts
    from 1 within a split, as submission files do)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    split: Split
    idx: int
    org: str
    dest: str
    days: int
    visiting_city_number: int
    date: list[str]
    people_number: int
    local_constraint: LocalConstraint
    budget: float
    query: str
    level: Level
    # the reference information as the dataset stores it (hidden from tool-mode agents)
    reference_information: list[dict[str, str]] | None = Field(default=None, repr=False)
    annotated_plan: list[dict[str, Any]] | None = Field(default=None, repr=False)


class DayPlan(BaseModel):
    """One day of a plan, as TravelPlanner writes it: ``"-"`` for nothing; a place is
    ``"Name, City"``; attractions are ``"A, City;B, City;"``; transportation is e.g. ``"Flight
    Number: F123, from A to B, Departure Time: 08:00, Arrival Time: 10:00"`` or ``"Self-driving,
    from A to B, duration: 2 hours, distance: 200 km, cost: 10"``; ``current_city`` is ``"from A
    to B"`` on a travel day."""

    model_config = ConfigDict(extra="ignore")

    days: int
    current_city: str = "-"
    transportation: str = "-"
    breakfast: str = "-"
    attraction: str = "-"
    lunch: str = "-"
    dinner: str = "-"
    accommodation: str = "-"


class Submission(BaseModel):
    """One line of a TravelPlanner submission file: the query's ``idx`` (1-based), its text
    and the plan (``None`` or empty: not delivered)."""

    model_config = ConfigDict(extra="ignore")

    idx: int
    query: str = ""
    plan: list[DayPlan] | None = None


def select_queries(queries: list[Query], ids: list[str] | None, difficulty: str | None,
                   limit: int | None) -> list[Query]:  # fmt: skip
    """Queries by explicit ids (in that order), else by level; then the first ``limit``. With
    a limit and no level the levels are interleaved, so a small sample covers each."""
    return select(queries, ids, difficulty, limit, id_of=lambda q: q.task_id,
                  level_of=lambda q: q.level, interleave=True)  # fmt: skip
