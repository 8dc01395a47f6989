"""The 32 rule-based constraints of Behavior2Trip (paper Table 8) and :func:`run_checks`.

Groups: C (commonsense) = Format (1) + Authenticity (4) + Reasonableness (15) + Information
Richness (2) = 22 checks, always applicable; UPC (user preference) = Personalization (10),
each applicable only when the hidden profile states the preference (see
``docs/behavior2trip/constraints.md``).
"""

from __future__ import annotations

import os
import sqlite3

from travelgym.suites.behavior2trip.checks import (
    format_auth,
    personalization,
    reason_day,
    reason_time,
    richness,
)
from travelgym.suites.behavior2trip.checks.base import (
    REGISTRY,
    Check,
    CheckResult,
    fail,
    not_applicable,
)
from travelgym.suites.behavior2trip.checks.completeness import NEEDS, completeness, gate
from travelgym.suites.behavior2trip.checks.context import Context
from travelgym.suites.behavior2trip.checks.credit import NOT_CREDITED, uncredited, undelivered
from travelgym.suites.behavior2trip.checks.data import PlanDB
from travelgym.suites.behavior2trip.instance_model import Instance
from travelgym.suites.behavior2trip.plan import Plan

_MODULES = (format_auth, reason_day, reason_time, personalization, richness)  # register checks

# Table 8 order
CHECK_IDS: tuple[str, ...] = (
    "format.json",
    "auth.poi", "auth.major_transport", "auth.local_transport", "auth.business_hours",
    "reason.complete_meals", "reason.non_duplicate_restaurants", "reason.meal_times",
    "reason.daily_accommodation", "reason.accommodation_time", "reason.no_midnight_travel",
    "reason.no_attractions_after_late_arrival", "reason.local_transport_limit",
    "reason.weather_city_info", "reason.at_least_one_attraction", "reason.attraction_limit",
    "reason.no_time_conflicts", "reason.time_range", "reason.inter_attraction_transport",
    "reason.no_long_gaps",
    "pref.hotel_star", "pref.hotel_amenities", "pref.attraction_type", "pref.walking_tolerance",
    "pref.cuisine", "pref.price_level", "pref.dining_environment", "pref.transport_mode",
    "pref.seat_class", "pref.budget",
    "info.sufficiency", "info.richness",
)  # fmt: skip
CHECKS: tuple[Check, ...] = tuple(REGISTRY[i] for i in CHECK_IDS)
if set(NEEDS) != set(CHECK_IDS):
    raise RuntimeError("every check must name its subjects in checks.completeness.NEEDS")
# A change of any check's rule, threshold or applicability is a new version: runs scored with
# another version are refused, never silently re-scored (docs/behavior2trip/constraints.md).
# 3: MapGuide drives expressways beyond 10 km; unpriced items fail the budget. 4: delivery needs
# every day's slots; inauthentic or repeated items gate every check (checks.credit)
CHECKS_VERSION = "4"
C_IDS = tuple(c.id for c in CHECKS if c.group == "C")
UPC_IDS = tuple(c.id for c in CHECKS if c.group == "UPC")
NOT_DELIVERED = "no plan delivered"


def run_checks(plan: Plan | None, instance: Instance,
               db: PlanDB | sqlite3.Connection | str | os.PathLike[str]) -> list[CheckResult]:  # fmt: skip
    """The 32 results for a plan (``None``: not delivered, every applicable check fails), in
    :data:`CHECK_IDS` order. ``db`` is a :class:`PlanDB`, a read-only connection or a path."""
    return check_plan(plan, instance, db)[1]


def check_plan(plan: Plan | None, instance: Instance,
               db: PlanDB | sqlite3.Connection | str | os.PathLike[str]) -> tuple[bool, list[CheckResult]]:  # fmt: skip
    """Whether the plan counts as delivered (every day with its required slots,
    :mod:`~travelgym.suites.behavior2trip.checks.credit`) and its 32 results."""
    if isinstance(db, PlanDB):
        return _run(plan, instance, db)
    owned = not isinstance(db, sqlite3.Connection)
    pdb = PlanDB.open(db) if owned else PlanDB(db)
    try:
        return _run(plan, instance, pdb)
    finally:
        if owned:
            pdb.close()


def _run(plan: Plan | None, instance: Instance, db: PlanDB) -> tuple[bool, list[CheckResult]]:
    ctx, broken, gaps, gated = None, NOT_DELIVERED, {}, []
    if plan is not None:
        try:
            ctx = Context(plan, instance, db)
            gaps = completeness(ctx)
            if missing := undelivered(gaps):
                ctx, broken = None, f"{NOT_DELIVERED}: {missing}"
            else:
                gated = uncredited(ctx)
        except Exception as exc:  # noqa: BLE001 - a plan the resolver chokes on fails, not crashes
            ctx, broken = None, f"plan could not be resolved: {type(exc).__name__}: {exc}"
    out = []
    for c in CHECKS:
        reason = c.applies(instance) if c.applies else None
        if reason:
            out.append(c.result(not_applicable(reason)))
            continue
        if ctx is None:
            out.append(c.result(fail(broken)))
            continue
        if missing := gate(c.id, gaps):
            out.append(c.result(fail(missing)))
            continue
        try:
            v = c.fn(ctx)
        except Exception as exc:  # noqa: BLE001 - reported per check; tests keep this path empty
            v = fail(f"check error: {type(exc).__name__}: {exc}")
        if gated and v.passed:  # credit only for an authentic plan: the check keeps no pass
            v = fail([f"{NOT_CREDITED}: {gated[0]}", *gated[1:]])
        out.append(c.result(v))
    return ctx is not None, out


__all__ = ["CHECKS", "CHECKS_VERSION", "CHECK_IDS", "C_IDS", "UPC_IDS", "Check", "CheckResult", "PlanDB",
           "check_plan", "run_checks"]  # fmt: skip
