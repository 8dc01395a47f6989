"""Ground truth for the task set: computed by the solver, stored as versioned JSONL.

The full file (``ground_truth-seed<N>.jsonl``) holds every task of the task file; its manifest
names the database content hash and the task file's sha256 it was solved for. A command that
needs only some tasks (``solve --task``, ``run --limit/--tasks/--level``) computes only those
when the full file is missing or stale, and keeps them in a separate partial file
(``ground_truth-seed<N>.partial.jsonl``, manifest ``"partial": true`` with its task ids), so a
later command reuses them. The partial file is never read as the full one: the full file is
only ever written by a full build (which takes the partial file's entries as computed and
solves the rest), and each task's ground truth depends on nothing but that task and the
database, so it is the same whichever way it was built.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from travelgym import atomic, progress
from travelgym.atomic import updating
from travelgym.datafiles import dump_jsonl, intact_manifest, manifest_path, write_manifest
from travelgym.db import connect_readonly
from travelgym.paths import suite_dir
from travelgym.suites.compass.build import SUITE, ensure_database
from travelgym.suites.compass.solver import solve
from travelgym.suites.compass.task_sets import TaskSet, task_set
from travelgym.suites.compass.tasks import (
    GROUND_TRUTH_FORMAT_VERSION,
    PACKAGE_TASKS,
    GroundTruth,
    Task,
    load_ground_truth,
)

STEP = "compass: ground truth"


def tasks_sha256(path: Path = PACKAGE_TASKS) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def ground_truth_path(seed: int, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the full ground-truth file of database seed ``seed`` lives."""
    return suite_dir(SUITE, data_dir) / f"ground_truth-seed{seed}.jsonl"


def partial_ground_truth_path(seed: int, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the ground truths of only some tasks (computed for a partial request) are kept."""
    return suite_dir(SUITE, data_dir) / f"ground_truth-seed{seed}.partial.jsonl"


def solve_all(
    db_path: Path, tasks: list[Task], bar: progress.Step | None = None
) -> list[GroundTruth]:
    """Exact ground truth of every task on the database at ``db_path`` (``bar`` advanced by
    one per task)."""
    conn = connect_readonly(db_path)
    try:
        out = []
        for task in tasks:
            out.append(solve(conn, task))
            if bar is not None:
                bar.advance()
        return out
    finally:
        conn.close()


def _intact(path: Path, expected: dict) -> dict[str, GroundTruth] | None:
    """The ground truths of ``path`` when it was made for ``expected`` (database, task file,
    full or partial) and its bytes are the ones its manifest names, else None (a missing,
    stale, edited or damaged file is computed again, never scored against)."""
    if intact_manifest(path, expected) is None:
        return None
    try:
        return load_ground_truth(path)
    except ValueError:  # bytes its manifest names, yet not ground truths: built anew
        return None


def _read_partial(path: Path, expected: dict) -> dict[str, GroundTruth]:
    """The partial file's ground truths when it was made for the same database and task file
    (and its bytes are the ones its manifest names), else none."""
    return _intact(path, {**expected, "partial": True}) or {}


def _solve_missing(db_path: Path, tasks: list[Task], have: dict[str, GroundTruth],
                   save: Callable[[], object]) -> None:  # fmt: skip
    """Solve the ``tasks`` ``have`` lacks, adding each to it as it is solved (what a caller
    keeps when the solving stops part-way), calling ``save`` every
    :data:`~travelgym.atomic.SAVE_EVERY_S` seconds (a ``SIGKILL`` loses at most that much)."""
    missing = [t for t in tasks if t.task_id not in have]
    if not missing:
        return
    tick = atomic.every(atomic.SAVE_EVERY_S, save)
    conn = connect_readonly(db_path)
    try:
        with progress.step(STEP, total=len(tasks), unit="task",
                           initial=len(tasks) - len(missing)) as bar:  # fmt: skip
            for task in missing:
                have[task.task_id] = solve(conn, task)
                bar.advance()
                tick()
    finally:
        conn.close()


def _keep_partial(partial: Path, expected: dict, order: list[str],
                  have: dict[str, GroundTruth]) -> dict[str, GroundTruth]:  # fmt: skip
    """Write ``have`` (with what another command added meanwhile) to the partial file, in
    task-file ``order``; every ground truth it then holds."""
    with updating(partial):
        have = {**_read_partial(partial, expected), **have}
        kept = [have[i] for i in order if i in have]
        sha = dump_jsonl(kept, partial)
        write_manifest(partial, {**expected, "partial": True, "sha256": sha, "count": len(kept),
                                 "task_ids": [t.task_id for t in kept]})  # fmt: skip
    return have


def ensure_ground_truth(
    seed: int = 0,
    data_dir: str | os.PathLike[str] | None = None,
    tasks: TaskSet | None = None,
    task_ids: Iterable[str] | None = None,
) -> tuple[Path, dict[str, GroundTruth]]:
    """The ground truth of this seed's tasks (``tasks``, default :func:`task_set` of the seed)
    on this seed's database: the full file, (re)built when missing or when the database or the
    task set changed, and all its ground truths.

    With ``task_ids`` (ids of the task set; a ``KeyError`` names one that is not), only those
    are returned, and only those are computed (and, of a generated set, drawn) when the full
    file is not current: they come from, and go to, the partial file (whose path is returned
    then). Asking for every task is the full build."""
    db = ensure_database(seed=seed, data_dir=data_dir)
    tasks = tasks or task_set(seed, data_dir)
    path = ground_truth_path(seed, data_dir)
    expected = {
        "format_version": GROUND_TRUTH_FORMAT_VERSION,
        "db_content_hash": db.metadata["content_hash"],
        "tasks_sha256": tasks.sha256,
    }
    wanted = None if task_ids is None else list(dict.fromkeys(task_ids))
    truths = _intact(path, {**expected, "partial": None})
    if truths is not None:
        return path, truths if wanted is None else {i: truths[i] for i in wanted}
    order = [task_id for task_id, _ in tasks.slots()]
    partial = partial_ground_truth_path(seed, data_dir)
    have = _read_partial(partial, expected)
    before = len(have)

    def keep() -> None:  # what was solved so far, for a later build
        if len(have) > before:  # (in place: the solving goes on adding to this dict)
            have.update(_keep_partial(partial, expected, order, have))

    if wanted is not None and set(wanted) != set(order):
        chosen = tasks.load(wanted)  # KeyError: not a task of the set
        if any(t.task_id not in have for t in chosen):
            atomic.check_writable(partial)  # a read-only directory: before any solving
        try:
            _solve_missing(db.path, chosen, have, keep)
        finally:  # also what was solved before an error or Ctrl-C
            keep()
        return partial, {i: have[i] for i in wanted}
    every = tasks.load()
    if any(t.task_id not in have for t in every):
        atomic.check_writable(path)  # a read-only directory: before any solving
    try:
        _solve_missing(db.path, every, have, keep)
    except BaseException:  # stopped part-way: what was solved is kept for the next build
        keep()
        raise
    truths = [have[t.task_id] for t in every]
    sha = dump_jsonl(truths, path)
    write_manifest(path, {**expected, "sha256": sha, "count": len(truths)})
    partial.unlink(missing_ok=True)  # the full file holds all of it now
    manifest_path(partial).unlink(missing_ok=True)
    return path, {t.task_id: t for t in truths}
