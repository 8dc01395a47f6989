"""The ``oracle`` agent: it plans from the hidden profile through the recorded tools (never from
the stored witness), passes every one of 60 instances across the levels (the instances are
satisfiable by construction), beats the baseline that infers the preferences, and no other
agent is handed the profile."""

from __future__ import annotations

import asyncio
import json

import pytest

from travelgym.db import connect_readonly
from travelgym.suites.behavior2trip.agents.base import TripRequest
from travelgym.suites.behavior2trip.agents.oracle import OracleTripAgent, preferences_of
from travelgym.suites.behavior2trip.agents.scripted import ScriptedTripAgent
from travelgym.suites.behavior2trip.episode import run_trip_episode
from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances
from travelgym.suites.behavior2trip.plan_parse import _answer_body


@pytest.fixture(scope="module")
def sample(trips_database):
    path = ensure_instances(trips_database, trips_database.path.parent.parent, splits=("test",))
    instances = load_instances(path["test"])
    return [x for level in ("easy", "medium", "hard")
            for x in [y for y in instances if y.difficulty == level][::40][:20]]  # fmt: skip


@pytest.fixture(scope="module")
def conn(trips_db):
    c = connect_readonly(trips_db)
    yield c
    c.close()


def _episodes(agent_class, instances, conn):
    async def run_all():
        return [await run_trip_episode(x, agent_class(), conn) for x in instances]

    return asyncio.run(run_all())


@pytest.mark.slow
def test_the_oracle_passes_all_60_through_the_tools_without_the_witness(sample, conn):
    assert len(sample) == 60 and {x.difficulty for x in sample} == {"easy", "medium", "hard"}
    blind = [x.model_copy(update={"witness": None}) for x in sample]  # nothing to read
    oracle = _episodes(OracleTripAgent, blind, conn)
    for e, x in zip(oracle, sample, strict=True):
        assert e.termination == "answered" and e.error is None and e.invalid_actions == 0
        used = {c.name for s in e.steps for c in s.tool_calls}
        assert {"AccommodationSearch", "RestaurantSearch", "AttractionSearch", "WeatherSearch",
                "MapGuide"} <= used  # fmt: skip
        failed = [c["id"] for c in e.score["checks"] if c["passed"] is False]
        assert e.score["final"] and failed == [], (x.instance_id, failed)
        assert x.witness[:200] not in e.model_dump_json()  # no episode line carries it
        # ... yet it plans the witness: the stored witness is the oracle's plan of the instance
        # (test_witness.py checks that plan on the whole test split)
        body, _ = _answer_body(e.final_answer)
        assert json.loads(body) == json.loads(x.witness), x.instance_id
    scripted = _episodes(ScriptedTripAgent, sample[::3], conn)
    assert sum(bool(e.score["final"]) for e in scripted) < len(scripted)


def test_the_oracle_keeps_the_preferred_mode_and_seat(sample, conn):
    """Where the profile states an intercity mode and seat, every leg the oracle books is of
    them (a leg of another mode is never its way out)."""
    stated = [x for x in sample if x.profile.preferences.transportation_preferences]
    assert stated
    for e, x in zip(_episodes(OracleTripAgent, stated, conn), stated, strict=True):
        checks = {c["id"]: c for c in e.score["checks"]}
        for check_id in ("pref.transport_mode", "pref.seat_class"):
            c = checks[check_id]
            assert c["passed"] is not False or c["reason"].startswith("incomplete plan"), (
                x.instance_id,
                c,
            )


def test_only_the_oracle_is_handed_the_profile(sample, conn):
    seen = {}

    class Spy:
        name = "spy"

        async def solve(self, request, env, *extra, **named):
            seen.update(extra=extra, named=named, request=request)
            return None

    asyncio.run(run_trip_episode(sample[0], Spy(), conn))
    assert seen["extra"] == () and seen["named"] == {}
    assert "profile" not in TripRequest.model_fields and isinstance(seen["request"], TripRequest)

    async def without_profile():
        return await OracleTripAgent().solve(TripRequest.of(sample[0]), None)

    with pytest.raises(ValueError, match="hidden profile"):
        asyncio.run(without_profile())


def test_preferences_of_maps_every_stated_preference(sample):
    for x in sample:
        p, got = x.profile.preferences, preferences_of(x.profile.preferences)
        if p.hotel_preferences:
            assert got.hotel["star_rating"] == p.hotel_preferences.star_requirement
            assert got.hotel.get("amenities", []) == p.hotel_preferences.essential_facilities
        else:
            assert got.hotel is None
        if p.attraction_preferences:
            a = p.attraction_preferences
            assert got.attraction["attraction_type"] == a.preferred_attraction_types
            assert got.attraction.get("walk_tolerance") == (
                [a.walking_tolerance] if a.walking_tolerance else None
            )
        if p.dining_requirements:
            d = p.dining_requirements
            assert got.restaurant["cuisine"] == d.cuisine_preferences
            assert got.restaurant.get("price_level") == ([d.price_level] if d.price_level else None)
        if p.transportation_preferences:
            t = p.transportation_preferences
            assert (got.mode, got.seat) == (t.intercity_transport, t.seat_class)
        else:
            assert got.mode is None and got.seat is None
        assert got.booked == set()  # nothing is avoided


def test_run_takes_the_oracle_spec(trips_database, tmp_path):
    import json

    from click.testing import CliRunner

    from travelgym.cli import main

    data = str(trips_database.path.parent.parent)
    done = CliRunner().invoke(main, ["run", "behavior2trip", "--agent", "oracle", "--limit", "2",
                                     "--out", str(tmp_path), "--no-progress", "--json",
                                     "--data-dir", data])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert json.loads(done.output[done.output.index("{") :])["oracle"]["overall"]["DR"] == 100.0
    refused = CliRunner().invoke(main, ["run", "behavior2trip", "--agent", "oracle:x",
                                        "--out", str(tmp_path), "--data-dir", data])  # fmt: skip
    assert refused.exit_code == 2 and "oracle" in refused.output
