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
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from travelgym.datafiles import manifest_path, read_manifest, write_manifest
from travelgym.paths import suite_dir
from travelgym.suites.behavior2trip.actions import Action
from travelgym.suites.behavior2trip.behaviour import SPECS, build_pool, generate_trajectory
from travelgym.suites.behavior2trip.behaviour_pool import (
    CandidatePool,
    PoiCatalog,
    PoolError,
    Thread,
)
from travelgym.suites.behavior2trip.behaviour_rules import validate_trajectory
from travelgym.suites.behavior2trip.instance_stats import measures, table2
from travelgym.suites.behavior2trip.instruction import Instruction, make_instruction
from travelgym.suites.behavior2trip.preferences import (
    Experience,
    HistoricalTravelExperiences,
    poi_matches,
)
from travelgym.suites.behavior2trip.profiles import (
    DIFFICULTIES,
    Draws,
    Profile,
    rng_for,
    sample_profile,
)

INSTANCE_FORMAT_VERSION = "2"  # 2: the hidden witness plan
# 2.0.0: requests without a witness are drawn again; 2.1.0: the default set is filtered by the
# automatic quality control (quality_filter.py), the unfiltered one is its own file
INSTANCE_GENERATOR_VERSION = "2.1.0"
INSTANCE_SETS = ("filtered", "unfiltered")
DEFAULT_INSTANCE_SEED = 2024
SUITE = "behavior2trip"
SPLITS = {"train": 3000, "test": 800}  # instances per difficulty
MAX_ATTEMPTS = 100


class Instance(BaseModel):
    """One (trajectory, profile, instruction) triplet. Agents see ``trajectory`` and
    ``instruction.text``; ``profile`` is hidden (it drives the preference checks), and so is
    ``witness``: a plan passing every applicable check, found while generating
    (:mod:`~travelgym.suites.behavior2trip.witness`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    instance_id: str
    split: Literal["train", "test"]
    difficulty: Literal["easy", "medium", "hard"]
    instruction: Instruction
    trajectory: list[Action]
    profile: Profile
    witness: str | None = Field(default=None, repr=False)

    @property
    def n_pois(self) -> int:
        return len({a.poi_id for a in self.trajectory})

    @property
    def task_id(self) -> str:
        """The id the run store keys episodes by (the instance id)."""
        return self.instance_id


def instance_id(split: str, difficulty: str, index: int) -> str:
    return f"b2t-{split}-{difficulty}-{index:04d}"


def with_history(profile: Profile, trajectory: Sequence[Action]) -> Profile:
    """The profile with its historical travel experiences: the POIs booked in the trajectory."""
    lists: dict[str, list[Experience]] = {"accommodations": [], "restaurants": [], "attractions": [],
                                          "transportation": []}  # fmt: skip
    target = {"hotel": "accommodations", "restaurant": "restaurants", "attraction": "attractions",
              "flight": "transportation", "train": "transportation", "bus": "transportation"}  # fmt: skip
    for a in trajectory:
        if a.action_type == "book" and a.poi_type in target:
            lists[target[a.poi_type]].append(
                Experience(
                    poi_id=a.poi_id,
                    name=a.poi_name,
                    poi_type=a.poi_type,
                    city=a.city,
                    date=a.timestamp[:10],
                    labels=a.categories,
                )  # fmt: skip
            )
    history = HistoricalTravelExperiences(**lists)
    prefs = profile.preferences.model_copy(update={"historical_travel_experiences": history})
    return profile.model_copy(update={"preferences": prefs})


def draw_triplet(catalog: PoiCatalog, d: Draws, pid: str, difficulty: str,
                 rejections: dict[str, int]) -> tuple[Profile, CandidatePool, list[Action]]:  # fmt: skip
    """A consistent profile, its pool and a valid trajectory (redrawing what fails)."""
    for _ in range(MAX_ATTEMPTS):
        profile = sample_profile(d, pid, difficulty, rejections)
        try:
            pool = build_pool(profile, catalog, d)
        except PoolError:
            rejections["pool"] = rejections.get("pool", 0) + 1
            continue
        trajectory = generate_trajectory(profile, pool, d)
        if validate_trajectory(trajectory, pool):
            rejections["trajectory"] = rejections.get("trajectory", 0) + 1
            continue
        return profile, pool, trajectory
    raise RuntimeError(f"{pid}: no valid trajectory after {MAX_ATTEMPTS} attempts")


def generate_instance(catalog: PoiCatalog, seed: int, split: str, difficulty: str, index: int,
                      rejections: dict[str, int] | None = None) -> Instance:  # fmt: skip
    """Instance ``index`` of (split, difficulty): deterministic in its arguments, with a witness
    plan (a profile whose requests have none is drawn again)."""
    iid = instance_id(split, difficulty, index)
    d = rng_for(seed, "instance", split, difficulty, index)
    rejections = rejections if rejections is not None else {}
    for _ in range(MAX_ATTEMPTS):
        profile, _, trajectory = draw_triplet(catalog, d, iid, difficulty, rejections)
        instance = _assemble(catalog, d, iid, split, difficulty, profile, trajectory, rejections)
        if instance is not None:
            return instance
    raise RuntimeError(f"{iid}: no satisfiable request after {MAX_ATTEMPTS} profiles")


def _assemble(catalog, d, iid, split, difficulty, profile, trajectory,
              rejections: dict[str, int]) -> Instance | None:  # fmt: skip
    """The instance of a profile and trajectory with a request that has a witness plan (None
    when no drawn request has one: :func:`~travelgym.suites.behavior2trip.witness.witnessed`)."""
    from travelgym.suites.behavior2trip.witness import witnessed

    if catalog.source is None:
        raise ValueError("instances are generated over a database: load the catalog with "
                         "PoiCatalog.from_database")  # fmt: skip
    profile = with_history(profile, trajectory)

    def build(instruction: Instruction) -> Instance:
        return Instance(instance_id=iid, split=split, difficulty=difficulty,
                        instruction=instruction, trajectory=trajectory, profile=profile)  # fmt: skip

    found = witnessed(lambda like: make_instruction(profile, trajectory, catalog, d, like),
                      build, catalog.source, rejections)  # fmt: skip
    if found is None:
        rejections["witness_profile"] = rejections.get("witness_profile", 0) + 1
    return found


async def agenerate_instance(catalog: PoiCatalog, seed: int, split: str, difficulty: str,
                             index: int, backend, rejections: dict[str, int] | None = None,
                             ) -> Instance:  # fmt: skip
    """:func:`generate_instance` with any trajectory backend (e.g. the LLM
    :class:`~travelgym.suites.behavior2trip.roleplay.RoleplayBackend`): a profile whose trajectory the backend
    cannot write validly is redrawn."""
    from travelgym.suites.behavior2trip.roleplay import RoleplayError

    rejections = rejections if rejections is not None else {}
    iid = instance_id(split, difficulty, index)
    d = rng_for(seed, "instance", split, difficulty, index)
    for _ in range(MAX_ATTEMPTS):
        profile = sample_profile(d, iid, difficulty, rejections)
        try:
            pool = build_pool(profile, catalog, d)
        except PoolError:
            rejections["pool"] = rejections.get("pool", 0) + 1
            continue
        try:
            trajectory = await backend.agenerate(profile, pool, d)
        except RoleplayError:
            trajectory = None
        if trajectory is None or validate_trajectory(trajectory, pool):
            rejections["trajectory"] = rejections.get("trajectory", 0) + 1
            continue
        instance = _assemble(catalog, d, iid, split, difficulty, profile, trajectory, rejections)
        if instance is not None:
            return instance
    raise RuntimeError(f"{iid}: no valid trajectory after {MAX_ATTEMPTS} attempts")


def generate_split(catalog: PoiCatalog, seed: int, split: str, per_difficulty: int | None = None,
                   rejections: dict[str, int] | None = None) -> list[Instance]:  # fmt: skip
    """All instances of one split, Easy then Medium then Hard (in this process)."""
    n = SPLITS[split] if per_difficulty is None else per_difficulty
    return [generate_instance(catalog, seed, split, diff, i, rejections)
            for diff in DIFFICULTIES for i in range(n)]  # fmt: skip


# --- parallel generation -----------------------------------------------------------------------

CHUNK = 400
_WORKER_CATALOG: dict[str, PoiCatalog] = {}


def _catalog_for(db_path: str) -> PoiCatalog:
    if db_path not in _WORKER_CATALOG:
        _WORKER_CATALOG.clear()
        _WORKER_CATALOG[db_path] = PoiCatalog.from_database(db_path)
    return _WORKER_CATALOG[db_path]


def _chunk(job: tuple[str, int, str, str, int, int]) -> tuple[list[str], dict[str, int], dict]:
    """Generate instances ``start..stop`` of one (split, difficulty): JSON lines, rejections and
    partial sums for the statistics."""
    db_path, seed, split, diff, start, stop = job
    catalog = _catalog_for(db_path)
    rejections: dict[str, int] = {}
    lines, sums = [], {}
    for i in range(start, stop):
        inst = generate_instance(catalog, seed, split, diff, i, rejections)
        lines.append(inst.model_dump_json())
        for key, value in measures(inst).items():
            sums[key] = sums.get(key, 0) + value
    return lines, rejections, sums


def generate_files(db_path: str | os.PathLike[str], seed: int, splits: Sequence[str],
                   paths: dict[str, Path], workers: int | None = None,
                   per_difficulty: int | None = None) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Generate ``splits`` in chunks over ``workers`` forked processes (default: the CPU count, at
    most 4; in this process when other threads run or fork is unavailable) and write each file;
    returns split -> {sha256, count, rejections, stats}. The output does not depend on the number
    of workers."""
    jobs = []
    for split in splits:
        n = SPLITS[split] if per_difficulty is None else per_difficulty
        for diff in DIFFICULTIES:
            jobs += [(str(db_path), seed, split, diff, lo, min(lo + CHUNK, n))
                     for lo in range(0, n, CHUNK)]  # fmt: skip
    workers = min(workers or os.cpu_count() or 1, 4, len(jobs))
    if workers > 1 and _can_fork():
        with ProcessPoolExecutor(workers, mp_context=_mp_context()) as pool:
            results = list(pool.map(_chunk, jobs))
    else:
        results = [_chunk(job) for job in jobs]
    out = {}
    for split in splits:
        parts = [(job, res) for job, res in zip(jobs, results, strict=True) if job[2] == split]
        text = "".join(line + "\n" for _, (lines, _, _) in parts for line in lines)
        rejections: dict[str, int] = {}
        sums: dict[str, dict[str, float]] = {}
        for job, (_, rej, part) in parts:
            for key, value in rej.items():
                rejections[key] = rejections.get(key, 0) + value
            into = sums.setdefault(job[3], {})
            for key, value in part.items():
                into[key] = into.get(key, 0) + value
        path = paths[split]
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        out[split] = {
            "sha256": hashlib.sha256(text.encode()).hexdigest(),
            "count": sum(len(lines) for _, (lines, _, _) in parts),
            "rejections": dict(sorted(rejections.items())),
            "stats": table2(sums, split),
        }
    return out


def _mp_context():
    """``fork``: workers inherit the loaded modules and need no importable ``__main__``."""
    import multiprocessing as mp

    return mp.get_context("fork")


def _can_fork() -> bool:
    """Forking is safe only without other threads (their locks would be copied mid-use)."""
    import multiprocessing as mp
    import threading

    return "fork" in mp.get_all_start_methods() and threading.active_count() == 1


# --- files -------------------------------------------------------------------------------------


def instances_path(split: str, data_dir: str | os.PathLike[str] | None = None,
                   scale: str = "small", instances: str = "filtered") -> Path:  # fmt: skip
    """Where the instances of ``split`` for a database of ``scale`` live (the name carries the
    scale and :data:`INSTANCE_FORMAT_VERSION`); ``instances``: the default quality-filtered
    set or the ``unfiltered`` one (``...-<split>-unfiltered.jsonl``)."""
    if instances not in INSTANCE_SETS:
        raise ValueError(f"unknown instance set {instances!r} (choose filtered or unfiltered)")
    tail = "-unfiltered" if instances == "unfiltered" else ""
    name = f"instances-{scale}-v{INSTANCE_FORMAT_VERSION}-{split}{tail}.jsonl"
    return suite_dir(SUITE, data_dir) / name


def scale_of(db) -> str:
    """The scale (small or full) a built database was made at."""
    return (db.metadata or {}).get("scale") or "small"


def _expected(db, seed: int, split: str) -> dict[str, Any]:
    return {
        "format_version": INSTANCE_FORMAT_VERSION,
        "generator_version": INSTANCE_GENERATOR_VERSION,
        "seed": seed,
        "split": split,
        "db_content_hash": db.metadata.get("content_hash"),
        "db_scale": db.metadata.get("scale"),
        "db_seed": db.metadata.get("seed"),
    }


def ensure_instances(db, data_dir: str | os.PathLike[str] | None = None,
                     seed: int = DEFAULT_INSTANCE_SEED, force: bool = False,
                     workers: int | None = None, splits: Sequence[str] = tuple(SPLITS),
                     instances: str = "filtered") -> dict[str, Path]:  # fmt: skip
    """Write the instance files of ``splits`` (default: train and test) for the database ``db``
    (an object with ``.path`` and ``.metadata``, as ``ensure_database`` returns; its scale names
    the files) unless current files (same versions, seed and database content hash, intact
    sha256) exist. Returns split -> path for ``splits``. A split is generated on its own, so
    asking for ``("test",)`` never generates the 9,000 train instances.

    ``instances="filtered"`` (the default set) also writes the unfiltered file it is filtered
    from (:mod:`~travelgym.suites.behavior2trip.quality_filter`); its manifest records the QC
    backend, the counts per operation code and the unfiltered file's sha256."""
    unknown = [s for s in splits if s not in SPLITS]
    if unknown:
        raise ValueError(f"unknown split(s): {', '.join(unknown)} (choose train or test)")
    if instances not in INSTANCE_SETS:
        raise ValueError(f"unknown instance set {instances!r} (choose filtered or unfiltered)")
    scale = scale_of(db)
    raw = {split: instances_path(split, data_dir, scale, "unfiltered") for split in splits}
    expected = {s: {**_expected(db, seed, s), "instances": "unfiltered"} for s in splits}
    todo = [s for s, p in raw.items() if force or not _is_current(p, expected[s])]
    if todo:
        written = generate_files(db.path, seed, todo, raw, workers)
        for split in todo:
            write_manifest(raw[split], {**expected[split], **written[split]})
    if instances == "unfiltered":
        return raw
    from travelgym.suites.behavior2trip.quality import RULES_VERSION
    from travelgym.suites.behavior2trip.quality_filter import filter_files

    paths = {split: instances_path(split, data_dir, scale) for split in splits}
    for split, path in paths.items():
        want = {**_expected(db, seed, split), "instances": "filtered", "qc_backend": "rules",
                "qc_rules_version": RULES_VERSION,
                "unfiltered_sha256": read_manifest(raw[split])["sha256"]}  # fmt: skip
        if force or split in todo or not _is_current(path, want):
            written = filter_files(db.path, seed, split, raw[split], path, workers)
            write_manifest(path, {**want, **written})
    return paths


def _is_current(path: Path, expected: dict[str, Any]) -> bool:
    if not path.exists() or not manifest_path(path).exists():
        return False
    meta = read_manifest(path)
    if any(meta.get(k) != v for k, v in expected.items()):
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


def instance_pool(instance: Instance, catalog: PoiCatalog) -> CandidatePool:
    """The candidate pool of an instance's trajectory rebuilt from the database and the hidden
    profile: a POI is matched when it satisfies the preferences, noise when it does not. With it,
    :func:`~travelgym.suites.behavior2trip.behaviour.validate_trajectory` re-checks a stored trajectory."""
    prefs = instance.profile.preferences
    threads: dict[tuple[str, str], Thread] = {}
    seen: set[str] = set()
    for a in instance.trajectory:
        poi = catalog.pois.get(a.poi_id)
        if poi is None or poi.poi_id in seen:
            continue  # an unknown POI is reported by the validator
        seen.add(poi.poi_id)
        t = threads.setdefault((poi.city, poi.focus), Thread(poi.city, poi.focus, []))
        (t.matched if poi_matches(prefs, poi) else t.noise).append(poi)
    return CandidatePool(instance.instance_id, instance.difficulty, list(threads.values()),
                         SPECS[instance.difficulty].noise[1])  # fmt: skip


def read_instances(path: str | os.PathLike[str], wanted: set[str]):
    """The instances of an instance file whose ids are ``wanted``; a line whose leading
    ``instance_id`` is not wanted is skipped unparsed (instance files are large)."""
    import re

    leading_id = re.compile(r'\{"instance_id":"([^"\\]*)"')
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            found = leading_id.match(line)
            if (found is None or found.group(1) in wanted) and line.strip():
                instance = Instance.model_validate_json(line)
                if instance.instance_id in wanted:
                    yield instance
