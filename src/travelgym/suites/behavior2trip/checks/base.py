"""Check records: the result of one constraint on one plan, and the registry of the 32 checks.

A check is a function of a :class:`~travelgym.suites.behavior2trip.checks.context.Context` returning a
:class:`Verdict`. A user-preference check also has an ``applies`` function of the instance alone
(never of the plan), so that an undelivered plan has the same denominators as a delivered one:
it returns the reason the check does not apply, or ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

Category = Literal["format", "authenticity", "reasonableness", "personalization", "information"]
GROUP_OF: dict[str, str] = {"format": "C", "authenticity": "C", "reasonableness": "C",
                            "information": "C", "personalization": "UPC"}  # fmt: skip


class CheckResult(BaseModel):
    """One check on one plan: ``passed`` is ``None`` when the check does not apply."""

    id: str
    group: Literal["C", "UPC"]
    category: Category
    passed: bool | None
    reason: str

    @property
    def applicable(self) -> bool:
        return self.passed is not None


@dataclass(frozen=True)
class Verdict:
    passed: bool | None
    reason: str


def ok(reason: str = "ok") -> Verdict:
    return Verdict(True, reason)


def fail(problems: list[str] | str, limit: int = 3) -> Verdict:
    """A failure listing the first ``limit`` problems (and how many more there are)."""
    if isinstance(problems, str):
        return Verdict(False, problems)
    text = "; ".join(problems[:limit])
    if len(problems) > limit:
        text += f"; and {len(problems) - limit} more"
    return Verdict(False, text)


def verdict(problems: list[str], passed: str = "ok") -> Verdict:
    """Pass when there is no problem, else fail with them."""
    return fail(problems) if problems else ok(passed)


def not_applicable(reason: str) -> Verdict:
    return Verdict(None, reason)


@dataclass(frozen=True)
class Check:
    """One constraint of Table 8: a stable id, its category, the rule in words and the code."""

    id: str
    category: Category
    title: str  # the paper's name (Table 8)
    rule: str  # what is checked, with the threshold
    fn: Callable[[Any], Verdict]
    applies: Callable[[Any], str | None] | None = None  # instance -> reason it does not apply

    @property
    def group(self) -> str:
        return GROUP_OF[self.category]

    def result(self, v: Verdict) -> CheckResult:
        return CheckResult(id=self.id, group=self.group, category=self.category,
                           passed=v.passed, reason=v.reason)  # fmt: skip


REGISTRY: dict[str, Check] = {}


def check(id: str, category: Category, title: str, rule: str,
          applies: Callable[[Any], str | None] | None = None):  # fmt: skip
    """Register a check function under ``id``."""

    def wrap(fn: Callable[[Any], Verdict]) -> Callable[[Any], Verdict]:
        if id in REGISTRY:
            raise ValueError(f"duplicate check id {id}")
        REGISTRY[id] = Check(id, category, title, rule, fn, applies)
        return fn

    return wrap


def day_check(id: str, category: Category, title: str, rule: str, passed: str = "ok"):
    """Register a check made of a test of each day: the function takes a day's view and yields
    its problems; the check passes (``passed`` its reason) when no day has any."""

    def wrap(fn: Callable[[Any], Iterable[str]]) -> Callable[[Any], Iterable[str]]:
        check(id, category, title, rule)(
            lambda ctx: verdict([p for view in ctx.days for p in fn(view)], passed)
        )
        return fn

    return wrap


def timed_item_check(id: str, category: Category, title: str, rule: str):
    """Register a check made of a test of each item with a start time (untimed items are left
    to info.sufficiency): the function takes the item and returns its problem or ``None``."""

    def wrap(fn: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
        def run(ctx: Any) -> Verdict:
            found = (fn(item) for item in ctx.items if item.times[0] is not None)
            return verdict([p for p in found if p is not None])

        check(id, category, title, rule)(run)
        return fn

    return wrap
