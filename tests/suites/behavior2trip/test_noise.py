"""``--noise``: harder Behavior2Trip behaviour (off-profile favourites, drifting sessions) in
files of their own, the default files unchanged (docs/behavior2trip/instances.md)."""

from __future__ import annotations

import json
import os
import re

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.suites.behavior2trip import behaviour, instances
from travelgym.suites.behavior2trip.behaviour_pool import catalog_for
from travelgym.suites.behavior2trip.behaviour_rules import validate_trajectory
from travelgym.suites.behavior2trip.instance_model import Instance, instance_pool
from travelgym.suites.behavior2trip.instance_slots import build_slot
from travelgym.suites.behavior2trip.noise import check_noise, noise_tag
from travelgym.suites.behavior2trip.preferences import poi_matches
from travelgym.suites.behavior2trip.quality import assess_rules
from travelgym.suites.behavior2trip.witness import _open, witness_failures

SEED = instances.DEFAULT_INSTANCE_SEED
KEYS = [("test", d, i) for d in ("easy", "medium", "hard") for i in range(3)]


@pytest.fixture(scope="module")
def noisy(trips_db) -> list[Instance]:
    """The filtered instances of :data:`KEYS` at noise 0.3."""
    return [Instance.model_validate_json(build_slot(str(trips_db), SEED, k, 0.3).filtered)
            for k in KEYS]  # fmt: skip


def _off_profile(instance: Instance, catalog) -> list:
    prefs = instance.profile.preferences
    return [a for a in instance.trajectory if not poi_matches(prefs, catalog.pois[a.poi_id])]


def _drifting_sessions(instance: Instance, catalog) -> list[int]:
    """Sessions of off-profile clicks only, in a city no other session browses."""
    off = {id(a) for a in _off_profile(instance, catalog)}
    sessions: dict[int, list] = {}
    for a in instance.trajectory:
        sessions.setdefault(a.session, []).append(a)
    return [s for s, acts in sessions.items()
            if all(a.action_type == "click" and id(a) in off for a in acts)
            and not any(b.city == acts[0].city for t, bs in sessions.items() if t != s for b in bs)]  # fmt: skip


def test_noise_zero_builds_the_default_files_bytes(trips_database, trips_db, monkeypatch):
    # at noise 0 none of the noise code runs (so it draws nothing more than before)...
    def refuse(*args, **kwargs):
        raise AssertionError("noise code ran at noise 0")

    monkeypatch.setattr(behaviour, "_add_off_profile", refuse)
    monkeypatch.setattr(behaviour, "_off_profile_favourites", refuse)
    keys = [("test", d, i) for d in ("easy", "medium", "hard") for i in (0, 7)]
    slots = {f"b2t-test-{d}-{i:04d}": build_slot(str(trips_db), SEED, (s, d, i), 0.0)
             for s, d, i in keys}  # fmt: skip
    # ...and the slots are the lines of the default files the shared data holds
    data_dir = trips_db.parent.parent
    for which in ("filtered", "unfiltered"):
        path = instances.instances_path("test", data_dir, "small", which)
        assert path.name == f"instances-small-v2-test{'-unfiltered' * (which != 'filtered')}.jsonl"
        found = {}
        leading = re.compile(r'\{"instance_id":"([^"]*)"')
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                iid = leading.match(line).group(1)
                if iid in slots:
                    found[iid] = line.rstrip("\n")
        assert found == {iid: getattr(slot, which) for iid, slot in slots.items()}
        assert all('"noise"' not in line for line in found.values())
    # the default set's names and identity carry no noise
    assert instances.store_path(data_dir).name == "instances-small-v2.slots.sqlite"
    assert "noise" not in instances._expected(trips_database, SEED, "test", 0.0)


def test_noisy_instances_favour_off_profile_pois_and_drift(noisy, trips_db):
    catalog = catalog_for(trips_db)
    favourites = [a for x in noisy for a in x.trajectory if a.action_type == "add_to_favorites"]
    off = [
        a for x in noisy for a in _off_profile(x, catalog) if a.action_type == "add_to_favorites"
    ]
    assert len(off) / len(favourites) >= 0.1, (len(off), len(favourites))
    assert all(x.noise == 0.3 for x in noisy)
    drifting = [s for x in noisy for s in _drifting_sessions(x, catalog)]
    sessions = sum(len({a.session for a in x.trajectory}) for x in noisy)
    assert len(drifting) / sessions >= 0.1, (len(drifting), sessions)
    # bookings stay on the preferences (the history comes from them)
    assert not [a for x in noisy for a in _off_profile(x, catalog) if a.action_type == "book"]


def test_noisy_instances_are_valid_at_their_level_and_have_a_witness(noisy, trips_db):
    catalog = catalog_for(trips_db)
    pdb = _open(str(trips_db))[2]
    for x in noisy:
        assert validate_trajectory(x.trajectory, instance_pool(x, catalog)) == [], x.instance_id
        assert witness_failures(x, x.witness, pdb) == [], x.instance_id
        record = assess_rules(x, catalog, pdb)
        assert record.operation == "no_action" and record.clarity.score == 1, record


def test_the_rules_are_relaxed_by_the_level_not_dropped(noisy, trips_db):
    catalog = catalog_for(trips_db)
    pdb = _open(str(trips_db))[2]
    x = next(x for x in noisy if any(a.action_type == "add_to_favorites"
                                     for a in _off_profile(x, catalog)))  # fmt: skip
    strict = x.model_copy(update={"noise": 0.0})
    rules = {p.split(":")[0] for p in validate_trajectory(strict.trajectory,
                                                          instance_pool(strict, catalog))}  # fmt: skip
    assert "noise_action" in rules  # an off-profile favourite is refused at noise 0
    assert assess_rules(strict, catalog, pdb).clarity.score == 0  # and QC sees a conflict
    # at its level, a booking of an off-profile POI is still refused
    i, fav = next((i, a) for i, a in enumerate(x.trajectory) if a.action_type ==
                  "add_to_favorites" and a in _off_profile(x, catalog))  # fmt: skip
    booked = [*x.trajectory[: i + 1], fav.model_copy(update={"action_type": "book"}),
              *x.trajectory[i + 1 :]]  # fmt: skip
    problems = validate_trajectory(booked, instance_pool(x, catalog))
    assert any(p.startswith("noise_action") and "book" in p for p in problems), problems
    # and the share of off-profile favourites is bounded by the level
    low = x.model_copy(update={"noise": 0.01})
    favourites = sum(a.action_type == "add_to_favorites" for a in x.trajectory)
    off = sum(a.action_type == "add_to_favorites" for a in _off_profile(x, catalog))
    problems = validate_trajectory(low.trajectory, instance_pool(low, catalog))
    assert (off > 1) == any(p.startswith("noise_action") for p in problems), (off, favourites)
    # drifting sessions too: at noise 0 they break the noise rules
    y = next(y for y in noisy if _drifting_sessions(y, catalog))
    plain = y.model_copy(update={"noise": 0.0})
    rules = {p.split(":")[0] for p in validate_trajectory(plain.trajectory,
                                                          instance_pool(plain, catalog))}  # fmt: skip
    assert rules & {"noise_clustered", "noise_budget"}, rules


def test_noise_levels_are_checked_and_named():
    assert check_noise("0.3") == 0.3 and noise_tag(0.3) == "noise0.3" and noise_tag(1) == "noise1"
    assert noise_tag(0) == ""
    for bad in ("x", -0.1, 1.5, 0.333, float("nan"), True):
        with pytest.raises(ValueError, match="noise"):
            check_noise(bad)


@pytest.mark.parametrize("value", ["abc", "-0.2", "1.5", "0.125"])
def test_cli_refuses_a_bad_noise_level(value):
    result = CliRunner().invoke(main, ["run", "behavior2trip", f"--noise={value}", "--limit", "1"])
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("Error:")]
    assert "--noise" in line


def test_cli_refuses_noise_for_another_suite():
    result = CliRunner().invoke(main, ["run", "compass", "--noise", "0.3", "--limit", "1"])
    assert result.exit_code == 2 and "--noise applies to behavior2trip only" in result.output


def test_noisy_files_and_runs_carry_the_level(trips_database, trips_db, tmp_path, monkeypatch):
    data_dir = tmp_path / "data"
    (data_dir / "behavior2trip").mkdir(parents=True)
    os.link(trips_db, data_dir / "behavior2trip" / trips_db.name)  # only ever read
    monkeypatch.setitem(instances.SPLITS, "test", 2)  # a two-per-level split for the files
    paths = instances.ensure_instances(trips_database, data_dir, splits=("test",), noise=0.3)
    assert paths["test"].name == "instances-small-v2-test-noise0.3.jsonl"
    meta = json.loads(paths["test"].with_suffix(".manifest.json").read_text())
    assert meta["noise"] == 0.3 and meta["count"] == 6
    names = sorted(p.name for p in (data_dir / "behavior2trip").iterdir())
    assert "instances-small-v2-noise0.3.slots.sqlite" in names
    assert not [n for n in names if n.startswith("instances-small-v2-test.")]  # default untouched
    result = CliRunner().invoke(main, ["run", "behavior2trip", "--agent", "scripted", "--noise",
                                       "0.3", "--limit", "3", "--data-dir", str(data_dir),
                                       "--out", str(tmp_path / "runs")])  # fmt: skip
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "runs" / "scripted" / "manifest.json").read_text())
    assert manifest["noise"] == 0.3
    from travelgym.suites.behavior2trip.instance_sets import set_sha256

    assert manifest["tasks_sha256"] == set_sha256(trips_database, SEED, "test", noise=0.3)
    assert manifest["tasks_sha256"] != set_sha256(trips_database, SEED, "test")
    # a run on noisy instances is never resumed on the default ones
    again = CliRunner().invoke(main, ["run", "behavior2trip", "--agent", "scripted", "--limit",
                                      "3", "--data-dir", str(data_dir), "--out",
                                      str(tmp_path / "runs"), "--resume"])  # fmt: skip
    assert again.exit_code != 0 and "noise" in again.output, again.output
