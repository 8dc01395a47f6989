"""Satisfiable by construction: every generated instance carries a witness plan that passes all
of its applicable checks; a request without one is drawn again with the same trip length and
party, then the profile; the witness is hidden from every agent and every public view."""

from __future__ import annotations

import copy
import json

import pytest

from travelgym.suites.behavior2trip import witness as witness_module
from travelgym.suites.behavior2trip.agents.base import TripRequest
from travelgym.suites.behavior2trip.behaviour_pool import PoiCatalog
from travelgym.suites.behavior2trip.checks import run_checks
from travelgym.suites.behavior2trip.instances import (
    ensure_instances,
    generate_instance,
    load_instances,
)
from travelgym.suites.behavior2trip.instruction import make_instruction
from travelgym.suites.behavior2trip.listing import public_record
from travelgym.suites.behavior2trip.plan_parse import parse_plan
from travelgym.suites.behavior2trip.profiles import rng_for
from travelgym.suites.behavior2trip.witness import WITNESS_ATTEMPTS, witness_failures


@pytest.fixture(scope="module")
def test_split(trips_database):
    paths = ensure_instances(trips_database, trips_database.path.parent.parent, splits=("test",))
    return load_instances(paths["test"], check=False)


@pytest.fixture(scope="module")
def sample(test_split):
    """20 instances of each level, spread over the split."""
    return [x for level in ("easy", "medium", "hard")
            for x in [y for y in test_split if y.difficulty == level][7::40][:20]]  # fmt: skip


@pytest.fixture(scope="module")
def catalog(trips_db):
    return PoiCatalog.from_database(trips_db)


def test_every_stored_witness_passes_every_applicable_check(sample, pdb):
    assert len(sample) == 60
    for x in sample:
        assert x.witness, x.instance_id
        assert witness_failures(x, x.witness, pdb) == [], x.instance_id
        plan, problems = parse_plan(f"<answer>{x.witness}</answer>")
        assert plan is not None and problems == []
        results = run_checks(plan, x, pdb)
        assert len(results) == 32 and all(r.passed is not False for r in results)
        # it is a whole trip: every day, the destination's hotel, legs there and back
        assert len(plan.days) == x.instruction.days
        assert sum(r.passed is True for r in results) >= 20


@pytest.mark.slow
def test_every_test_instance_has_the_oracles_plan_as_a_passing_witness(test_split, pdb):
    """On the whole test split (2,400 instances) the stored witness passes every applicable
    check and is the oracle's plan of the instance as stored (after quality control's
    corrections): the oracle, which plans through the tools and never reads the witness,
    passes every test instance (its agent's plan is ``oracle_plan``'s: test_oracle.py)."""
    from travelgym.suites.behavior2trip.agents.oracle import oracle_plan

    assert len(test_split) == 2400
    for x in test_split:
        assert x.witness and witness_failures(x, x.witness, pdb) == [], x.instance_id
        blind = x.model_copy(update={"witness": None})
        # through recorded tool calls, as the oracle agent plans; one tools context for all
        # (its caches are of a read-only database: a third of the time of one per instance)
        planned = oracle_plan(blind, pdb.conn, context=pdb.ctx)
        assert planned is not None and json.loads(planned) == json.loads(x.witness), x.instance_id


def test_the_witness_is_the_oracles_plan_and_is_reproducible(sample, trips_db):
    for x in sample[::20]:
        assert witness_module.find_witness(x, str(trips_db)) == x.witness


def test_a_plan_failing_a_check_is_no_witness(sample, pdb):
    x = sample[0]
    days = json.loads(x.witness)
    del days[-1]["dinner"]
    failures = witness_failures(x, json.dumps(days), pdb)
    assert any(f.startswith("reason.complete_meals") for f in failures)
    assert witness_failures(x, None, pdb)  # no plan: everything fails


def test_a_redrawn_request_keeps_the_trip_length_and_party(catalog, sample):
    x = sample[3]
    d = rng_for(99, "redraw")
    first = make_instruction(x.profile, x.trajectory, catalog, d)
    for _ in range(12):
        again = make_instruction(x.profile, x.trajectory, catalog, d, like=first)
        assert (again.days, again.companions, again.travellers, again.rooms) == (
            first.days, first.companions, first.travellers, first.rooms)  # fmt: skip
        # the wording states the request's own destination, budget and length
        assert again.destination_city in again.text and f"{again.budget_cny:,}" in again.text
        assert f"{again.days}" in again.text


def test_requests_without_a_witness_are_drawn_again_then_the_profile(catalog, monkeypatch):
    """With the first ``WITNESS_ATTEMPTS + 2`` witness searches failing, the first profile's
    requests are all rejected, the profile is drawn again, and its third request is kept."""
    real = witness_module.find_witness
    calls = []

    def failing_at_first(instance, db_path):
        calls.append(instance.instruction)
        return None if len(calls) <= WITNESS_ATTEMPTS + 2 else real(instance, db_path)

    monkeypatch.setattr(witness_module, "find_witness", failing_at_first)
    rejections: dict[str, int] = {}
    got = generate_instance(catalog, 2024, "test", "easy", 5, rejections)
    assert rejections["witness_profile"] >= 1
    assert rejections["witness"] >= WITNESS_ATTEMPTS + 2
    first_profile = calls[:WITNESS_ATTEMPTS]
    assert len({(r.days, r.companions) for r in first_profile}) == 1  # same length and party
    assert len({(r.destination_city, r.start_date) for r in first_profile}) > 1  # redrawn
    assert got.witness and got.instruction == calls[-1]


def test_a_catalog_built_in_memory_cannot_generate(catalog):
    detached = copy.copy(catalog)
    detached.source = None
    with pytest.raises(ValueError, match="from_database"):
        generate_instance(detached, 2024, "test", "easy", 0)


def test_no_agent_or_public_view_sees_the_witness(sample):
    x = sample[0]
    marker = x.witness[:200]
    assert "witness" not in TripRequest.model_fields
    assert marker not in TripRequest.of(x).model_dump_json()
    record = public_record(x).model_dump_json()
    assert "witness" not in record and marker not in record
    assert "witness" not in repr(x)
