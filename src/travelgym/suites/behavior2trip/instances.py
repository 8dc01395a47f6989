"""The 11,400 Behavior2Trip instances (9,000 train / 2,400 test, 3,000 / 800 per difficulty):
trajectory + hidden profile + instruction, as versioned JSONL files with manifests.

Every instance is drawn from its own generator keyed by ``(seed, split, difficulty, index)``, so
the files are identical for the same seed, generator version and database. Files live under
``<data dir>/behavior2trip/instances-<scale>-v<format version>-<split>.jsonl`` (the default,
quality-filtered set: :mod:`.quality_filter`; the unfiltered set it is drawn from is
``...-<split>-unfiltered.jsonl``; one set per database scale and instance format, so building
one never clobbers another) with a
``.manifest.json`` (sha256, versions, seed, database content hash, rejection counts and the
Table 2 statistics).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from travelgym import progress
from travelgym.atomic import replaced_on_success
from travelgym.datafiles import cached_manifest, manifest_path, read_manifest, write_manifest
from travelgym.paths import suite_dir
from travelgym.suites.behavior2trip.behaviour_pool import PoiCatalog

# the generator's and the data model's names, re-exported: most callers know this module
from travelgym.suites.behavior2trip.instance_gen import agenerate_instance as agenerate_instance
from travelgym.suites.behavior2trip.instance_gen import generate_instance
from travelgym.suites.behavior2trip.instance_model import Instance, instance_id
from travelgym.suites.behavior2trip.instance_model import instance_pool as instance_pool
from travelgym.suites.behavior2trip.instance_stats import table2
from travelgym.suites.behavior2trip.noise import check_noise, noise_tag
from travelgym.suites.behavior2trip.profiles import DIFFICULTIES

INSTANCE_FORMAT_VERSION = "2"  # 2: the hidden witness plan
# 2.0.0: requests without a witness are drawn again; 2.1.0: the default set is filtered by the
# automatic quality control (quality_filter.py), the unfiltered one is its own file; 3.0.0: a
# slot left out by the control takes its own next candidate, not an instance beyond the last
# id (instance_slots.py), so any subset builds alone; 4.0.0: an Easy instance carries one
# preference check (profiles.EASY_DROPPED, no budget), a corrected profile's witness is the
# oracle's plan for it
INSTANCE_GENERATOR_VERSION = "4.0.0"
INSTANCE_SETS = ("filtered", "unfiltered")
DEFAULT_INSTANCE_SEED = 2024
SUITE = "behavior2trip"
SPLITS = {"train": 3000, "test": 800}  # instances per difficulty
# an instance line's id, read without parsing the line (instance files are large)
LEADING_ID = re.compile(r'\{"instance_id":"([^"\\]*)"')


# --- generation --------------------------------------------------------------------------------


def generate_split(catalog: PoiCatalog, seed: int, split: str, per_difficulty: int | None = None,
                   rejections: dict[str, int] | None = None) -> list[Instance]:  # fmt: skip
    """All instances of one split, Easy then Medium then Hard (in this process)."""
    n = SPLITS[split] if per_difficulty is None else per_difficulty
    return [generate_instance(catalog, seed, split, diff, i, rejections)
            for diff in DIFFICULTIES for i in range(n)]  # fmt: skip


def slot_keys(split: str, per_difficulty: int | None = None) -> list[tuple[str, str, int]]:
    """Every slot of ``split`` in file order (Easy, then Medium, then Hard)."""
    n = SPLITS[split] if per_difficulty is None else per_difficulty
    return [(split, diff, i) for diff in DIFFICULTIES for i in range(n)]


# --- files -------------------------------------------------------------------------------------


def instances_path(split: str, data_dir: str | os.PathLike[str] | None = None,
                   scale: str = "small", instances: str = "filtered",
                   noise: float = 0.0) -> Path:  # fmt: skip
    """Where the instances of ``split`` for a database of ``scale`` live (the name carries the
    scale and :data:`INSTANCE_FORMAT_VERSION`); ``instances``: the default quality-filtered
    set or the ``unfiltered`` one (``...-<split>-unfiltered.jsonl``); a ``noise`` level above 0
    names its own files (``...-<split>-noise0.3.jsonl``)."""
    if instances not in INSTANCE_SETS:
        raise ValueError(f"unknown instance set {instances!r} (choose filtered or unfiltered)")
    tail = "-unfiltered" if instances == "unfiltered" else ""
    tag = f"-{noise_tag(noise)}" if noise else ""
    name = f"instances-{scale}-v{INSTANCE_FORMAT_VERSION}-{split}{tag}{tail}.jsonl"
    return suite_dir(SUITE, data_dir) / name


def scale_of(db) -> str:
    """The scale (small or full) a built database was made at."""
    return (db.metadata or {}).get("scale") or "small"


def _expected(db, seed: int, split: str, noise: float = 0.0) -> dict[str, Any]:
    expected = {
        "format_version": INSTANCE_FORMAT_VERSION,
        "generator_version": INSTANCE_GENERATOR_VERSION,
        "seed": seed,
        "split": split,
        "db_content_hash": db.metadata.get("content_hash"),
        "db_scale": db.metadata.get("scale"),
        "db_seed": db.metadata.get("seed"),
    }
    if noise:  # part of a noisy set's identity only: the default's stays as it was
        expected["noise"] = check_noise(noise)
    return expected


def store_path(data_dir: str | os.PathLike[str] | None = None, scale: str = "small",
               noise: float = 0.0, db_seed: int = 0,
               seed: int = DEFAULT_INSTANCE_SEED) -> Path:  # fmt: skip
    """The store of built slots for a database of ``scale`` and seed ``db_seed``, instance
    seed ``seed`` and ``noise`` level (:mod:`.instance_slots`). Each such family has a file
    of its own (the defaults keep the plain name): a store forgets the slots of any other
    identity, which in its own family are only those of an older generator or database, so
    runs on other seeds sharing a data directory never evict each other's slots."""
    tags = [f"db{db_seed}"] if db_seed else []
    tags += [f"seed{seed}"] if seed != DEFAULT_INSTANCE_SEED else []
    tags += [noise_tag(noise)] if noise else []
    tag = "".join(f"-{t}" for t in tags)
    name = f"instances-{scale}-v{INSTANCE_FORMAT_VERSION}{tag}.slots.sqlite"
    return suite_dir(SUITE, data_dir) / name


def open_store(db, data_dir: str | os.PathLike[str] | None, seed: int, noise: float = 0.0):
    """The slot store of the instance set of ``db``, ``seed`` and ``noise`` level."""
    from travelgym.suites.behavior2trip.instance_slots import SlotStore
    from travelgym.suites.behavior2trip.quality import RULES_VERSION

    identity = {**_expected(db, seed, "*", noise), "qc_rules_version": RULES_VERSION}
    path = store_path(data_dir, scale_of(db), noise, int(db.metadata.get("seed") or 0), seed)
    return SlotStore(path, identity)


def ensure_instances(db, data_dir: str | os.PathLike[str] | None = None,
                     seed: int = DEFAULT_INSTANCE_SEED, force: bool = False,
                     workers: int | None = None, splits: Sequence[str] = tuple(SPLITS),
                     instances: str = "filtered", noise: float = 0.0) -> dict[str, Path]:  # fmt: skip
    """Write the instance files of ``splits`` (default: train and test) for the database ``db``
    (an object with ``.path`` and ``.metadata``, as ``ensure_database`` returns; its scale names
    the files) unless current files (same versions, seed and database content hash, intact
    sha256) exist. Returns split -> path for ``splits``. A split is built on its own, so asking
    for ``("test",)`` never generates the 9,000 train instances; slots already built (by a run
    of a few instances, say) are reused, not generated again.

    Both sets are written: the unfiltered file and the default quality-filtered one, whose
    manifest records the QC backend, the counts per operation code and the unfiltered file's
    sha256, with the QC records and report beside it
    (:mod:`~travelgym.suites.behavior2trip.quality_filter`). A ``noise`` level above 0 builds
    that level's files (:func:`instances_path`), whose manifests record it."""
    from travelgym.suites.behavior2trip.instance_slots import fill
    from travelgym.suites.behavior2trip.quality_filter import write_sidecars

    unknown = [s for s in splits if s not in SPLITS]
    if unknown:
        raise ValueError(f"unknown split(s): {', '.join(unknown)} (choose train or test)")
    if instances not in INSTANCE_SETS:
        raise ValueError(f"unknown instance set {instances!r} (choose filtered or unfiltered)")
    scale = scale_of(db)
    raw = {split: instances_path(split, data_dir, scale, "unfiltered", noise) for split in splits}
    paths = {split: instances_path(split, data_dir, scale, noise=noise) for split in splits}
    stale = [split for split in splits if force or not _files_current(db, data_dir, seed, split,
                                                                      noise)]  # fmt: skip
    if not stale:  # the store is not opened: a read-only data directory of built files serves
        return raw if instances == "unfiltered" else paths
    with open_store(db, data_dir, seed, noise) as store:
        for split in stale:
            expected = {**_expected(db, seed, split, noise), "instances": "unfiltered"}
            if force:
                store.drop(split)
            keys = slot_keys(split)
            fill(store, db.path, seed, keys, workers, f"behavior2trip: {split} instances")
            # six passes over the split's slots: the bar counts slot reads, not instances
            with progress.step(f"behavior2trip: {split} files (6 passes)", total=6 * len(keys),
                               unit="reads") as bar:  # fmt: skip

                def read(keys=keys, bar=bar, verify=False):  # one of 6 passes over the slots
                    return _counted(store.iter(keys, verify), bar)

                # the first pass checks every slot's digest, the later ones read the same rows
                unfiltered = _write(raw[split], (slot.unfiltered for slot in read(verify=True)))
                write_manifest(raw[split], {**expected, **unfiltered,
                                            "rejections": _rejections(read()),
                                            "stats": _stats(read(), split, "unfiltered")})  # fmt: skip
                filtered = _write(paths[split], (slot.filtered for slot in read()))
                sidecars = write_sidecars(paths[split], split, read())
                write_manifest(paths[split], {
                    **_expected(db, seed, split, noise), "instances": "filtered",
                    "unfiltered_sha256": unfiltered["sha256"], **filtered, **sidecars,
                    "stats": _stats(read(), split, "filtered")})  # fmt: skip
    return raw if instances == "unfiltered" else paths


def _counted(slots: Iterator[Any], bar: progress.Step) -> Iterator[Any]:
    """``slots``, each counted on ``bar`` as it is read."""
    for slot in slots:
        yield slot
        bar.advance()


def _write(path: Path, lines) -> dict[str, Any]:
    """Write JSON ``lines`` to ``path`` atomically; its sha256 and count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    digest, count = hashlib.sha256(), 0
    with replaced_on_success(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for line in lines:
            data = line + "\n"
            fh.write(data)
            digest.update(data.encode())
            count += 1
    return {"sha256": digest.hexdigest(), "count": count}


def _rejections(slots) -> dict[str, int]:
    total: dict[str, int] = {}
    for slot in slots:
        for key, value in slot.info["rejections"].items():
            total[key] = total.get(key, 0) + value
    return dict(sorted(total.items()))


def _stats(slots, split: str, which: str) -> dict[str, Any]:
    sums: dict[str, dict[str, float]] = {}
    for slot in slots:
        into = sums.setdefault(slot.key[1], {})
        for key, value in slot.info["measures"][which].items():
            into[key] = into.get(key, 0) + value
    return table2(sums, split)


def select_slots(split: str, ids: Sequence[str] | None = None, difficulty: str | None = None,
                 limit: int | None = None) -> list[tuple[str, str, int]] | None:  # fmt: skip
    """The slots a selection needs, in file order (None: the whole split): explicit ids, else
    the first ``limit`` (default all) of ``difficulty``, else (a limit alone) the first
    ``limit`` of the Easy/Medium/Hard interleaving. Raises ValueError naming ids that are not in the split."""
    n = SPLITS[split]
    if ids:
        keys, unknown = set(), []
        for iid in ids:
            key = slot_of(split, iid)
            if key is None:
                unknown.append(iid)
            else:
                keys.add(key)
        if unknown:
            raise ValueError(
                f"unknown instance id(s) of the {split} split: {', '.join(unknown)}"
                f"{_other_split(split, unknown)}"
            )
    elif difficulty is not None:
        keys = {(split, difficulty, i) for i in range(n if limit is None else min(limit, n))}
    elif limit is None:
        return None
    else:
        keys = {(split, DIFFICULTIES[j % 3], j // 3) for j in range(min(limit, 3 * n))}
    return sorted(keys, key=lambda k: (DIFFICULTIES.index(k[1]), k[2]))


def slot_of(split: str, iid: str) -> tuple[str, str, int] | None:
    """The slot ``(split, difficulty, index)`` that ``iid`` names in ``split``, or None."""
    import re

    found = re.fullmatch(rf"b2t-{split}-(easy|medium|hard)-(\d{{4,}})", iid)
    if found is None:
        return None
    key = (split, found.group(1), int(found.group(2)))
    return key if key[2] < SPLITS[split] and iid == instance_id(*key) else None


def _other_split(split: str, ids: Sequence[str]) -> str:
    """A hint for ids of another split (the selection reads one split, ``--split``)."""
    for other in SPLITS:
        if other != split and any(slot_of(other, i) for i in ids):
            return f" (ids of the {other} split need --split {other})"
    return f" (ids look like {instance_id(split, 'easy', 0)})"


def known_slots(split: str, ids) -> list[tuple[str, str, int]]:
    """The slots of those ``ids`` that name an instance of ``split`` (others are left out), in
    file order (Easy, Medium, Hard, each by index)."""
    keys = {key for iid in set(ids) if (key := slot_of(split, iid)) is not None}
    return sorted(keys, key=lambda k: (DIFFICULTIES.index(k[1]), k[2]))


def ensure_selected(db, data_dir: str | os.PathLike[str] | None, split: str,
                    keys: Sequence[tuple[str, str, int]], seed: int = DEFAULT_INSTANCE_SEED,
                    instances: str = "filtered", workers: int | None = None,
                    noise: float = 0.0) -> tuple[list[str], list[Instance]]:  # fmt: skip
    """The instances of ``keys`` of ``split`` (JSON lines and parsed, in the order given) at
    the ``noise`` level, building only the slots not built yet: the same bytes as in the full
    files."""
    from travelgym.suites.behavior2trip.instance_slots import fill

    if instances not in INSTANCE_SETS:
        raise ValueError(f"unknown instance set {instances!r} (choose filtered or unfiltered)")
    with open_store(db, data_dir, seed, noise) as store:
        slots = store.get(keys)  # read (and their digests checked) once when all are built
        if len(slots) == len(set(keys)):
            lines = [getattr(slots[k], instances) for k in keys]
        elif _files_current(db, data_dir, seed, split, noise):
            # the complete files hold them (a store removed, or a read-only data directory
            # shipped without one): read, not built again
            path = instances_path(split, data_dir, scale_of(db), instances, noise)
            found = _lines_of(path, [instance_id(*k) for k in keys])
            lines = [found[instance_id(*k)] for k in keys]
        else:
            fill(store, db.path, seed, keys, workers, f"behavior2trip: {split} instances")
            slots = store.get(keys)
            lines = [getattr(slots[k], instances) for k in keys]
    return lines, [Instance.model_validate_json(line) for line in lines]


def _lines_of(path: Path, ids: Sequence[str]) -> dict[str, str]:
    """The lines (without their newline) of the instance file ``path`` whose leading
    ``instance_id`` is one of ``ids``."""
    wanted, found = set(ids), {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            match = LEADING_ID.match(line)
            if match is not None and match.group(1) in wanted:
                found[match.group(1)] = line.rstrip("\n")
    missing = wanted - set(found)
    if missing:
        raise ValueError(f"{path}: lacks instance(s) {', '.join(sorted(missing))}")
    return found


def _files_current(db, data_dir: str | os.PathLike[str] | None, seed: int, split: str,
                   noise: float = 0.0) -> bool:  # fmt: skip
    """Whether both instance files of ``split`` (unfiltered, filtered) are built and current."""
    from travelgym.suites.behavior2trip.quality import RULES_VERSION

    scale = scale_of(db)
    raw = instances_path(split, data_dir, scale, "unfiltered", noise)
    expected = {**_expected(db, seed, split, noise), "instances": "unfiltered"}
    return _is_current(raw, expected) and _is_current(
        instances_path(split, data_dir, scale, noise=noise),
        {**_expected(db, seed, split, noise), "instances": "filtered", "qc_backend": "rules",
         "qc_rules_version": RULES_VERSION, "unfiltered_sha256": read_manifest(raw)["sha256"]})  # fmt: skip


def _is_current(path: Path, expected: dict[str, Any]) -> bool:
    meta = cached_manifest(path)  # None: missing or damaged, built again
    if meta is None or any(meta.get(k) != v for k, v in expected.items()):
        return False
    return meta.get("sha256") == file_sha256(path)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def iter_instances(path: str | os.PathLike[str], check: bool = True) -> Iterator[Instance]:
    """Stream an instance file (checking its sha256 against the manifest first, when there is
    one)."""
    path = Path(path)
    manifest = manifest_path(path)
    if check and manifest.exists() and read_manifest(path).get("sha256") != file_sha256(path):
        raise ValueError(f"{path}: content does not match the sha256 in its manifest")
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    yield Instance.model_validate_json(line)
                except ValueError as exc:
                    raise ValueError(f"{path}:{number}: invalid instance: {exc}") from None


def load_instances(path: str | os.PathLike[str], check: bool = True) -> list[Instance]:
    """Read a whole instance file (see :func:`iter_instances`)."""
    return list(iter_instances(path, check))


def read_instances(path: str | os.PathLike[str], wanted: set[str]):
    """The instances of an instance file whose ids are ``wanted``; a line whose leading
    ``instance_id`` is not wanted is skipped unparsed (instance files are large)."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            found = LEADING_ID.match(line)
            if (found is None or found.group(1) in wanted) and line.strip():
                instance = Instance.model_validate_json(line)
                if instance.instance_id in wanted:
                    yield instance


def instance_stats(data_dir: str | os.PathLike[str] | None = None, db=None,
                   seed: int | None = None, generate: bool = True,
                   noise: float = 0.0) -> dict[str, Any]:  # fmt: skip
    """Table 2 statistics per split and difficulty, next to the paper's values (from the
    manifests; the instances are generated first when ``generate`` and they are missing), of
    the ``noise`` level's files."""
    seed = DEFAULT_INSTANCE_SEED if seed is None else seed
    if db is None:
        from travelgym.suites.behavior2trip.build import ensure_database

        db = ensure_database(data_dir=data_dir) if generate else None
    if generate:
        paths = ensure_instances(db, data_dir, seed, noise=noise)
    else:
        scale = scale_of(db) if db is not None else "small"
        paths = {split: instances_path(split, data_dir, scale, noise=noise) for split in SPLITS}
    out: dict[str, Any] = {"splits": {}, **({"noise": noise} if noise else {})}
    for split, path in paths.items():
        if not manifest_path(path).exists():
            out["splits"][split] = None
            continue
        meta = read_manifest(path)
        out["splits"][split] = {
            "path": str(path),
            "count": meta.get("count"),
            "sha256": meta.get("sha256"),
            "seed": meta.get("seed"),
            "db_content_hash": meta.get("db_content_hash"),
            "by_difficulty": meta.get("stats"),
        }
    out["total"] = sum((s or {}).get("count") or 0 for s in out["splits"].values())
    return out
