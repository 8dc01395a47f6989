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
from travelgym.suites.behavior2trip.instance_stats import table2
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
# automatic quality control (quality_filter.py), the unfiltered one is its own file; 3.0.0: a
# slot left out by the control takes its own next candidate, not an instance beyond the last
# id (instance_slots.py), so any subset builds alone
INSTANCE_GENERATOR_VERSION = "3.0.0"
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
                      rejections: dict[str, int] | None = None, candidate: int = 0,
                      ) -> Instance:  # fmt: skip
    """Instance ``index`` of (split, difficulty): deterministic in its arguments, with a witness
    plan (a profile whose requests have none is drawn again). ``candidate`` ``k > 0`` draws the
    slot's k-th replacement (:mod:`.instance_slots`) from a key of its own, with the same id."""
    iid = instance_id(split, difficulty, index)
    d = rng_for(seed, "instance", split, difficulty, index,
                *(("candidate", candidate) if candidate else ()))  # fmt: skip
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


# --- generation --------------------------------------------------------------------------------

_WORKER_CATALOG: dict[str, PoiCatalog] = {}


def _catalog_for(db_path: str | os.PathLike[str]) -> PoiCatalog:
    """The catalog of ``db_path``, loaded once per process (the same file named by a str or a
    Path is one entry: loading it costs a quarter of a second)."""
    key = os.fspath(db_path)
    if key not in _WORKER_CATALOG:
        _WORKER_CATALOG.clear()
        _WORKER_CATALOG[key] = PoiCatalog.from_database(key)
    return _WORKER_CATALOG[key]


def slot_keys(split: str, per_difficulty: int | None = None) -> list[tuple[str, str, int]]:
    """Every slot of ``split`` in file order (Easy, then Medium, then Hard)."""
    n = SPLITS[split] if per_difficulty is None else per_difficulty
    return [(split, diff, i) for diff in DIFFICULTIES for i in range(n)]


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


def store_path(data_dir: str | os.PathLike[str] | None = None, scale: str = "small") -> Path:
    """The store of built slots for a database of ``scale`` (:mod:`.instance_slots`)."""
    return suite_dir(SUITE, data_dir) / f"instances-{scale}-v{INSTANCE_FORMAT_VERSION}.slots.sqlite"


def open_store(db, data_dir: str | os.PathLike[str] | None, seed: int):
    """The slot store of the instance set of ``db`` and ``seed``."""
    from travelgym.suites.behavior2trip.instance_slots import SlotStore
    from travelgym.suites.behavior2trip.quality import RULES_VERSION

    identity = {**_expected(db, seed, "*"), "qc_rules_version": RULES_VERSION}
    return SlotStore(store_path(data_dir, scale_of(db)), identity)


def ensure_instances(db, data_dir: str | os.PathLike[str] | None = None,
                     seed: int = DEFAULT_INSTANCE_SEED, force: bool = False,
                     workers: int | None = None, splits: Sequence[str] = tuple(SPLITS),
                     instances: str = "filtered") -> dict[str, Path]:  # fmt: skip
    """Write the instance files of ``splits`` (default: train and test) for the database ``db``
    (an object with ``.path`` and ``.metadata``, as ``ensure_database`` returns; its scale names
    the files) unless current files (same versions, seed and database content hash, intact
    sha256) exist. Returns split -> path for ``splits``. A split is built on its own, so asking
    for ``("test",)`` never generates the 9,000 train instances; slots already built (by a run
    of a few instances, say) are reused, not generated again.

    Both sets are written: the unfiltered file and the default quality-filtered one, whose
    manifest records the QC backend, the counts per operation code and the unfiltered file's
    sha256, with the QC records and report beside it
    (:mod:`~travelgym.suites.behavior2trip.quality_filter`)."""
    from travelgym.suites.behavior2trip.instance_slots import fill
    from travelgym.suites.behavior2trip.quality import RULES_VERSION
    from travelgym.suites.behavior2trip.quality_filter import write_sidecars

    unknown = [s for s in splits if s not in SPLITS]
    if unknown:
        raise ValueError(f"unknown split(s): {', '.join(unknown)} (choose train or test)")
    if instances not in INSTANCE_SETS:
        raise ValueError(f"unknown instance set {instances!r} (choose filtered or unfiltered)")
    scale = scale_of(db)
    raw = {split: instances_path(split, data_dir, scale, "unfiltered") for split in splits}
    paths = {split: instances_path(split, data_dir, scale) for split in splits}
    with open_store(db, data_dir, seed) as store:
        for split in splits:
            expected = {**_expected(db, seed, split), "instances": "unfiltered"}
            if not force and _is_current(raw[split], expected) and _is_current(paths[split], {
                    **_expected(db, seed, split), "instances": "filtered",
                    "qc_backend": "rules", "qc_rules_version": RULES_VERSION,
                    "unfiltered_sha256": read_manifest(raw[split])["sha256"]}):  # fmt: skip
                continue
            if force:
                store.drop(split)
            keys = slot_keys(split)
            fill(store, db.path, seed, keys, workers, f"behavior2trip: {split} instances")
            unfiltered = _write(raw[split], (slot.unfiltered for slot in store.iter(keys)))
            write_manifest(raw[split], {**expected, **unfiltered,
                                        "rejections": _rejections(store.iter(keys)),
                                        "stats": _stats(store.iter(keys), split, "unfiltered")})  # fmt: skip
            filtered = _write(paths[split], (slot.filtered for slot in store.iter(keys)))
            sidecars = write_sidecars(paths[split], split, store.iter(keys))
            write_manifest(paths[split], {
                **_expected(db, seed, split), "instances": "filtered",
                "unfiltered_sha256": unfiltered["sha256"], **filtered, **sidecars,
                "stats": _stats(store.iter(keys), split, "filtered")})  # fmt: skip
    return raw if instances == "unfiltered" else paths


def _write(path: Path, lines) -> dict[str, Any]:
    """Write JSON ``lines`` to ``path`` atomically; its sha256 and count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    digest, count = hashlib.sha256(), 0
    with open(tmp, "w", encoding="utf-8") as fh:
        for line in lines:
            data = line + "\n"
            fh.write(data)
            digest.update(data.encode())
            count += 1
    tmp.replace(path)
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
    import re

    n = SPLITS[split]
    if ids:
        pattern = re.compile(rf"b2t-{split}-(easy|medium|hard)-(\d{{4,}})")
        keys, unknown = set(), []
        for iid in ids:
            found = pattern.fullmatch(iid)
            if found is None or int(found.group(2)) >= n or iid != instance_id(
                    split, found.group(1), int(found.group(2))):  # fmt: skip
                unknown.append(iid)
            else:
                keys.add((split, found.group(1), int(found.group(2))))
        if unknown:
            raise ValueError(f"unknown instance id(s): {', '.join(unknown)}")
    elif difficulty is not None:
        keys = {(split, difficulty, i) for i in range(n if limit is None else min(limit, n))}
    elif limit is None:
        return None
    else:
        keys = {(split, DIFFICULTIES[j % 3], j // 3) for j in range(min(limit, 3 * n))}
    return sorted(keys, key=lambda k: (DIFFICULTIES.index(k[1]), k[2]))


def known_slots(split: str, ids) -> list[tuple[str, str, int]]:
    """The slots of those ``ids`` that name an instance of ``split`` (others are left out)."""
    keys = []
    for iid in sorted(set(ids)):
        try:
            keys += select_slots(split, [iid]) or []
        except ValueError:
            continue
    return keys


def ensure_selected(db, data_dir: str | os.PathLike[str] | None, split: str,
                    keys: Sequence[tuple[str, str, int]], seed: int = DEFAULT_INSTANCE_SEED,
                    instances: str = "filtered", workers: int | None = None,
                    ) -> tuple[list[str], list[Instance]]:  # fmt: skip
    """The instances of ``keys`` of ``split`` (JSON lines and parsed, in the order given),
    building only the slots not built yet: the same bytes as in the full files."""
    from travelgym.suites.behavior2trip.instance_slots import fill

    if instances not in INSTANCE_SETS:
        raise ValueError(f"unknown instance set {instances!r} (choose filtered or unfiltered)")
    with open_store(db, data_dir, seed) as store:
        fill(store, db.path, seed, keys, workers, f"behavior2trip: {split} instances")
        slots = store.get(keys)
    lines = [getattr(slots[k], instances) for k in keys]
    return lines, [Instance.model_validate_json(line) for line in lines]


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
