"""One plan's evaluation (:class:`PlanResult`) and how it is reached: the 8 commonsense
constraints on every delivered plan, the 5 hard constraints only on a delivered plan that
passes Complete Information and Within Sandbox, as TravelPlanner's ``eval.py`` gates them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

# importing the constraint modules registers them
from travelgym.suites.travelplanner.evaluation import commonsense as _commonsense  # noqa: F401
from travelgym.suites.travelplanner.evaluation import hard as _hard  # noqa: F401
from travelgym.suites.travelplanner.evaluation.base import COMMONSENSE, HARD, Verdict
from travelgym.suites.travelplanner.records import DayPlan, Level, Query
from travelgym.suites.travelplanner.sandbox import Sandbox

# the commonsense verdicts a plan needs before its hard constraints are checked
HARD_GATE = ("complete_information", "within_sandbox")


class PlanResult(BaseModel):
    """One query's result. ``commonsense`` is ``None`` for an undelivered plan; ``hard`` is
    ``None`` where the hard constraints were not checked (undelivered, or failing a gate);
    ``hard_applicable`` lists the hard constraints the query sets (the budget always), which
    the hard micro rate counts whether or not they were checked."""

    model_config = ConfigDict(frozen=True)

    idx: int
    task_id: str | None = None
    level: Level
    days: int
    delivered: bool
    commonsense: dict[str, Verdict] | None = None
    hard: dict[str, Verdict] | None = None
    hard_applicable: tuple[str, ...] = ()
    note: str | None = None

    @property
    def commonsense_pass(self) -> bool:
        """All commonsense constraints passed (none False) on a plan whose hard constraints
        were checked: ``eval.py`` skips the rest when they were not."""
        return self.hard is not None and all(
            v.passed is not False for v in (self.commonsense or {}).values()
        )

    @property
    def hard_pass(self) -> bool:
        """The hard constraints were checked and none failed (not applicable ones pass)."""
        return self.hard is not None and all(v.passed is not False for v in self.hard.values())

    @property
    def final_pass(self) -> bool:
        """Both of the above: the plan meets every constraint."""
        return self.commonsense_pass and self.hard_pass


def hard_applicable(query: Query) -> tuple[str, ...]:
    """The hard constraints ``query`` sets: the budget, and each local constraint not None."""
    local = query.local_constraint
    set_ = {"budget": True, "room_rule": local.house_rule is not None,
            "room_type": local.room_type is not None, "cuisine": bool(local.cuisine),
            "transportation": local.transportation is not None}  # fmt: skip
    return tuple(cid for cid in HARD if set_[cid])


def evaluate_plan(
    query: Query, plan: list[DayPlan] | None, sandbox: Sandbox | None, note: str | None = None
) -> PlanResult:
    """Evaluate one plan (``None`` or empty: not delivered, ``note`` saying why; the sandbox
    may then be ``None``)."""
    base = {"idx": query.idx, "task_id": query.task_id, "level": query.level,
            "days": query.days, "hard_applicable": hard_applicable(query)}  # fmt: skip
    if not plan:
        return PlanResult(**base, delivered=False, note=note or "no plan")
    commonsense = {cid: c.check(query, plan, sandbox) for cid, c in COMMONSENSE.items()}
    hard = None
    if all(commonsense[cid].passed for cid in HARD_GATE):
        hard = {cid: c.check(query, plan, sandbox) for cid, c in HARD.items()}
    return PlanResult(**base, delivered=True, commonsense=commonsense, hard=hard, note=note)
