"""Ground truth for the task set: computed by the solver, stored as versioned JSONL."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from travelgym.datafiles import dump_jsonl, manifest_path, read_manifest, write_manifest
from travelgym.db import connect_readonly
from travelgym.paths import suite_dir
from travelgym.suites.compass.build import SUITE, ensure_database
from travelgym.suites.compass.solver import solve
from travelgym.suites.compass.task_sets import task_file_for
from travelgym.suites.compass.tasks import (
    GROUND_TRUTH_FORMAT_VERSION,
    PACKAGE_TASKS,
    GroundTruth,
    Task,
    load_ground_truth,
    load_tasks,
)


def tasks_sha256(path: Path = PACKAGE_TASKS) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def ground_truth_path(seed: int, data_dir: str | os.PathLike[str] | None = None) -> Path:
    return suite_dir(SUITE, data_dir) / f"ground_truth-seed{seed}.jsonl"


def solve_all(db_path: Path, tasks: list[Task]) -> list[GroundTruth]:
    """Exact ground truth of every task on the database at ``db_path``."""
    conn = connect_readonly(db_path)
    try:
        return [solve(conn, task) for task in tasks]
    finally:
        conn.close()


def ensure_ground_truth(
    seed: int = 0,
    data_dir: str | os.PathLike[str] | None = None,
    tasks_path: Path | None = None,
) -> tuple[Path, dict[str, GroundTruth]]:
    """The ground-truth file for this seed's tasks (``task_sets.task_file_for``) on this seed's
    database, (re)built when missing or when the database or the task file changed."""
    db = ensure_database(seed=seed, data_dir=data_dir)
    tasks_path = tasks_path or task_file_for(seed, data_dir)
    path = ground_truth_path(seed, data_dir)
    expected = {
        "format_version": GROUND_TRUTH_FORMAT_VERSION,
        "db_content_hash": db.metadata["content_hash"],
        "tasks_sha256": tasks_sha256(tasks_path),
    }
    if path.exists() and manifest_path(path).exists():
        meta = read_manifest(path)
        if all(meta.get(k) == v for k, v in expected.items()):
            return path, load_ground_truth(path)
    truths = solve_all(db.path, load_tasks(tasks_path))
    sha = dump_jsonl(truths, path)
    write_manifest(path, {**expected, "sha256": sha, "count": len(truths)})
    return path, {t.task_id: t for t in truths}
