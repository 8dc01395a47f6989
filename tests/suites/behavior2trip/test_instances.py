"""The 11,400 instances: files and manifests, every trajectory re-validated against the database
and its hidden profile, Table 2 statistics within 15 %, determinism, instructions."""

from __future__ import annotations

import datetime as dt

import pytest

from travelgym.datafiles import read_manifest
from travelgym.suites.behavior2trip.behaviour_pool import PoiCatalog
from travelgym.suites.behavior2trip.behaviour_rules import validate_trajectory
from travelgym.suites.behavior2trip.checks import CHECKS
from travelgym.suites.behavior2trip.instance_stats import (
    MEASURES,
    PAPER_TABLE2,
    split_stats,
)
from travelgym.suites.behavior2trip.instances import (
    INSTANCE_FORMAT_VERSION,
    INSTANCE_GENERATOR_VERSION,
    SPLITS,
    ensure_instances,
    file_sha256,
    generate_instance,
    instance_pool,
    instance_stats,
    instances_path,
    iter_instances,
    load_instances,
)
from travelgym.suites.behavior2trip.profiles import DIFFICULTIES, check_profile
from travelgym.suites.behavior2trip.schema import DATES

TOLERANCE = 0.15


@pytest.fixture(scope="module")
def data_dir(trips_database):
    return trips_database.path.parent.parent


@pytest.fixture(scope="module")
def built(trips_database, trips_instances, data_dir):
    # how long this takes is measured in benchmarks/b2t_witness.py, not asserted here
    return ensure_instances(trips_database, data_dir), None


@pytest.fixture(scope="module")
def catalog(trips_db):
    return PoiCatalog.from_database(trips_db)


def test_files_and_manifests(built, trips_database):
    paths, _ = built
    for split, per in SPLITS.items():
        path = paths[split]
        assert path == instances_path(split, trips_database.path.parent.parent)
        name = f"instances-small-v{INSTANCE_FORMAT_VERSION}-{split}.jsonl"
        assert path.name == name and path.parent.name == "behavior2trip"
        meta = read_manifest(path)
        assert meta["count"] == 3 * per
        assert meta["sha256"] == file_sha256(path)
        assert meta["format_version"] == INSTANCE_FORMAT_VERSION
        assert meta["generator_version"] == INSTANCE_GENERATOR_VERSION
        assert meta["db_content_hash"] == trips_database.metadata["content_hash"]
        assert meta["seed"] == 2024 and meta["split"] == split
        # the default set is quality-filtered from the unfiltered one (test_quality.py)
        raw = read_manifest(instances_path(split, trips_database.path.parent.parent,
                                           instances="unfiltered"))  # fmt: skip
        assert meta["instances"] == "filtered" and meta["unfiltered_sha256"] == raw["sha256"]
        assert raw["count"] == 3 * per and raw["instances"] == "unfiltered"
        assert "trajectory" not in raw["rejections"]  # the generator never wrote a bad one
        assert raw["rejections"]["drawn"] >= 3 * per
        # requests without a witness plan were drawn again (the data make some unpassable)
        assert raw["rejections"]["witness"] > 0


@pytest.mark.slow  # every one of the 11,400 instances re-validated against the database
def test_all_11400_trajectories_validate(built, catalog):
    """Every stored trajectory passes the funnel, noise, continuity and session rules against a
    pool rebuilt from the database and the hidden profile."""
    paths, _ = built
    seen: set[str] = set()
    counts = {}
    for split, path in paths.items():
        for inst in iter_instances(path):
            pool = instance_pool(inst, catalog)
            assert validate_trajectory(inst.trajectory, pool) == [], inst.instance_id
            assert inst.instance_id not in seen
            seen.add(inst.instance_id)
            counts[split, inst.difficulty] = counts.get((split, inst.difficulty), 0) + 1
            _check_instance(inst)
    assert len(seen) == 11_400
    assert counts == {(s, d): n for s, n in SPLITS.items() for d in DIFFICULTIES}


def _check_instance(inst):
    profile, ins = inst.profile, inst.instruction
    assert check_profile(profile) == []
    assert len(profile.categories) == {"easy": 1, "hard": 4}.get(
        inst.difficulty, len(profile.categories)
    )
    booked = [a for a in inst.trajectory if a.action_type == "book"]
    assert booked
    # Table 9 keeps no entertainment history
    booked = [a.poi_id for a in booked if a.poi_type != "entertainment"]
    history = profile.preferences.historical_travel_experiences
    recorded = [e.poi_id for lst in (history.accommodations, history.restaurants,
                                     history.attractions, history.transportation) for e in lst]  # fmt: skip
    assert sorted(recorded) == sorted(booked)
    assert ins.departure_city == profile.persona.home_city != ins.destination_city
    assert 2 <= ins.days <= 8 and ins.travellers == ins.companions + 1
    assert ins.start_date in DATES and ins.end_date in DATES
    span = dt.date.fromisoformat(ins.end_date) - dt.date.fromisoformat(ins.start_date)
    assert span.days == ins.days - 1
    assert ins.destination_city in ins.text and ins.departure_city in ins.text
    assert f"{ins.days}" in ins.text
    if inst.difficulty == "easy":  # one preference check (Table 3: UPC micro = macro on Easy)
        assert ins.budget_cny == 0 and "CNY" not in ins.text
        applicable = [c.id for c in CHECKS if c.group == "UPC" and c.applies(inst) is None]
        assert len(applicable) == 1, (inst.instance_id, applicable)
    else:
        assert f"{ins.budget_cny:,} CNY" in ins.text and ins.budget_cny >= 100 * ins.days
    assert inst.witness  # a plan passing every applicable check (re-checked in test_witness)


def test_table2_statistics_within_15_percent(built, data_dir, trips_database):
    stats = instance_stats(data_dir, db=trips_database, generate=False)
    assert stats["total"] == 11_400
    for split in SPLITS:
        by_diff = stats["splits"][split]["by_difficulty"]
        for i, diff in enumerate(DIFFICULTIES):
            for key in MEASURES:
                entry = by_diff[diff][key]
                assert entry["paper"] == PAPER_TABLE2[split][key][i]
                assert abs(entry["rel_diff"]) <= TOLERANCE, (split, diff, key, entry)
            assert by_diff[diff]["noise_clicks"] == pytest.approx(
                {"easy": 0, "medium": 1, "hard": 6.8}[diff], abs=0.6
            )


def test_manifest_statistics_match_the_file(built):
    paths, _ = built
    test = load_instances(paths["test"])
    assert split_stats(test, "test") == read_manifest(paths["test"])["stats"]


def test_generation_is_deterministic(trips_db, monkeypatch):
    """A slot is a function of its key, the seed and the database alone: the same bytes built
    in this process or over worker processes, in any order; another seed gives others."""
    from travelgym.suites.behavior2trip import instance_slots

    keys = [("test", diff, i) for diff in DIFFICULTIES for i in range(3)]
    alone = {s.key: s for s in instance_slots.build_slots(trips_db, 7, keys, workers=1)}
    monkeypatch.setattr(instance_slots, "IN_PROCESS_MAX", 0)
    monkeypatch.setattr(instance_slots, "CHUNK", 2)
    pooled = {s.key: s for s in instance_slots.build_slots(trips_db, 7, keys[::-1], workers=2)}
    assert alone == pooled and len(alone) == 9
    other = next(instance_slots.build_slots(trips_db, 8, keys[:1], workers=1))
    assert other.unfiltered != alone[keys[0]].unfiltered
    cat = PoiCatalog.from_database(trips_db)
    assert generate_instance(cat, 7, "test", "hard", 3) == generate_instance(
        cat, 7, "test", "hard", 3
    )


@pytest.mark.slow
def test_ensure_instances_reuses_and_repairs(built, trips_database, data_dir, tmp_path):
    from tests.conftest import private_data_dir

    # a private copy of the data directory (this test damages a file); the train files, which
    # it never writes, hard-linked
    data_dir = private_data_dir(tmp_path / "data", data_dir, ("behavior2trip",),
                                link=lambda p: "-train" in p.name and p.suffix == ".jsonl")  # fmt: skip
    paths = {
        split: data_dir / path.relative_to(path.parents[1]) for split, path in built[0].items()
    }
    test = paths["test"]
    before = test.stat().st_mtime_ns
    assert ensure_instances(trips_database, data_dir) == paths
    assert test.stat().st_mtime_ns == before  # current: not rewritten
    original = file_sha256(test)
    with open(test, "a", encoding="utf-8") as fh:
        fh.write("\n")
    with pytest.raises(ValueError, match="sha256"):
        next(iter_instances(test))
    ensure_instances(trips_database, data_dir)  # a damaged file is regenerated
    assert file_sha256(test) == original


@pytest.mark.slow
def test_one_split_is_generated_alone_and_scales_never_share_files(built, trips_database,
                                                                  data_dir, tmp_path):  # fmt: skip
    import shutil

    from travelgym.suites.behavior2trip.build import BuiltDatabase
    from travelgym.suites.behavior2trip.instances import open_store, slot_keys, store_path

    # the built slots are reused (a copy of the store), so this assembles files, builds nothing
    store_path(tmp_path).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(store_path(data_dir), store_path(tmp_path))
    paths = ensure_instances(trips_database, tmp_path, splits=("test",))
    assert list(paths) == ["test"]
    assert paths["test"].exists() and not instances_path("train", tmp_path).exists()
    assert file_sha256(paths["test"]) == file_sha256(built[0]["test"])
    # a full-scale database's instances go to files and a store of their own
    full = BuiltDatabase(trips_database.path, {**trips_database.metadata, "scale": "full"}, False)
    assert instances_path("test", tmp_path, "full") != paths["test"]
    assert store_path(tmp_path, "full") != store_path(tmp_path)
    with open_store(full, tmp_path, 2024) as store:
        assert store.missing(slot_keys("test", 2)) == slot_keys("test", 2)
    assert read_manifest(paths["test"])["db_scale"] == "small"
    with pytest.raises(ValueError, match="unknown split"):
        ensure_instances(trips_database, tmp_path, splits=("dev",))


def test_instance_stats_for_the_cli(built, data_dir, trips_database):
    stats = instance_stats(data_dir, db=trips_database, generate=False)
    assert set(stats["splits"]) == {"train", "test"}
    test = stats["splits"]["test"]
    assert test["count"] == 2400 and test["sha256"] and test["db_content_hash"]
    assert set(test["by_difficulty"]) == set(DIFFICULTIES)
    assert instance_stats(data_dir / "empty", generate=False)["splits"]["test"] is None


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_instances_with_the_llm_backend(catalog):
    from tests.fakes.openai_server import FakeOpenAIServer, Reply
    from tests.suites.behavior2trip.test_behaviour import scripted_session
    from travelgym.llm import OpenAIChatClient
    from travelgym.suites.behavior2trip.behaviour import DeterministicBackend
    from travelgym.suites.behavior2trip.instances import agenerate_instance
    from travelgym.suites.behavior2trip.roleplay import RoleplayBackend

    same = await agenerate_instance(catalog, 7, "test", "medium", 2, DeterministicBackend())
    assert same == generate_instance(catalog, 7, "test", "medium", 2)
    with FakeOpenAIServer(responder=scripted_session) as server:
        server.push(Reply("not JSON at all"))  # the first session reply is rejected, then retried
        async with OpenAIChatClient("fake-model", base_url=server.base_url, max_retries=0) as c:
            backend = RoleplayBackend(c)
            inst = await agenerate_instance(catalog, 7, "test", "hard", 0, backend)
    assert backend.rejected == 1
    assert validate_trajectory(inst.trajectory, instance_pool(inst, catalog)) == []
    assert inst.instruction.departure_city == inst.profile.persona.home_city
