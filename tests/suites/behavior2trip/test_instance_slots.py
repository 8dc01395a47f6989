"""Builds proportional to the request: a run of a few instances builds only those, with the same
bytes as the full build, and shows its progress on stderr."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from travelgym.suites.behavior2trip.instance_sets import load_split, set_sha256
from travelgym.suites.behavior2trip.instances import (
    SPLITS,
    ensure_instances,
    ensure_selected,
    open_store,
    select_slots,
    slot_keys,
    store_path,
)


def _with_database(trips_database, where: Path) -> Path:
    """A fresh data directory holding a copy of the session's database and nothing else."""
    suite = where / "behavior2trip"
    suite.mkdir(parents=True)
    for path in trips_database.path.parent.iterdir():
        if path.name.startswith(trips_database.path.name):  # the file and its manifest
            shutil.copyfile(path, suite / path.name)
    return where


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "travelgym.cli", *args], capture_output=True,
                          text=True, env=env, timeout=600)  # fmt: skip


def test_a_limit_run_builds_only_its_instances_byte_identical_to_the_full_build(
        trips_database, tmp_path):  # fmt: skip
    full = ensure_instances(trips_database, trips_database.path.parents[1], splits=("test",))
    full_lines = {json.loads(line)["instance_id"]: line
                  for line in full["test"].read_text(encoding="utf-8").splitlines()}  # fmt: skip
    fresh = _with_database(trips_database, tmp_path / "data")
    out = tmp_path / "runs"
    done = _cli("run", "behavior2trip", "--limit", "7", "--data-dir", str(fresh), "--out",
                str(out), "--no-progress", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_dir = out / "scripted"
    ids = [json.loads(line)["instance_id"]
           for line in (run_dir / "episodes.jsonl").read_text().splitlines()]  # fmt: skip
    keys = select_slots("test", limit=7)
    assert sorted(ids) == sorted(f"b2t-test-{d}-{i:04d}" for _, d, i in keys)
    # only the 7 slots were built: the store holds nothing else and no instance file exists
    with open_store(trips_database, fresh, 2024) as store:
        assert len(store.missing(slot_keys("test"))) == 3 * SPLITS["test"] - 7
    assert not list((fresh / "behavior2trip").glob("instances-*.jsonl"))
    # their bytes are the full build's, and the run records the identity of the whole set
    lines, _ = ensure_selected(trips_database, fresh, "test", keys)
    assert lines == [full_lines[f"b2t-test-{d}-{i:04d}"] for _, d, i in keys]
    sha = set_sha256(trips_database, 2024, "test")
    assert json.loads((run_dir / "manifest.json").read_text())["tasks_sha256"] == sha


def test_every_selection_of_a_set_records_the_same_identity(trips_database):
    """A run of 3 instances and one of the whole split record the same ``tasks_sha256`` (so a
    run resumed with a larger limit, or made from an exported dataset, is the same set), and
    the other set or split records another."""
    data_dir = trips_database.path.parents[1]
    _, few, sha_few = load_split("test", data_dir=data_dir, limit=3)
    _, whole, sha_whole = load_split("test", data_dir=data_dir)
    assert len(few) == 3 and len(whole) == 3 * SPLITS["test"] and sha_few == sha_whole
    assert sha_whole != load_split("test", data_dir=data_dir, limit=3, instances="unfiltered")[2]
    assert sha_whole != set_sha256(trips_database, 2024, "train")


def test_selections_name_their_slots():
    assert select_slots("test") is None  # the whole split
    assert select_slots("test", limit=4) == [("test", "easy", 0), ("test", "easy", 1),
                                             ("test", "medium", 0), ("test", "hard", 0)]  # fmt: skip
    assert select_slots("test", difficulty="hard", limit=2) == [("test", "hard", 0),
                                                                ("test", "hard", 1)]  # fmt: skip
    assert select_slots("test", difficulty="easy") == [("test", "easy", i) for i in range(800)]
    assert select_slots("train", ["b2t-train-medium-2999", "b2t-train-easy-0003"]) == [
        ("train", "easy", 3), ("train", "medium", 2999)]  # fmt: skip
    for bad in ("b2t-test-easy-0800", "b2t-train-easy-0001", "b2t-test-easy-1", "nope"):
        with pytest.raises(ValueError, match="unknown instance id"):
            select_slots("test", [bad])
    # an id of the other split says which split it needs; any other shows the ids' shape
    with pytest.raises(ValueError, match=r"of the test split: b2t-train-easy-0001 \(ids of the "
                                         r"train split need --split train\)$"):  # fmt: skip
        select_slots("test", ["b2t-train-easy-0001"])
    with pytest.raises(ValueError, match=r": nope \(ids look like b2t-train-easy-0000\)$"):
        select_slots("train", ["nope"])


def test_a_damaged_stored_slot_is_built_again(trips_database, tmp_path):
    import sqlite3

    keys = select_slots("test", limit=2)
    before, _ = ensure_selected(trips_database, tmp_path, "test", keys)
    conn = sqlite3.connect(store_path(tmp_path))
    conn.execute(
        "UPDATE slots SET filtered = replace(filtered, 'easy', 'hard') "
        "WHERE idx = 0 AND difficulty = 'easy'"
    )
    conn.commit()
    conn.close()
    with open_store(trips_database, tmp_path, 2024) as store:
        assert store.missing(keys) == [("test", "easy", 0)]
    after, _ = ensure_selected(trips_database, tmp_path, "test", keys)
    assert after == before


def test_a_store_that_is_not_a_database_is_built_anew(trips_database, tmp_path):
    keys = select_slots("test", limit=1)
    path = store_path(tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a database" * 400)
    lines, _ = ensure_selected(trips_database, tmp_path, "test", keys)
    full = ensure_instances(trips_database, trips_database.path.parents[1], splits=("test",))
    assert lines[0] == full["test"].read_text(encoding="utf-8").splitlines()[0]


@pytest.mark.parametrize("flag", [None, "--no-progress"])
def test_a_first_use_build_shows_its_progress_on_stderr(trips_database, tmp_path, flag):
    fresh = _with_database(trips_database, tmp_path / "data")
    env = dict(os.environ, TRAVELGYM_PROGRESS_DELAY="0")
    env.pop("TRAVELGYM_NO_PROGRESS", None)
    done = _cli("run", "behavior2trip", "--limit", "2", "--data-dir", str(fresh), "--out",
                str(tmp_path / "runs"), *([flag] if flag else []), env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = "behavior2trip: test instances, witness+QC" in done.stderr
    assert shown == (flag is None), done.stderr


def test_the_catalog_is_loaded_once_whether_its_path_is_text_or_a_path(
    trips_database, tmp_path, monkeypatch
):
    """A slot build names the database by text, the quality control by either: one file is one
    catalog (each load costs a quarter of a second, and a flip-flop reloaded it per slot)."""
    from travelgym.suites.behavior2trip.behaviour_pool import catalog_for

    path = Path(trips_database.path)
    first = catalog_for(str(path))
    assert catalog_for(path) is first and catalog_for(str(path)) is first
    link = tmp_path / "linked.sqlite"
    link.symlink_to(path)
    assert catalog_for(link) is first  # the same file through a link
    monkeypatch.chdir(path.parent)
    assert catalog_for(path.name) is first  # and named relatively


def test_a_slot_is_the_same_whenever_the_cyclic_collector_runs(trips_database, monkeypatch):
    """Building a slot collects cycles less often and puts the collector's settings back; the
    slot does not depend on when cycles are collected (the search's memos keyed by ids hold
    the objects those ids name)."""
    import gc

    from travelgym.suites.behavior2trip import instance_slots

    db_path, key = str(trips_database.path), ("test", "hard", 3)
    build, during = instance_slots._build_slot, []

    def watched(*args):
        during.append(gc.get_threshold()[0])
        return build(*args)

    monkeypatch.setattr(instance_slots, "_build_slot", watched)
    before = gc.get_threshold()
    relaxed = instance_slots.build_slot(db_path, 2024, key)
    assert gc.get_threshold() == before and during == [max(before[0], instance_slots.GC_YOUNG)]
    monkeypatch.setattr(instance_slots, "GC_YOUNG", 1)  # the collector's own setting
    try:
        gc.set_threshold(50, 2, 2)  # cycles collected far more often than by default
        eager = instance_slots.build_slot(db_path, 2024, key)
    finally:
        gc.set_threshold(*before)
    assert during[-1] == 50 and eager.digest() == relaxed.digest()


def _on_seed(db, seed: int):
    """``db`` as a database of another seed names it (same file: the store tells them apart by
    their metadata)."""
    from types import SimpleNamespace

    return SimpleNamespace(path=db.path, metadata={**db.metadata, "seed": str(seed)})


def test_runs_on_other_seeds_keep_each_others_slots(trips_database, tmp_path):
    """A run on another database seed (or instance seed) opens a store of its own: opening it
    neither evicts the default set's slots nor, mid-build, removes the rows a concurrent run of
    the default set has just stored (which crashed that run)."""
    keys = select_slots("test", limit=2)
    before, _ = ensure_selected(trips_database, tmp_path, "test", keys)
    other = _on_seed(trips_database, 1)
    assert store_path(tmp_path, db_seed=1) != store_path(tmp_path)
    assert store_path(tmp_path, seed=7) not in (store_path(tmp_path),
                                                store_path(tmp_path, db_seed=1))  # fmt: skip
    ensure_selected(other, tmp_path, "test", keys[:1])
    with open_store(trips_database, tmp_path, 2024) as store:
        assert store.missing(keys) == []  # nothing of the default set was forgotten
    with open_store(other, tmp_path, 2024) as store:
        assert store.path == store_path(tmp_path, db_seed=1) and store.missing(keys) == keys[1:]
    assert ensure_selected(trips_database, tmp_path, "test", keys)[0] == before


def _fake_builds(monkeypatch, calls: list[list]):
    """Slot builds that take no time: each key's instances are its own name."""
    from travelgym.suites.behavior2trip import instance_slots

    def build_slots(db_path, seed, keys, workers=None, label="", noise=0.0, done=0):
        calls.append(list(keys))
        for key in keys:
            yield instance_slots.Slot(key, f"u{key}", f"f{key}", {})

    monkeypatch.setattr(instance_slots, "build_slots", build_slots)


def test_slots_removed_during_a_build_are_built_again(trips_database, tmp_path, monkeypatch):
    """``fill`` returns only when every slot asked for is stored: rows another process removes
    meanwhile are built again, and a store that keeps losing them is a one-line error."""
    from travelgym.core.errors import UserError
    from travelgym.suites.behavior2trip.instance_slots import FILL_ROUNDS, SlotStore, fill

    keys = select_slots("test", limit=3)
    calls: list[list] = []
    _fake_builds(monkeypatch, calls)
    with open_store(trips_database, tmp_path, 2024) as store:
        put, lost = store.put, []

        def put_then_lose_one(slots):  # another process drops the first slot once
            put(slots)
            if slots and not lost:
                lost.append(slots[0].key)
                store.drop("test")

        monkeypatch.setattr(store, "put", put_then_lose_one)
        assert fill(store, str(trips_database.path), 2024, keys) == 6
        assert calls == [keys, keys] and store.missing(keys) == []
        # a store whose rows vanish after every round
        monkeypatch.setattr(store, "put", lambda slots: (put(slots), store.drop("test")))
        store.drop("test")
        calls.clear()
        with pytest.raises(UserError, match="another process keeps removing") as caught:
            fill(store, str(trips_database.path), 2024, keys)
        assert len(calls) == FILL_ROUNDS and "\n" not in str(caught.value)
    assert isinstance(store, SlotStore)


def test_writing_the_instance_files_shows_its_progress(trips_database, tmp_path, monkeypatch):
    """Assembling a split's files from its stored slots (about 10 s for the train split) is a
    step with a bar of its own, counted to its end; the files are the same bytes."""
    from travelgym import progress

    seen: list[tuple[str, str, int | None, int]] = []

    class Recorded(progress.Step):
        def __init__(self, desc, total, unit, initial=0):
            self.desc, self.unit, self.total, self.count, self._bar = (
                desc,
                unit,
                total,
                initial,
                None,
            )

        def advance(self, n=1):
            self.count += n

        def close(self):
            seen.append((self.desc, self.unit, self.total, self.count))

    cached = trips_database.path.parents[1]
    fresh = _with_database(trips_database, tmp_path / "data")
    shutil.copyfile(store_path(cached), store_path(fresh))
    monkeypatch.setattr(progress, "Step", Recorded)
    written = ensure_instances(trips_database, fresh, splits=("test",))["test"]
    full = ensure_instances(trips_database, cached, splits=("test",))["test"]
    assert written.read_bytes() == full.read_bytes()
    # the bar counts slot reads, and says so: "14400/14400 slot" read as 14,400 instances
    label = "behavior2trip: test files (6 passes)"
    files = [s for s in seen if s[0].startswith("behavior2trip: test files")]
    assert files == [(label, "reads", 6 * 3 * SPLITS["test"], 6 * 3 * SPLITS["test"])]


@pytest.mark.parametrize("text", ["[]", "{garbage"])
def test_a_damaged_instance_manifest_is_built_again(trips_database, tmp_path, text):
    """A manifest that is no JSON object crashed ``tasks`` with an AttributeError (or stopped
    it without naming the file): it is a cache, assembled again from the stored slots."""
    cached = trips_database.path.parents[1]
    fresh = _with_database(trips_database, tmp_path / "data")
    shutil.copyfile(store_path(cached), store_path(fresh))
    written = ensure_instances(trips_database, fresh, splits=("test",))["test"]
    from travelgym.datafiles import manifest_path, read_manifest

    before = read_manifest(written)
    manifest_path(written).write_text(text)
    again = ensure_instances(trips_database, fresh, splits=("test",))["test"]
    assert read_manifest(again) == before
    assert again.read_bytes() == (cached / "behavior2trip" / again.name).read_bytes()


def test_an_interrupted_build_keeps_every_slot_it_built(trips_database, tmp_path, monkeypatch):
    """Slots are stored 64 at a time: Ctrl-C dropped up to 63 built ones (the bar at 144, the
    store holding 128). Every slot built before the stop is stored."""
    from travelgym.suites.behavior2trip import instance_slots
    from travelgym.suites.behavior2trip.instance_slots import fill

    keys = select_slots("test", limit=100)

    def stopped_after_70(db_path, seed, keys, workers=None, label="", noise=0.0, done=0):
        for n, key in enumerate(keys):
            if n == 70:
                raise KeyboardInterrupt
            yield instance_slots.Slot(key, f"u{key}", f"f{key}", {})

    monkeypatch.setattr(instance_slots, "build_slots", stopped_after_70)
    with open_store(trips_database, tmp_path, 2024) as store:
        with pytest.raises(KeyboardInterrupt):
            fill(store, str(trips_database.path), 2024, keys)
        assert store.missing(keys) == keys[70:]
