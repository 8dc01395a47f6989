"""Which task file goes with which database seed.

The shipped task file was generated on the seed-0 database. A task is only valid for the
database it was drawn on (its feasible set, budget and acceptance rules depend on the rows), so
another database seed gets its own task file, generated once by the same deterministic
generator with the same slots and cached under the data directory with a manifest (database
hash, generator version, task seed, and the shipped file's hash, which changes whenever the
generator's output does). A stale cached file is regenerated, never reused.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from travelgym.datafiles import cached_manifest, manifest_path, read_manifest
from travelgym.paths import suite_dir
from travelgym.suites.compass.build import SUITE, ensure_database
from travelgym.suites.compass.tasks import PACKAGE_TASKS

SHIPPED_DB_SEED = 0


def generated_task_path(db_seed: int, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the task file generated for database seed ``db_seed`` is cached."""
    return suite_dir(SUITE, data_dir) / f"tasks-seed{db_seed}.jsonl"


def task_file_for(db_seed: int, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The task file of database seed ``db_seed``: the shipped one for seed 0, else a file
    generated for that database (built on first use)."""
    if db_seed == SHIPPED_DB_SEED:
        return PACKAGE_TASKS
    from travelgym.suites.compass.taskgen import (
        DEFAULT_TASK_SEED,
        task_file_origin,
        write_task_file,
    )

    db = ensure_database(seed=db_seed, data_dir=data_dir)
    path = generated_task_path(db_seed, data_dir)
    # the shipped file is regenerated whenever the generator's output changes (a test checks it
    # byte for byte), so its hash also retires files of an older generator
    extra = {"shipped_tasks_sha256": hashlib.sha256(PACKAGE_TASKS.read_bytes()).hexdigest()}
    expected = {
        **task_file_origin(db.metadata["content_hash"], DEFAULT_TASK_SEED, db_seed),
        **extra,
    }
    meta = cached_manifest(path) or {}  # {}: missing or damaged
    # a stale or edited task file is made again, never run
    if meta and all(meta.get(k) == v for k, v in expected.items()) and meta.get(
            "sha256") == hashlib.sha256(path.read_bytes()).hexdigest():  # fmt: skip
        return path
    write_task_file(path, DEFAULT_TASK_SEED, data_dir, db_seed, extra)
    return path


def task_file_identity(path: Path) -> dict:
    """What a run manifest records of its task file: name, sha256, task and database seeds."""
    meta = read_manifest(path) if manifest_path(path).exists() else {}
    return {
        "tasks_file": path.name if path == PACKAGE_TASKS else str(path),
        "tasks_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "tasks_format_version": meta.get("format_version"),
        "tasks_db_seed": meta.get("db_seed"),
        "task_seed": meta.get("task_seed"),
    }
