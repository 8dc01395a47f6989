"""The test data is built once per machine: two pytest sessions sharing one cache directory
(``$TRAVELGYM_TEST_CACHE``), the second builds no database, ground truth or instance file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import BUILD_LOG, CACHE_ENV, data_key_hash, snapshot

ROOT = Path(__file__).resolve().parents[1]
PROBE = "tests/data_cache_probe.py"


def _session(cache: Path) -> list[dict]:
    """One ``pytest`` session of the probe tests; the build-log entries it added."""
    log = cache / data_key_hash() / BUILD_LOG
    before = log.read_text().count("\n") if log.exists() else 0
    env = {**os.environ, CACHE_ENV: str(cache)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-o", "addopts=", PROBE], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "2 passed" in done.stdout, done.stdout[-3000:]
    return [json.loads(x) for x in log.read_text().splitlines()[before:]]


@pytest.mark.slow
def test_a_second_session_builds_nothing(compass_db, trips_database, tmp_path):
    shared = trips_database.path.parents[1]
    cache = tmp_path / "cache"
    data = cache / data_key_hash()
    # seed the new cache with the session's Behavior2Trip data (big files hard-linked: every
    # writer replaces files atomically, and the session's own check catches an in-place write)
    # and the COMPASS database, not its ground truth: the first session must build that
    for suite in ("compass", "behavior2trip"):
        (data / suite).mkdir(parents=True)
    for path in (shared / "behavior2trip").iterdir():
        if path.is_file() and "-train" not in path.name:
            if path.stat().st_size > 1 << 20:
                os.link(path, data / "behavior2trip" / path.name)
            else:
                shutil.copy2(path, data / "behavior2trip" / path.name)
    shutil.copy2(compass_db, data / "compass" / compass_db.name)

    first = _session(cache)
    assert sorted(e["what"] for e in first) == ["behavior2trip", "compass"]
    built = {e["what"]: e["changed"] for e in first}
    # the positive control: the log sees a build when there is one
    assert built["compass"] == ["compass/ground_truth-seed0.jsonl",
                                "compass/ground_truth-seed0.manifest.json"]  # fmt: skip
    assert built["behavior2trip"] == []
    files = snapshot(data)
    assert any(name.endswith("-test.jsonl") for name in files)

    second = _session(cache)
    assert sorted(e["what"] for e in second) == ["behavior2trip", "compass"]
    assert all(e["changed"] == [] for e in second), second
    # nothing rewritten, replaced or added: same files, inodes, sizes and mtimes
    assert snapshot(data) == files
