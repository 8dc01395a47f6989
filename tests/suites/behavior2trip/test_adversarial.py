"""No credit and no reward for broken plans (checks version 4, issue 36): plans built from the
stored witnesses of 300 test instances (100 per level) and altered the ways a policy could game
the checks (negative or zero costs, invented POIs or legs, prices other than the database's,
repeated attractions or restaurants, empty days, skeletons, a missing day) each score Final 0,
and their commonsense and preference micro rates and their training reward are no higher than
a skeleton's; the unaltered witness still passes; empty-day and skeleton plans are not
delivered."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable

import pytest

from travelgym.suites.behavior2trip.checks import PlanDB
from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances
from travelgym.suites.behavior2trip.scoring import aggregate, score_result
from travelgym.suites.behavior2trip.training import b2t_reward

PER_LEVEL = 100
MEALS = ("breakfast", "lunch", "dinner")


@pytest.fixture(scope="module")
def sample(trips_database):
    paths = ensure_instances(trips_database, trips_database.path.parent.parent, splits=("test",))
    split = load_instances(paths["test"], check=False)
    return [x for level in ("easy", "medium", "hard")
            for x in [y for y in split if y.difficulty == level][:PER_LEVEL]]  # fmt: skip


@pytest.fixture(scope="module")
def pdb(trips_db):
    db = PlanDB.open(trips_db)
    yield db
    db.close()


def _pois(days: list[dict]):
    for day in days:
        for meal in MEALS:
            if day.get(meal):
                yield day[meal]
        yield from day.get("attractions") or []
        yield from day.get("entertainment") or []
        if day.get("accommodation"):
            yield day["accommodation"]


def _bare(day: dict) -> dict:
    return {k: day[k] for k in ("day", "date", "city") if k in day}


def negative_cost(days):
    legs = [leg for day in days for leg in day.get("local_transport") or []]
    if legs:
        legs[0]["cost"] = -10_000_000
    else:
        days[0]["local_transport"] = [{"mode": "Taxi", "minutes": 10, "cost": -10_000_000}]
    return days


def zero_cost(days):
    for poi in _pois(days):
        poi["price"] = 0
    for day in days:
        for leg in day.get("intercity_transport") or []:
            leg["price"] = 0
    return days


def invented_pois(days):
    for n, poi in enumerate(_pois(days)):
        poi.pop("id", None)
        poi["name"] = f"Imaginary Place Number {n}"
    for day in days:  # local legs name their ends by the invented names
        day.pop("local_transport", None)
    return days


def invented_legs(days):
    for n, leg in enumerate(leg for day in days for leg in day.get("intercity_transport") or []):
        leg["number"] = f"ZZ{9990 + n}"
    return days


def other_price(days):
    poi = next(p for p in _pois(days) if p.get("price"))
    poi["price"] = float(poi["price"]) + 100
    return days


def repeated_attraction(days):
    first = next(a for day in days for a in day.get("attractions") or [])
    for day in days:
        for a in day.get("attractions") or []:
            a.update({k: first[k] for k in ("id", "name", "price") if k in first})
    if sum(len(day.get("attractions") or []) for day in days) == 1:  # a one-attraction trip
        days[0]["attractions"].append(copy.deepcopy(first))
    return days


def repeated_restaurant(days):
    first = days[0]["lunch"]
    for day in days[1:] or days:
        meal = "lunch" if day is not days[0] else "dinner"
        day[meal].update({k: first[k] for k in ("id", "name", "price") if k in first})
    return days


def empty_days(days):
    return [days[0], *(_bare(d) for d in days[1:])] if len(days) > 1 else [_bare(days[0])]


def skeleton(days):
    return [_bare(d) for d in days]


def one_day_removed(days):
    return days[:-1] if len(days) > 1 else [_bare(days[0])]


VARIANTS: dict[str, Callable[[list[dict]], list[dict]]] = {
    f.__name__: f
    for f in (negative_cost, zero_cost, invented_pois, invented_legs, other_price,
              repeated_attraction, repeated_restaurant, empty_days, skeleton, one_day_removed)
}  # fmt: skip


def _score(x, days, pdb):
    result = score_result(x, f"<answer>{json.dumps(days)}</answer>", pdb)
    return result, b2t_reward(result).total


@pytest.fixture(scope="module")
def scored(sample, pdb):
    out: dict[str, list] = {name: [] for name in ("witness", *VARIANTS)}
    for x in sample:
        days = json.loads(x.witness)
        out["witness"].append(_score(x, days, pdb))
        for name, alter in VARIANTS.items():
            out[name].append(_score(x, alter(copy.deepcopy(days)), pdb))
    return out


def test_the_sample_covers_every_level(sample):
    assert len(sample) == 3 * PER_LEVEL
    assert {x.difficulty for x in sample} == {"easy", "medium", "hard"}


def test_the_unaltered_witness_still_passes(scored):
    results = [r for r, _ in scored["witness"]]
    assert all(r.delivered and r.final for r in results), [
        (r.instance_id, [c.reason for c in r.checks if c.passed is False])
        for r in results if not r.final
    ][:3]  # fmt: skip


@pytest.mark.parametrize("name", [n for n in VARIANTS if n != "skeleton"])
def test_an_altered_plan_earns_no_more_than_a_skeleton(scored, name):
    results = [r for r, _ in scored[name]]
    rewards = [reward for _, reward in scored[name]]
    base = aggregate([r for r, _ in scored["skeleton"]])
    got = aggregate(results)
    assert [r.instance_id for r in results if r.final] == [], name
    assert got["final"] == 0
    assert got["C_micro"] <= base["C_micro"], (name, got, base)
    assert got["UPC_micro"] <= base["UPC_micro"], (name, got, base)
    skeleton_rewards = [reward for _, reward in scored["skeleton"]]
    assert all(a <= b for a, b in zip(rewards, skeleton_rewards, strict=True)), name


@pytest.mark.parametrize("name", ["skeleton", "empty_days", "one_day_removed"])
def test_empty_day_and_skeleton_plans_are_not_delivered(scored, name):
    results = [r for r, _ in scored[name]]
    assert not any(r.delivered for r in results), name
    assert aggregate(results)["DR"] == 0
    assert aggregate([r for r, _ in scored["witness"]])["DR"] == 100


def test_a_gated_check_keeps_its_own_reason_or_names_the_inauthentic_item(sample, pdb):
    x = sample[0]
    days = json.loads(x.witness)
    result, _ = _score(x, invented_pois(copy.deepcopy(days)), pdb)
    by_id = {c.id: c for c in result.checks}
    assert result.delivered and by_id["auth.poi"].reason.startswith("day 1")  # its own reason
    gated = [c for c in result.checks if c.passed is False and c.id != "auth.poi"]
    assert any(c.reason.startswith("not credited: day 1") for c in gated)
    assert all(c.passed is not True for c in result.checks)


def test_costs_come_from_the_database_never_from_the_plan(sample, pdb):
    from travelgym.suites.behavior2trip.checks.context import Context
    from travelgym.suites.behavior2trip.checks.personalization import trip_cost
    from travelgym.suites.behavior2trip.plan_parse import parse_plan

    for x in sample[::50]:
        days = json.loads(x.witness)
        costs = []
        for variant in (days, zero_cost(copy.deepcopy(days)), other_price(copy.deepcopy(days))):
            plan, _ = parse_plan(f"<answer>{json.dumps(variant)}</answer>")
            costs.append(trip_cost(Context(plan, x, pdb)))
        assert costs[0] == costs[1] == costs[2] > 0, x.instance_id
        plan, _ = parse_plan(f"<answer>{json.dumps(negative_cost(copy.deepcopy(days)))}</answer>")
        assert trip_cost(Context(plan, x, pdb)) >= 0
