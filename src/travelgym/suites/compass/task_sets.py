"""Which task file goes with which database seed.

The shipped task file was generated on the seed-0 database. A task is only valid for the
database it was drawn on (its feasible set, budget and acceptance rules depend on the rows), so
another database seed gets its own task file, generated once by the same deterministic
generator with the same slots and cached under the data directory with a manifest (database
hash, generator version, task seed, and the shipped file's hash, which changes whenever the
generator's output does). A stale cached file is regenerated, never reused.

A command that needs only some tasks of a generated set (``run --limit 3``, ``solve --task``)
draws only those: a task depends on nothing but its slot, the task seed and the database, so
it is the same task as in the whole file. They are kept in a partial file
(``tasks-seed<N>.partial.jsonl``, manifest ``"partial": true``) that later commands reuse and
the full file's build replaces. What runs and ground truths record of a generated set
(:attr:`TaskSet.sha256`) is the sha256 of what made it (that manifest's origin), the same
whichever of its tasks were drawn; the shipped set's is its file's sha256.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from travelgym import atomic
from travelgym.atomic import updating
from travelgym.datafiles import (
    dump_jsonl,
    intact_manifest,
    manifest_path,
    read_manifest,
    write_manifest,
)
from travelgym.paths import suite_dir
from travelgym.suites.compass.build import SUITE, ensure_database
from travelgym.suites.compass.tasks import PACKAGE_TASKS, Task, load_tasks

SHIPPED_DB_SEED = 0
# how TaskSet.sha256 names a generated set: "2", the sha256 of its origin (before 2026-12-07,
# the full file's sha256); ground truths and runs record it
TASK_SET_IDENTITY_VERSION = "2"


def generated_task_path(db_seed: int, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the task file generated for database seed ``db_seed`` is cached."""
    return suite_dir(SUITE, data_dir) / f"tasks-seed{db_seed}.jsonl"


def partial_task_path(db_seed: int, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the tasks of a generated set drawn for a partial request are kept."""
    return suite_dir(SUITE, data_dir) / f"tasks-seed{db_seed}.partial.jsonl"


def _shipped_sha256() -> str:
    return hashlib.sha256(PACKAGE_TASKS.read_bytes()).hexdigest()


def _origin(db_seed: int, data_dir: str | os.PathLike[str] | None) -> dict[str, Any]:
    """What a generated task file of ``db_seed`` is made from (its manifest's entries that
    must match): the database (built when missing), the generator, the seeds."""
    from travelgym.suites.compass.taskgen import DEFAULT_TASK_SEED, task_file_origin

    db = ensure_database(seed=db_seed, data_dir=data_dir)
    # the shipped file is regenerated whenever the generator's output changes (a test checks it
    # byte for byte), so its hash also retires files of an older generator
    return {**task_file_origin(db.metadata["content_hash"], DEFAULT_TASK_SEED, db_seed),
            "shipped_tasks_sha256": _shipped_sha256()}  # fmt: skip


def task_file_for(db_seed: int, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The task file of database seed ``db_seed``: the shipped one for seed 0, else a file
    generated for that database (built on first use)."""
    if db_seed == SHIPPED_DB_SEED:
        return PACKAGE_TASKS
    return _full_file(db_seed, data_dir, _origin(db_seed, data_dir))


def _full_file(db_seed: int, data_dir: str | os.PathLike[str] | None,
               expected: dict[str, Any]) -> Path:  # fmt: skip
    """The full task file of a generated set, made when missing or not intact from the tasks
    the partial file holds and those it lacks (drawn; kept there if the build stops)."""
    from travelgym.suites.compass.taskgen import DEFAULT_TASK_SEED, task_slots

    path = generated_task_path(db_seed, data_dir)
    # a stale or edited task file is made again, never run
    if intact_manifest(path, expected) is None:
        slots = task_slots(DEFAULT_TASK_SEED)
        have = _draw_keeping(db_seed, data_dir, expected, slots)
        tasks = [have[slot[0]] for slot in slots]
        write_manifest(path, {**expected, "count": len(tasks), "sha256": dump_jsonl(tasks, path)})
        partial = partial_task_path(db_seed, data_dir)  # the full file holds all of it now
        partial.unlink(missing_ok=True)
        manifest_path(partial).unlink(missing_ok=True)
    return path


def _drawn(path: Path, origin: dict[str, Any]) -> dict[str, Task]:
    """The tasks of the partial file ``path`` when it is intact and of ``origin``, else none."""
    if intact_manifest(path, {**origin, "partial": True}) is None:
        return {}
    try:
        return {t.task_id: t for t in load_tasks(path)}
    except ValueError:  # bytes its manifest names, yet not tasks: drawn anew
        return {}


def _draw_keeping(db_seed: int, data_dir: str | os.PathLike[str] | None, origin: dict[str, Any],
                  wanted: list[tuple[str, int, str]]) -> dict[str, Task]:  # fmt: skip
    """The tasks of the ``wanted`` slots (and any other the partial file holds), by id: read
    from the partial file, the others drawn. What was drawn goes to the partial file, also
    when the drawing stops part-way (an error, Ctrl-C): a later command draws only the rest."""
    from travelgym.db import connect_readonly
    from travelgym.suites.compass.taskgen import DEFAULT_TASK_SEED, generate_tasks, task_slots

    path = partial_task_path(db_seed, data_dir)
    have = _drawn(path, origin)
    missing = [slot for slot in wanted if slot[0] not in have]
    if not missing:
        return have
    drawn: list[Task] = []
    order = [slot[0] for slot in task_slots(DEFAULT_TASK_SEED)]  # the task file's order

    def save() -> None:
        nonlocal have
        with updating(path):  # what another command drew meanwhile is kept too
            have = {**_drawn(path, origin), **have, **{t.task_id: t for t in drawn}}
            kept = [have[i] for i in order if i in have]
            write_manifest(path, {**origin, "partial": True,
                                  "sha256": dump_jsonl(kept, path), "count": len(kept)})  # fmt: skip

    atomic.check_writable(path)  # a read-only directory: before any drawing
    tick = atomic.every(atomic.SAVE_EVERY_S, save)
    db = ensure_database(seed=db_seed, data_dir=data_dir)
    conn = connect_readonly(db.path)
    try:
        generate_tasks(conn, DEFAULT_TASK_SEED, slots=missing, done=len(wanted) - len(missing),
                       on_task=lambda task: (drawn.append(task), tick()))  # fmt: skip
    finally:
        conn.close()
        if drawn:
            save()
    return have


@dataclass(frozen=True)
class TaskSet:
    """The tasks of one database seed, known by identity before any is drawn.

    ``sha256`` is what a run's manifest and a ground-truth file record as ``tasks_sha256``:
    the shipped file's sha256 for seed 0; for another seed the sha256 of the origin its
    generated tasks are a pure function of (database content hash, generator and format
    versions, seeds), so a run of three tasks records what a run of all 281 does."""

    db_seed: int
    data_dir: Path | None
    sha256: str
    origin: dict[str, Any]  # a generated set's manifest entries ({} for the shipped one)

    @property
    def shipped(self) -> bool:
        return not self.origin

    def slots(self) -> list[tuple[str, int]]:
        """(task id, level) of every task, in the task file's order (nothing is drawn)."""
        if self.shipped:
            return [(t.task_id, t.level) for t in self.load()]
        from travelgym.suites.compass.taskgen import DEFAULT_TASK_SEED, task_slots

        return [(task_id, level) for task_id, level, _ in task_slots(DEFAULT_TASK_SEED)]

    def load(self, task_ids: Sequence[str] | None = None) -> list[Task]:
        """The tasks (those of ``task_ids``, in that order; a ``KeyError`` names an id that is
        not one): of a generated set, the full file when built, else only the tasks asked
        for, drawn where the partial file lacks them."""
        if self.shipped:
            tasks = load_tasks(PACKAGE_TASKS)
        elif task_ids is None:
            return load_tasks(_full_file(self.db_seed, self.data_dir, self.origin))
        elif intact_manifest(self.full_path, self.origin) is not None:
            tasks = load_tasks(self.full_path)
        else:
            tasks = self._partial(list(dict.fromkeys(task_ids)))
        if task_ids is None:
            return tasks
        by_id = {t.task_id: t for t in tasks}
        return [by_id[i] for i in task_ids]

    def select(self, task_ids: Sequence[str] | None, level: int | None,
               limit: int | None) -> list[Task]:  # fmt: skip
        """:func:`~travelgym.suites.compass.tasks.select_tasks` over this set, drawing only the
        tasks chosen (a ``ValueError`` names unknown ids)."""
        from travelgym.core.selection import select

        slots = self.slots()
        chosen = select(slots, task_ids, level, limit, id_of=lambda s: s[0],
                        level_of=lambda s: s[1])  # fmt: skip
        if len(chosen) == len(slots) and not task_ids:
            return self.load()
        return self.load([task_id for task_id, _ in chosen])

    @property
    def full_path(self) -> Path:
        return PACKAGE_TASKS if self.shipped else generated_task_path(self.db_seed, self.data_dir)

    def _partial(self, wanted: list[str]) -> list[Task]:
        """The tasks of ``wanted`` from the partial file, the missing ones drawn and added."""
        from travelgym.suites.compass.taskgen import DEFAULT_TASK_SEED, task_slots

        slots = {slot[0]: slot for slot in task_slots(DEFAULT_TASK_SEED)}
        chosen = [slots[i] for i in wanted]  # KeyError: not a task of the set
        have = _draw_keeping(self.db_seed, self.data_dir, self.origin, chosen)
        return [have[i] for i in wanted]

    def identity(self) -> dict[str, Any]:
        """What a run's manifest records of its tasks: the file, this set's ``sha256``, the
        task format version and the seeds."""
        if self.shipped:
            return task_file_identity(PACKAGE_TASKS)
        return {"tasks_file": str(self.full_path), "tasks_sha256": self.sha256,
                "tasks_format_version": self.origin["format_version"],
                "tasks_db_seed": self.db_seed, "task_seed": self.origin["task_seed"]}  # fmt: skip


def task_set(db_seed: int, data_dir: str | os.PathLike[str] | None = None) -> TaskSet:
    """The tasks of database seed ``db_seed`` (its database built when missing; no task drawn)."""
    directory = None if data_dir is None else Path(data_dir)
    if db_seed == SHIPPED_DB_SEED:
        return TaskSet(db_seed, directory, _shipped_sha256(), {})
    origin = _origin(db_seed, data_dir)
    sha = hashlib.sha256(json.dumps(origin, sort_keys=True).encode()).hexdigest()
    return TaskSet(db_seed, directory, sha, origin)


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
