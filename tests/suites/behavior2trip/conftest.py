"""Fixtures of the Behavior2Trip check tests: the small database's check view and a plan
that passes all 32 checks (``test_checks.build_case``) with a budget it just meets."""

from __future__ import annotations

import pytest

from tests.suites.behavior2trip.test_checks import (
    BUDGET_SLACK,
    _instruction,
    answer_of,
    build_case,
)
from travelgym.suites.behavior2trip.checks import PlanDB
from travelgym.suites.behavior2trip.checks.context import Context
from travelgym.suites.behavior2trip.checks.personalization import trip_cost
from travelgym.suites.behavior2trip.plan_parse import parse_plan


@pytest.fixture(scope="module")
def pdb(trips_db):
    db = PlanDB.open(trips_db)
    yield db
    db.close()


@pytest.fixture(scope="module")
def case(trips_db, pdb):
    days, instance, rows = build_case(trips_db)
    plan, _ = parse_plan(answer_of(days))
    cost = trip_cost(Context(plan, instance, pdb))
    budget = int(cost) + BUDGET_SLACK  # a budget the plan just meets
    instance = _instruction(instance, budget_cny=budget)
    return days, instance, rows
