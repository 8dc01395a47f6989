"""Automatic quality control of Behavior2Trip instances (paper Figure 10, stage one).

Three criteria, each scored 0/1 with a reason, and one of four operation codes:

1. ``completeness``: the trajectory is a behaviour chain from browsing to a final decision
   (several action types, ending in at least one booking, the Figure 9 structure rules hold:
   funnel, sessions, timestamps, one city and topic per session);
2. ``clarity``: the key behaviours (favourites and bookings) agree with the stated preferences,
   every active preference category is shown by some key behaviour, and every listed value
   (star level, attraction type, cuisine) by a key behaviour or a click of a matching POI;
3. ``constraints``: a plan meets the request's constraints: the 32 checks on the annotated
   chain's plan where one is given, else on the instance's hidden witness plan.

This module holds the records and the deterministic **rule** backend
(:func:`assess_rules`); the LLM judge is :mod:`.quality_llm`, the corrections and the
filtered set :mod:`.quality_apply`, the human stage :mod:`.quality_sheet`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from travelgym.suites.behavior2trip.behaviour_pool import catalog_for
from travelgym.suites.behavior2trip.instance_model import Instance, instance_pool
from travelgym.suites.behavior2trip.preferences import POI_TYPE_CATEGORY, poi_matches
from travelgym.suites.behavior2trip.quality_correct import (
    KEY_ACTIONS,
    corrected_from_behaviour,
    shown_kinds,
)

QC_FORMAT_VERSION = "2"  # 2: the unfiltered set named by its identity, not a file sha256
RULES_VERSION = "1.0.1"  # 1.0.1: a correction keeps the values matching clicks show
CRITERIA = ("completeness", "clarity", "constraints")
OPERATIONS = ("no_action", "correct_preference", "mark_incomplete", "delete")
Operation = Literal["no_action", "correct_preference", "mark_incomplete", "delete"]
# Figure 9 rules that make a trajectory broken or illogical (criterion 1: delete, not mark)
BROKEN_RULES = ("unknown_poi", "poi_mismatch", "funnel", "rebooked", "timestamp",
                "session_order", "session_city", "session_topic", "plan_order", "commitment",
                "noise_clustered", "noise_budget", "drift")  # fmt: skip
# rules that say a chain is incomplete (single-patterned, no final decision): mark it
INCOMPLETE_RULES = ("no_booking", "category_diversity")
# list attributes whose every value must be shown by a key behaviour (category, attribute)
LIST_ATTRIBUTES = (("hotel_preferences", "star_requirement"),
                   ("attraction_preferences", "preferred_attraction_types"),
                   ("dining_requirements", "cuisine_preferences"))  # fmt: skip


class Criterion(BaseModel):
    """One criterion's 0/1 score and why."""

    model_config = ConfigDict(extra="forbid")
    score: Literal[0, 1]
    reason: str


class QCRecord(BaseModel):
    """The automatic verdict on one instance. ``operation`` is ``None`` (and ``error`` set) when
    the judge could not give one; ``corrected_preferences`` (preferences JSON without the
    history) comes with ``correct_preference``."""

    model_config = ConfigDict(extra="forbid")
    instance_id: str
    split: Literal["train", "test"]
    difficulty: Literal["easy", "medium", "hard"]
    backend: str
    plan_source: Literal["chain", "witness", "none"]
    completeness: Criterion | None = None
    clarity: Criterion | None = None
    constraints: Criterion | None = None
    operation: Operation | None = None
    corrected_preferences: dict[str, Any] | None = None
    error: str | None = None

    def scores(self) -> dict[str, int | None]:
        """criterion -> 0/1 (``None`` for a judge error)."""
        return {c: (getattr(self, c).score if getattr(self, c) else None) for c in CRITERIA}


# --- criterion 1: completeness -----------------------------------------------------------------


def completeness(instance: Instance, problems: list[str]) -> tuple[Criterion, bool]:
    """Criterion 1 from the trajectory and its Figure 9 rule violations ``problems``; the flag
    says whether the chain is broken (delete) rather than merely incomplete (mark)."""
    trajectory = instance.trajectory
    types = {a.action_type for a in trajectory}
    reasons, broken = [], False
    structural = [p for p in problems if p.split(":")[0] in BROKEN_RULES]
    if structural:
        broken = True
        reasons.append("broken chain: " + "; ".join(structural[:3]))
    if len(types) < 2:
        reasons.append(f"single-patterned: only {', '.join(sorted(types)) or 'no'} actions")
    if "book" not in types:
        reasons.append("no final decision: nothing is booked")
    reasons += [p for p in problems if p.split(":")[0] == "category_diversity"]
    if reasons:
        return Criterion(score=0, reason="; ".join(reasons)), broken
    return Criterion(score=1, reason=f"{len(trajectory)} actions ({', '.join(sorted(types))}) "
                     "from browsing to bookings; the Figure 9 structure holds"), False  # fmt: skip


# --- criterion 2: clarity ------------------------------------------------------------------------


def clarity(instance: Instance, catalog: Any) -> tuple[Criterion, bool]:
    """Criterion 2: key behaviours against the stated preferences. The flag says whether the
    profile can be corrected from the behaviour (:mod:`.quality_apply` does it).

    Judged against the instance's ``--noise`` level ``p``: favourites of off-profile POIs are
    expected noise up to the level's allowance (``ceil(p * F)`` of the ``F`` favourites, as
    Figure 9's relaxed rule), neither a conflict nor evidence of a preference; a category must
    be shown by a key behaviour on a matching POI. At ``p = 0`` this is the paper's criterion."""
    from travelgym.suites.behavior2trip.behaviour_rules import allowance

    prefs = instance.profile.preferences
    key = [a for a in instance.trajectory if a.action_type in KEY_ACTIONS]
    tolerated = allowance(instance.noise, sum(a.action_type == "add_to_favorites" for a in key))
    conflicts, shown, noisy = [], Counter(), 0
    for a in key:
        poi = catalog.pois.get(a.poi_id)
        category = POI_TYPE_CATEGORY.get(a.poi_type)
        if poi is None or category is None or getattr(prefs, category) is None:
            continue
        matches = poi_matches(prefs, poi)
        if instance.noise and not matches and a.action_type == "add_to_favorites":
            noisy += 1
            if noisy <= tolerated:
                continue
        shown[category] += 1
        if not matches:
            conflicts.append(f"{a.action_type} of {a.poi_id} ({', '.join(a.categories)}) "
                             f"against {category}")  # fmt: skip
    reasons, fixable = [], True
    unshown = [c for c in prefs.categories if not shown[c]]
    if unshown:
        fixable = False
        reasons.append(f"no key behaviour shows {', '.join(unshown)}")
    if conflicts:
        reasons.append("key behaviours conflict: " + "; ".join(conflicts[:3]))
    for category, attribute in LIST_ATTRIBUTES:
        section = getattr(prefs, category)
        if section is None:
            continue
        seen = shown_kinds(instance, catalog, category)
        missing = [v for v in getattr(section, attribute) if v not in seen]
        if missing:
            reasons.append(f"{category}.{attribute} {', '.join(missing)} shown by no favourite, "
                           "booking or click of a matching POI")  # fmt: skip
    if reasons:
        return Criterion(score=0, reason="; ".join(reasons)), fixable
    noise = (f" ({min(noisy, tolerated)} off-profile favourites within noise "
             f"{instance.noise:g})" if noisy else "")  # fmt: skip
    return Criterion(score=1, reason=f"{len(key)} favourites and bookings agree with and show "
                     f"every stated preference ({', '.join(prefs.categories)}){noise}"), True  # fmt: skip


# --- criterion 3: constraints --------------------------------------------------------------------


def constraints(instance: Instance, plan: str | None, source: str, pdb: Any) -> Criterion:
    """Criterion 3: the 32 checks on ``plan`` (plan JSON or an answer with ``<answer>`` tags)."""
    from travelgym.suites.behavior2trip.witness import witness_failures

    if plan is None:
        return Criterion(score=0, reason=f"no plan to judge ({source})")
    text = plan
    if "<answer>" in plan:
        text = plan.split("<answer>", 1)[1].split("</answer>", 1)[0]
    failures = witness_failures(instance, text, pdb)
    if failures:
        return Criterion(score=0, reason=f"the {source} plan fails {len(failures)} check(s): "
                         + "; ".join(failures[:3]))  # fmt: skip
    return Criterion(score=1, reason=f"the {source} plan passes every applicable check")


# --- the operation code ------------------------------------------------------------------------


def operation_of(c1: Criterion, broken: bool, c2: Criterion, fixable: bool,
                 c3: Criterion) -> Operation:  # fmt: skip
    """Figure 10's code: delete what cannot be fixed (a broken chain, an unmet plan, a
    preference no behaviour shows), mark an incomplete chain, correct a fixable preference."""
    if c3.score == 0 or (c1.score == 0 and broken) or (c2.score == 0 and not fixable):
        return "delete"
    if c1.score == 0:
        return "mark_incomplete"
    if c2.score == 0:
        return "correct_preference"
    return "no_action"


class RuleJudge:
    """The deterministic backend over one database (its catalog and check view)."""

    name = "rules"

    def __init__(self, db_path: str) -> None:
        from travelgym.suites.behavior2trip.witness import _open

        self.db_path = str(db_path)
        self.catalog = catalog_for(self.db_path)  # the one the generator and corrections use
        self.pdb = _open(self.db_path)[2]

    def assess(self, instance: Instance, chain_plan: str | None = None,
               has_chain: bool = False) -> QCRecord:  # fmt: skip
        """The record of one instance (``has_chain``: judge ``chain_plan``, else the witness)."""
        return assess_rules(instance, self.catalog, self.pdb, chain_plan, has_chain)


def assess_rules(instance: Instance, catalog: Any, pdb: Any, chain_plan: str | None = None,
                 has_chain: bool = False) -> QCRecord:  # fmt: skip
    """The rule backend's record of one instance."""
    from travelgym.suites.behavior2trip.behaviour_rules import validate_trajectory

    problems = validate_trajectory(instance.trajectory, instance_pool(instance, catalog))
    c1, broken = completeness(instance, problems)
    c2, fixable = clarity(instance, catalog)
    noise_key = [p for p in problems if p.startswith("noise_action")]
    if noise_key:  # a favourite or booking of a POI against the preferences: a conflict
        c2 = Criterion(score=0, reason="; ".join(filter(None, [c2.reason if not c2.score
                                                               else "", *noise_key[:2]])))  # fmt: skip
    source = "chain" if has_chain else ("witness" if instance.witness else "none")
    plan = chain_plan if has_chain else instance.witness
    c3 = constraints(instance, plan, source, pdb)
    record = QCRecord(instance_id=instance.instance_id, split=instance.split,
                      difficulty=instance.difficulty, backend="rules", plan_source=source,
                      completeness=c1, clarity=c2, constraints=c3,
                      operation=operation_of(c1, broken, c2, fixable, c3))  # fmt: skip
    if record.operation == "correct_preference":
        record.corrected_preferences = corrected_from_behaviour(instance, catalog)
    return record
