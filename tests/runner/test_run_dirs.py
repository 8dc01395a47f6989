"""Default run directory names: portable, apart for two runs started in the same second, and
carrying the hash of the run's identity (equal for the same run, different for another)."""

from __future__ import annotations

import datetime as dt
import json

from travelgym.runner.run_dirs import identity_hash, new_run_dir, resumable_runs, safe_name
from travelgym.runner.store import MANIFEST

START = dt.datetime(2026, 12, 7, 1, 30, tzinfo=dt.timezone.utc)
MANIFEST_A = {"suite": "s", "agent": "llm:Qwen/Qwen3-8B", "seed": 0, "task_ids": ["t1"],
              "created": "2026-12-07T01:30:00+00:00", "base_url": "http://a"}  # fmt: skip


def test_names_are_portable_file_names():
    assert safe_name("scripted:greedy") == "scripted-greedy"
    assert safe_name("hf:/ckpt/run 1/final") == "hf-_ckpt_run_1_final"
    assert safe_name("..") == "agent" and len(safe_name("x" * 500)) == 60
    assert safe_name("pkg.module:make") == "pkg.module-make"


def test_the_hash_is_of_the_identity_only():
    same = {**MANIFEST_A, "created": "2030-01-01T00:00:00+00:00", "base_url": "http://b"}
    assert identity_hash(same) == identity_hash(MANIFEST_A)  # not part of what --resume compares
    assert identity_hash({**MANIFEST_A, "task_ids": ["t1", "t2"]}) != identity_hash(MANIFEST_A)
    # a suite's own identity key counts, its default standing in where a manifest lacks it
    assert identity_hash(MANIFEST_A, {"level": 1}) != identity_hash(MANIFEST_A, {"level": 2})
    assert identity_hash({**MANIFEST_A, "level": 1}, {"level": 1}) == identity_hash(
        MANIFEST_A, {"level": 1}
    )


def test_a_name_taken_in_the_same_second_gets_a_suffix(tmp_path):
    first = new_run_dir(tmp_path, MANIFEST_A["agent"], MANIFEST_A, started=START)
    assert first.name == f"20261207T013000Z-llm-Qwen_Qwen3-8B-{identity_hash(MANIFEST_A)}"
    first.mkdir()
    second = new_run_dir(tmp_path, MANIFEST_A["agent"], MANIFEST_A, started=START)
    assert second.name == first.name + "-2" and not second.exists()
    # a local time is written as UTC
    local = START.astimezone(dt.timezone(dt.timedelta(hours=9)))
    assert new_run_dir(tmp_path, "a", MANIFEST_A, started=local).name.startswith("20261207T0130")


def test_resumable_runs_match_the_identity_latest_first(tmp_path):
    def write(name: str, manifest: dict) -> None:
        (tmp_path / name).mkdir()
        (tmp_path / name / MANIFEST).write_text(json.dumps(manifest))

    write("old", MANIFEST_A)
    write("new", {**MANIFEST_A, "created": "2026-12-08T00:00:00+00:00"})
    write("other", {**MANIFEST_A, "seed": 1, "created": "2027-01-01T00:00:00+00:00"})
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / MANIFEST).write_text("[")
    found = resumable_runs(tmp_path, {**MANIFEST_A, "created": "2099-01-01T00:00:00+00:00"})
    assert [d.name for d in found] == ["new", "old"]
    assert resumable_runs(tmp_path / "missing", MANIFEST_A) == []
