"""The answer key built on the host before any read attack runs (so a denied read means the
boundary hid a file that is there, not that the file was missing)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def answer_files(compass_db, trips_database) -> dict[str, Path]:
    """COMPASS ground truth (beside the test database) and Behavior2Trip instance files (beside
    the test trips database), built now and checked to exist with content."""
    from travelgym.suites.behavior2trip.instances import ensure_instances
    from travelgym.suites.compass.ground_truth import ensure_ground_truth

    truth, truths = ensure_ground_truth(seed=0, data_dir=compass_db.parent.parent)
    instances = ensure_instances(
        trips_database, trips_database.path.parent.parent, splits=("test",)
    )
    files = {"ground_truth": truth, **{f"instances-{k}": v for k, v in instances.items()}}
    files |= {f"{k}-manifest": v.with_suffix(".manifest.json") for k, v in list(files.items())}
    for name, path in files.items():
        assert path.is_file() and path.stat().st_size > 0, (name, path)
    assert truths and '"optimal_plan"' in truth.read_text()[:100000]
    return files
