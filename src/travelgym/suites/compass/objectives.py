"""Objectives: single-metric and feature-count utilities, additive over plan components.

Utility is always "higher is better": minimised metrics are negated. Utilities accept the facts
of one component (scalars) or columns of facts (numpy arrays), so the solver evaluates them
vectorised with the same definitions the scorer uses. Costs are in cents. Each
utility is a sum of a hotel part, a flight part and a permit part, which is what lets the solver
count and rank the product of components without materialising it.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from travelgym.suites.compass.facts import Facts, PlanFacts

Metric = Literal[
    "total_cost", "review_score", "distance", "review_count", "star_rating", "airport_drive",
    "flight_duration",
]  # fmt: skip

# how a feature's "test" compares its fact with the test's value
_COMPARISONS = {">=": operator.ge, "==": operator.eq, "!=": operator.ne, "<": operator.lt}


def _predicate(fact: str, test: list | None) -> Callable[[Facts], bool]:
    """A feature's predicate over its component's facts: the fact itself (a flag), or the fact
    compared with the test's value."""
    if test is None:
        return operator.itemgetter(fact)
    compare, value = _COMPARISONS[test[0]], test[1]
    return lambda facts: compare(facts[fact], value)


# feature name -> (component, predicate over that component's facts, phrase); the features are
# data, in ``features.json`` beside this module
FEATURES: dict[str, tuple[str, Callable[[Facts], bool], str]] = {
    name: (spec["component"], _predicate(spec["fact"], spec.get("test")), spec["phrase"])
    for name, spec in json.loads(
        Path(__file__).with_name("features.json").read_text(encoding="utf-8")
    ).items()
}
HOTEL_FEATURES = tuple(n for n, (c, _, _) in FEATURES.items() if c == "hotel")
# Tie-breaks the solver can count exactly: the cheaper plan for every objective but cost, and a
# hotel metric for a cost objective (see ``solver.Ranking``).
HOTEL_METRICS = ("review_score", "distance", "review_count", "star_rating")
TIE_BREAK_PHRASES = {
    "total_cost": "the cheaper one",
    "review_score": "the one with better guest reviews",
    "distance": "the hotel closer to the park",
    "review_count": "the hotel with more reviews",
    "star_rating": "the hotel with more stars",
}
FLIGHT_FEATURES = tuple(n for n, (c, _, _) in FEATURES.items() if c == "flight")


class _OmitsNoTieBreak(BaseModel):
    """Task files of version 3 rank on f alone: an objective without a tie-break serialises
    without the field (version-2 files, which state one, still read)."""

    @model_serializer(mode="wrap")
    def _omit_no_tie_break(self, handler):
        data = handler(self)
        if getattr(self, "tie_break", None) is None and isinstance(data, dict):
            data.pop("tie_break", None)
        return data


class SingleMetric(_OmitsNoTieBreak):
    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["single_metric"] = "single_metric"
    metric: Metric
    # A second criterion for options equal on the metric, stated by task files of version 2
    # only (None, the generator's: plans equal on the metric share a rank).
    tie_break: Metric | None = None
    # metric -> (component, value from facts, minimise?, phrase, unit)
    _SPEC: ClassVar[dict] = {
        "total_cost": ("plan", None, True, "the lowest total price", "USD"),
        "review_score": ("hotel", lambda h: h["review_score"], False, "the best guest reviews", "score"),
        "distance": ("hotel", lambda h: h["distance_km"], True, "the hotel closest to the park", "km"),
        "review_count": ("hotel", lambda h: h["review_count"], False, "the most-reviewed hotel", "reviews"),
        "star_rating": ("hotel", lambda h: h["star_rating"], False, "the most stars", "stars"),
        "airport_drive": ("flight", lambda f: f["drive_hours"], True,
                          "the shortest drive from the airport to the park", "hours"),
        "flight_duration": ("flight", lambda f: f["total_duration"], True,
                            "the shortest total flying time", "minutes"),
    }  # fmt: skip

    @model_validator(mode="after")
    def _countable_tie_break(self):
        return _check_tie_break(self, self.metric)

    @property
    def minimise(self) -> bool:
        return self._SPEC[self.metric][2]

    def secondary(self) -> SingleMetric | None:
        """The tie-break as an objective of its own (None when the task states none)."""
        return SingleMetric(metric=self.tie_break) if self.tie_break else None

    def hotel_utility(self, h: Facts, travellers: int) -> float:
        component, value, minimise, _, _ = self._SPEC[self.metric]
        if self.metric == "total_cost":
            return -h["cost"]
        return (-value(h) if minimise else value(h)) if component == "hotel" else 0

    def flight_utility(self, f: Facts, travellers: int) -> float:
        component, value, minimise, _, _ = self._SPEC[self.metric]
        if self.metric == "total_cost":
            return -f["per_pax"] * travellers
        return (-value(f) if minimise else value(f)) if component == "flight" else 0

    def permit_utility(self, p: Facts, travellers: int) -> float:
        return -p["per_person"] * travellers if self.metric == "total_cost" else 0

    def metric_value(self, utility: float) -> float:
        """The metric in its natural unit (dollars for costs) from a utility."""
        value = -utility if self.minimise else utility
        return round(value / 100, 2) if self.metric == "total_cost" else value

    def sentence(self) -> str:
        return (
            f"Among all options that meet my requirements, I want {self._SPEC[self.metric][3]}."
            + tie_break_sentence(self.tie_break)
        )


class FeatureCount(_OmitsNoTieBreak):
    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["feature_count"] = "feature_count"
    features: list[Literal[tuple(FEATURES)]] = Field(min_length=1)  # type: ignore[valid-type]
    tie_break: Metric | None = None

    minimise: ClassVar[bool] = False

    @model_validator(mode="after")
    def _countable_tie_break(self):
        return _check_tie_break(self, None)

    def secondary(self) -> SingleMetric | None:
        """The tie-break as an objective of its own (None when the task states none)."""
        return SingleMetric(metric=self.tie_break) if self.tie_break else None

    def _count(self, facts: Facts, component: str):
        # works on scalar facts and on columns of facts (numpy arrays) alike
        return sum(
            (np.asarray(FEATURES[name][1](facts), dtype=np.int64) for name in self.features
             if FEATURES[name][0] == component),
            start=np.int64(0),
        )  # fmt: skip

    def hotel_utility(self, h: Facts, travellers: int) -> int:
        return self._count(h, "hotel")

    def flight_utility(self, f: Facts, travellers: int) -> int:
        return self._count(f, "flight")

    def permit_utility(self, p: Facts, travellers: int) -> int:
        return 0

    def metric_value(self, utility: float) -> float:
        return utility

    def satisfied(self, plan: PlanFacts) -> list[str]:
        """The wish-list features this plan has."""
        out = []
        for name in self.features:
            component, predicate, _ = FEATURES[name]
            facts = getattr(plan, component)
            if facts is not None and predicate(facts):
                out.append(name)
        return out

    def sentence(self) -> str:
        wishes = ", ".join(FEATURES[n][2] for n in self.features)
        return (
            f"Beyond my requirements, I'd like as many of these as possible: {wishes}."
            + tie_break_sentence(self.tie_break)
        )


def _check_tie_break(objective, metric: str | None):
    """Only tie-breaks the solver counts exactly: cost after any other objective, a hotel metric
    after cost."""
    tie = objective.tie_break
    if tie is None:
        return objective
    allowed = HOTEL_METRICS if metric == "total_cost" else ("total_cost",)
    if tie not in allowed:
        raise ValueError(
            f"tie_break {tie!r} after {metric or 'a feature count'}: use one of {allowed}"
        )
    return objective


def tie_break_sentence(tie_break: str | None) -> str:
    """How the user states the tie-break (empty when there is none)."""
    if tie_break is None:
        return ""
    return f" If two options are equally good on that, I'd take {TIE_BREAK_PHRASES[tie_break]}."


Objective = Annotated[SingleMetric | FeatureCount, Field(discriminator="type")]


def plan_key(objective: SingleMetric | FeatureCount, plan: PlanFacts) -> tuple[float, float]:
    """The scored key of a plan: its utility f, then the utility of the tie-break a version-2
    task states (0 when the task states none, as every generated task since version 3). Plans
    are compared lexicographically on it; equal keys share a rank."""
    secondary = objective.secondary()
    return (
        float(plan_utility(objective, plan)),
        float(plan_utility(secondary, plan)) if secondary else 0.0,
    )


def plan_utility(objective: SingleMetric | FeatureCount, plan: PlanFacts) -> float:
    """The utility of a whole plan: the sum of its components' utilities."""
    n = plan.travellers
    total = 0
    if plan.hotel is not None:
        total += objective.hotel_utility(plan.hotel, n)
    if plan.flight is not None:
        total += objective.flight_utility(plan.flight, n)
    if plan.permit is not None:
        total += objective.permit_utility(plan.permit, n)
    return total
