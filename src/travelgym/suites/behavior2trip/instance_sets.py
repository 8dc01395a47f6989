"""An instance set's split as a run, a listing or a training environment loads it: only the
chosen instances are built, and the set's identity stands for its content."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from typing import Any

from travelgym.core.selection import select
from travelgym.suites.behavior2trip.instances import (
    DEFAULT_INSTANCE_SEED,
    INSTANCE_SETS,
    SPLITS,
    _expected,
    ensure_instances,
    ensure_selected,
    known_slots,
    load_instances,
    select_slots,
)

# a run manifest written before a key existed: small scale, no judge, version 1 checks and
# instances and (before RQ1 and quality control) the trajectory given, no user, the unfiltered
# set; a run at noise 0 (the paper's behaviour) writes no noise key: its manifest is as before
MANIFEST_BEFORE = {"db_scale": "small", "judge": None, "checks_version": "1",
                   "instances_version": "1/1.0.0", "no_trajectory": False, "clarify": None,
                   "clarify_turns": None, "instances": "unfiltered", "noise": None}  # fmt: skip


def set_sha256(db, seed: int, split: str, instances: str = "filtered",
               noise: float = 0.0) -> str:  # fmt: skip
    """The identity of an instance set's split (at a ``noise`` level): every instance is a pure
    function of it, so runs of any selection of the same set record the same value."""
    from travelgym.suites.behavior2trip.quality import RULES_VERSION

    identity = {**_expected(db, seed, split, noise), "qc_rules_version": RULES_VERSION,
                "instances": instances}  # fmt: skip
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def load_split(split: str, db_seed: int = 0, data_dir: str | os.PathLike[str] | None = None,
               scale: str = "small", instances: str = "filtered",
               task_ids: Sequence[str] | None = None, difficulty: str | None = None,
               limit: int | None = None, noise: float = 0.0):  # fmt: skip
    """(database, instances of ``split``, the set's :func:`set_sha256`) at database ``scale``,
    built when missing; ``instances``: the filtered (default) or unfiltered set; ``noise``:
    the ``--noise`` level's set (0: the default files). With ``task_ids``, a ``difficulty`` or
    a ``limit`` only the chosen instances are built and returned (the same bytes as in the
    full file)."""
    from travelgym.suites.behavior2trip.build import ensure_database

    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: choose train or test")
    keys = select_slots(split, task_ids, difficulty, limit)
    db = ensure_database(scale=scale, seed=db_seed, data_dir=data_dir)
    sha = set_sha256(db, DEFAULT_INSTANCE_SEED, split, instances, noise)
    if keys is None:
        path = ensure_instances(db, data_dir, splits=(split,), instances=instances,
                                noise=noise)[split]  # fmt: skip
        return db, load_instances(path, check=False), sha
    return db, ensure_selected(db, data_dir, split, keys, instances=instances,
                               noise=noise)[1], sha  # fmt: skip


def versions() -> dict[str, str]:
    """The versions a run's scores depend on: the 32 checks and the instance files."""
    from travelgym.suites.behavior2trip.checks import CHECKS_VERSION
    from travelgym.suites.behavior2trip.instances import (
        INSTANCE_FORMAT_VERSION,
        INSTANCE_GENERATOR_VERSION,
    )

    return {"checks_version": CHECKS_VERSION,
            "instances_version": f"{INSTANCE_FORMAT_VERSION}/{INSTANCE_GENERATOR_VERSION}"}  # fmt: skip


def select_instances(instances: list, ids: list[str] | None, difficulty: str | None,
                     limit: int | None) -> list:  # fmt: skip
    """Instances by explicit ids (in that order), else by difficulty; then the first ``limit``.
    With a limit and no difficulty the instances are interleaved Easy/Medium/Hard, so a small
    sample covers every level."""
    return select(instances, ids, difficulty, limit, id_of=lambda x: x.instance_id,
                  level_of=lambda x: x.difficulty, interleave=True, noun="instance")  # fmt: skip


def run_instances(manifest: dict[str, Any], data_dir: str | os.PathLike[str] | None,
                  ids: Iterable[Any]) -> dict[str, Any]:  # fmt: skip
    """The instances among ``ids`` that the run of ``manifest`` was played on, by id: of its
    split, database scale and seed, instance set and noise level (a manifest written before a
    key existed has :data:`MANIFEST_BEFORE`'s value), only these slots built
    where missing. Ids that name no instance are left out."""
    from travelgym.core.errors import UserError
    from travelgym.suites.behavior2trip.build import ensure_database

    before = MANIFEST_BEFORE
    which = manifest.get("instances") or before["instances"]
    seed = manifest.get("db_seed", 0)
    noise = manifest.get("noise") or 0.0
    if which not in INSTANCE_SETS or not isinstance(seed, int) or isinstance(seed, bool):
        raise UserError(f"a run's manifest names no instance set it can be read with "
                        f"(instances {which!r}, db_seed {seed!r})")  # fmt: skip
    split = manifest.get("split")
    wanted = [i for i in ids if isinstance(i, str)]
    db = ensure_database(scale=manifest.get("db_scale") or before["db_scale"], seed=seed,
                         data_dir=data_dir)  # fmt: skip
    found: dict[str, Any] = {}
    for one in (split,) if split in SPLITS else SPLITS:
        keys = known_slots(one, wanted)
        if keys:
            _, chosen = ensure_selected(db, data_dir, one, keys, instances=which, noise=noise)
            found.update((x.instance_id, x) for x in chosen)
    return found
