"""Not collected by a plain ``pytest`` (the name does not match ``test_*.py``): the selection
``tests/test_data_cache.py`` runs twice in subprocesses sharing one test-data cache."""

from __future__ import annotations

from travelgym.datafiles import read_manifest


def test_probe_compass(compass_db):
    truth = compass_db.parent / "ground_truth-seed0.jsonl"
    assert compass_db.is_file() and read_manifest(truth)["count"] == 281


def test_probe_behavior2trip(trips_database):
    from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances

    paths = ensure_instances(trips_database, trips_database.path.parent.parent, splits=("test",))
    assert len(load_instances(paths["test"])) == 2400
