"""Shared fixtures: one built COMPASS database per test session (about 3 s) and one small
Behavior2Trip database (a few seconds)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def compass_db(tmp_path_factory):
    """Path to a full COMPASS database built with the default seed."""
    from travelgym.suites.compass.build import ensure_database

    data_dir = tmp_path_factory.mktemp("data")
    return ensure_database(seed=0, data_dir=data_dir).path


@pytest.fixture(scope="session")
def trips_database(tmp_path_factory):
    """The default (small, seed 0) Behavior2Trip database as ``ensure_database`` returns it."""
    from travelgym.suites.behavior2trip.build import ensure_database

    return ensure_database(data_dir=tmp_path_factory.mktemp("trips-data"))


@pytest.fixture(scope="session")
def trips_db(trips_database):
    """Path to the default (small, seed 0) Behavior2Trip database."""
    return trips_database.path


@pytest.fixture(scope="session", autouse=True)
def _instance_files_generated_once(tmp_path_factory):
    """Behavior2Trip's instance files are a pure function of the database file, the seed, the
    split and its size (``test_instances`` checks that, calling ``generate_files`` itself): many
    tests build them in data directories of their own, so within this process a split is
    generated once per database file and copied wherever ``ensure_instances`` asks for it
    again. The copy goes through the same manifest and sha256 checks as a generated file."""
    import hashlib
    import shutil

    import travelgym.suites.behavior2trip.instances as instances

    real = instances.generate_files
    cache = tmp_path_factory.mktemp("instance-cache")
    known: dict[tuple, tuple[object, dict]] = {}

    def file_key(path) -> str:
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()

    def generate_files(db_path, seed, splits, paths, workers=None, per_difficulty=None):
        base = (file_key(db_path), seed, per_difficulty)
        missing = [s for s in splits if (*base, s) not in known]
        if missing:
            where = {s: cache / f"{len(known)}-{s}.jsonl" for s in missing}
            written = real(db_path, seed, missing, where, workers, per_difficulty)
            for split in missing:
                known[(*base, split)] = (where[split], written[split])
        out = {}
        for split in splits:
            source, written = known[(*base, split)]
            paths[split].parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, paths[split])
            out[split] = written
        return out

    instances.generate_files = generate_files
    # the quality filter (the default set) is a pure function of the same inputs: cached alike
    import travelgym.suites.behavior2trip.quality_filter as quality_filter

    real_filter = quality_filter.filter_files
    filtered: dict[tuple, tuple[object, dict]] = {}

    def filter_files(db_path, seed, split, source, out, workers=None):
        key = (file_key(db_path), seed, split, file_key(source))
        if key not in filtered:
            where = cache / f"filtered-{len(filtered)}-{split}.jsonl"
            filtered[key] = (where, real_filter(db_path, seed, split, source, where, workers))
        where, written = filtered[key]
        out.parent.mkdir(parents=True, exist_ok=True)
        for side in (lambda p: p, quality_filter.qc_path, quality_filter.report_path):
            shutil.copyfile(side(where), side(out))
        return written

    quality_filter.filter_files = filter_files
    yield
    instances.generate_files = real
    quality_filter.filter_files = real_filter
