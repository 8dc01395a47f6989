"""What every TravelPlanner constraint shares: the :class:`Verdict` it gives, the
:class:`Constraint` interface, the registries of the 8 commonsense and 5 hard constraints and
the record lookups the evaluation script makes."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from travelgym.suites.travelplanner.evaluation.parsing import name_city
from travelgym.suites.travelplanner.records import DayPlan, Query
from travelgym.suites.travelplanner.sandbox import Accommodation, Restaurant, Sandbox

Kind = Literal["commonsense", "hard"]


class Verdict(BaseModel):
    """A constraint's verdict on a plan: ``passed`` is ``None`` where the constraint does not
    apply (a hard constraint the query does not set); ``reason`` says why it failed."""

    model_config = ConfigDict(frozen=True)

    passed: bool | None
    reason: str | None = None

    @classmethod
    def ok(cls) -> Verdict:
        """A pass."""
        return cls(passed=True)

    @classmethod
    def fail(cls, reason: str) -> Verdict:
        """A failure, with its reason."""
        return cls(passed=False, reason=reason)

    @classmethod
    def not_applicable(cls) -> Verdict:
        """The constraint does not apply to this query."""
        return cls(passed=None)


class Constraint(ABC):
    """One constraint: a stable ``id``, the paper's ``name``, the evaluation script's key
    (``script_key``) and a one-sentence ``description``."""

    id: ClassVar[str]
    name: ClassVar[str]
    script_key: ClassVar[str]
    description: ClassVar[str]
    kind: ClassVar[Kind]

    @abstractmethod
    def check(self, query: Query, plan: list[DayPlan], sandbox: Sandbox) -> Verdict:
        """The verdict on ``plan`` for ``query``, looking records up in ``sandbox``."""


C = TypeVar("C", bound=Constraint)
COMMONSENSE: dict[str, Constraint] = {}
HARD: dict[str, Constraint] = {}


def register(kind: Kind, id: str, name: str, script_key: str,
             description: str) -> Callable[[type[C]], type[C]]:  # fmt: skip
    """Class decorator: give the constraint its ``kind``, ``id``, ``name``, ``script_key`` and
    ``description``, and add one instance of it to its kind's registry."""

    def add(cls: type[C]) -> type[C]:
        cls.kind, cls.id, cls.name, cls.script_key = kind, id, name, script_key
        cls.description = description
        registry = COMMONSENSE if kind == "commonsense" else HARD
        if id in registry:
            raise ValueError(f"constraint id {id!r} registered twice")
        registry[id] = cls()
        return cls

    return add


def days_of(query: Query, plan: list[DayPlan]) -> list[DayPlan]:
    """The days the script reads: the first ``query.days`` of the plan."""
    return plan[: query.days]


def _containing(rows: list, name: str) -> list:
    # the script filters with pandas ``str.contains(re.escape(name))``: a substring test, in
    # table order, so an empty name matches every row of the city
    return [row for row in rows if name in row.name]


def restaurant_matches(sandbox: Sandbox, text: str) -> list[Restaurant]:
    """The restaurants a ``"Name, City"`` meal matches (name contained, city equal), in
    table order; the script prices a meal by the first."""
    parsed = name_city(text)
    return _containing(sandbox.restaurants(parsed[1]), parsed[0]) if parsed else []


def accommodation_matches(sandbox: Sandbox, text: str) -> list[Accommodation]:
    """The accommodations a ``"Name, City"`` stay matches, in table order."""
    parsed = name_city(text)
    return _containing(sandbox.accommodations(parsed[1]), parsed[0]) if parsed else []


def attraction_found(sandbox: Sandbox, text: str) -> bool:
    """Whether a ``"Name, City"`` attraction matches a record."""
    parsed = name_city(text)
    return bool(parsed) and bool(_containing(sandbox.attractions(parsed[1]), parsed[0]))
