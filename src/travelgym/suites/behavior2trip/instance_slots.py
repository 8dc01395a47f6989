"""Instances built per slot, on demand: a run of 20 instances generates 20, not 11,400.

Slot ``i`` of (split, difficulty) is the instance with id ``b2t-<split>-<difficulty>-<i>``. Its
*unfiltered* instance is candidate 0, drawn from the generator key ``(seed, "instance", split,
difficulty, i)``; its *filtered* instance (the default set) is the first candidate ``0, 1, 2,
...`` that the rule-based quality control keeps (corrections applied: :mod:`.quality_filter`),
candidate ``k > 0`` drawn from the key ``(seed, "instance", split, difficulty, i, "candidate",
k)``. A slot depends on nothing but its key, the seed and the database, so any subset of slots
built alone has the same ids and bytes as the same slots of a full build, whatever the order or
number of workers.

Built slots are kept in a SQLite store beside the instance files
(``instances-<scale>-v<format>.slots.sqlite``; another database seed, instance seed or noise
level has a file of its own), keyed by the set's identity (generator and QC versions, seed,
database content hash) and each row by a sha256 of its content; the full
instance files (:func:`~travelgym.suites.behavior2trip.instances.ensure_instances`) are
assembled from it.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import hashlib
import itertools
import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from travelgym import progress
from travelgym.core.errors import UserError

MAX_CANDIDATES = 64  # candidates tried for one slot before the generator gives up
CHUNK = 8  # slots per job sent to a worker (small: the progress bar moves and loads balance)
IN_PROCESS_MAX = 24  # at most this many slots to build: no worker processes
# allocations between two young-generation passes of the cyclic collector while a slot is built:
# more than a slot makes, so it collects once a slot, when the default 700 is put back (the
# default makes it walk the search's per-process caches again and again: 0.5-1 ms a slot)
GC_YOUNG = 100_000
FILL_ROUNDS = 3  # builds of the missing slots before a store that keeps losing them is an error


class StoreChanged(UserError):
    """Slots this build stored were removed again by another process, round after round."""


class ReadOnlyStore(UserError):
    """Slots are missing from a store this process cannot write: nothing is built."""


SLOTS_TABLE = (
    "CREATE TABLE IF NOT EXISTS slots (identity TEXT NOT NULL, split TEXT NOT NULL, "
    "difficulty TEXT NOT NULL, idx INTEGER NOT NULL, unfiltered TEXT NOT NULL, "
    "filtered TEXT NOT NULL, info TEXT NOT NULL, digest TEXT NOT NULL, "
    "PRIMARY KEY (identity, split, difficulty, idx))"
)
# a file system or directory that refuses writes (a read-only mount; no write permission)
READ_ONLY_ERRNOS = (errno.EROFS, errno.EACCES, errno.EPERM)
READ_ONLY_SQLITE = ("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")


def _read_only(exc: sqlite3.DatabaseError) -> bool:
    """Whether SQLite refused to open or change the store for want of write access (as
    opposed to a damaged file)."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return any(name.startswith(code) for code in READ_ONLY_SQLITE)


Key = tuple[str, str, int]  # (split, difficulty, index)


@dataclass(frozen=True)
class Slot:
    """One built slot: the unfiltered and filtered instances (JSON lines) and what it took."""

    key: Key
    unfiltered: str
    filtered: str
    info: dict[str, Any]  # rejections, measures, the QC record and report of each candidate

    def digest(self) -> str:
        return _digest(self.unfiltered, self.filtered, json.dumps(self.info, sort_keys=True))


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


# --- building ----------------------------------------------------------------------------------


def build_slot(db_path: str, seed: int, key: Key, noise: float = 0.0) -> Slot:
    """Build one slot in this process (pure in its arguments; ``noise``: the ``--noise``
    level of its behaviour)."""
    with _fewer_collections():
        return _build_slot(db_path, seed, key, noise)


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """The cyclic collector's young generation raised to :data:`GC_YOUNG` allocations for the
    block, then put back (reference cycles are still collected, less often; what is built
    does not depend on when)."""
    old = gc.get_threshold()
    if old[0] >= GC_YOUNG:
        yield
        return
    gc.set_threshold(GC_YOUNG, *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def _build_slot(db_path: str, seed: int, key: Key, noise: float = 0.0) -> Slot:
    from travelgym.suites.behavior2trip.behaviour_pool import catalog_for
    from travelgym.suites.behavior2trip.instance_gen import generate_instance
    from travelgym.suites.behavior2trip.instance_stats import measures
    from travelgym.suites.behavior2trip.quality_filter import control

    split, difficulty, index = key
    catalog = catalog_for(db_path)
    rejections: dict[str, int] = {}
    candidates = []
    first = None
    for k in range(MAX_CANDIDATES):
        instance = generate_instance(catalog, seed, split, difficulty, index,
                                     rejections if k == 0 else None, candidate=k,
                                     noise=noise)  # fmt: skip
        first = first or instance
        record, kept, report = control(db_path, instance)
        candidates.append({"qc": record.model_dump_json(), "report": report})
        if kept is not None:
            info = {"rejections": dict(sorted(rejections.items())), "candidates": candidates,
                    "measures": {"unfiltered": measures(first), "filtered": measures(kept)}}  # fmt: skip
            return Slot(key, first.model_dump_json(), kept.model_dump_json(), info)
    raise RuntimeError(f"{first.instance_id}: no candidate passed quality control after "
                       f"{MAX_CANDIDATES} candidates")  # fmt: skip


def _chunk(job: tuple[str, int, list[Key], float]) -> list[Slot]:
    db_path, seed, keys, noise = job
    with _fewer_collections():  # one setting for the whole job (each slot keeps it)
        return [build_slot(db_path, seed, key, noise) for key in keys]


def build_slots(db_path: str, seed: int, keys: Sequence[Key], workers: int | None = None,
                label: str = "behavior2trip: instances", noise: float = 0.0,
                done: int = 0) -> Iterator[Slot]:  # fmt: skip
    """Build ``keys`` (over ``workers`` processes, default every core this process may use;
    in this process when there are few) at the ``noise`` level, yielding slots as they finish
    (in any order), with a progress bar (counting on from ``done`` slots an earlier, stopped
    build of the same request stored)."""
    from travelgym.parallel import first_done, result_of, usable_cores, worker_pool

    keys = list(keys)
    if not keys:
        return
    workers = min(workers or usable_cores(), -(-len(keys) // CHUNK))
    with progress.step(f"{label}, witness+QC", total=done + len(keys), unit="inst",
                       initial=done) as bar:  # fmt: skip
        if workers <= 1 or len(keys) <= IN_PROCESS_MAX:
            for key in keys:
                yield build_slot(str(db_path), seed, key, noise)
                bar.advance()
            return
        jobs = iter([(str(db_path), seed, keys[lo : lo + CHUNK], noise)
                     for lo in range(0, len(keys), CHUNK)])  # fmt: skip
        with worker_pool(workers) as pool:
            assert pool is not None
            # a bounded number of jobs in flight: finished slots never pile up in memory
            running = {pool.submit(_chunk, job) for job in itertools.islice(jobs, 2 * workers)}
            while running:
                done, running = first_done(running, pool)
                for future in done:
                    slots = result_of(future, pool)
                    yield from slots
                    bar.advance(len(slots))
                running |= {pool.submit(_chunk, job) for job in itertools.islice(jobs, len(done))}


# --- the store ---------------------------------------------------------------------------------


class SlotStore:
    """Built slots of one instance set identity, in a SQLite file (safe to share between
    processes: each write is one transaction; a row whose digest does not match is rebuilt)."""

    def __init__(self, path: Path, identity: dict[str, Any]) -> None:
        self.path = Path(path)
        self.identity = _digest(json.dumps(identity, sort_keys=True))
        self.noise = float(identity.get("noise", 0.0))  # the --noise level its slots are built at
        self.writable = True
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._open()
        except sqlite3.DatabaseError as exc:
            if not _read_only(exc):  # not a database (damaged): a cache, so built anew
                for side in ("", "-wal", "-shm"):
                    Path(f"{self.path}{side}").unlink(missing_ok=True)
                self._open()
            else:
                self._open_read_only()
        except OSError as exc:
            if exc.errno not in READ_ONLY_ERRNOS:
                raise
            self._open_read_only()

    def _open(self) -> None:
        self._conn = sqlite3.connect(self.path, timeout=120, isolation_level=None)
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(SLOTS_TABLE)
            # slots of another identity (an older generator, another database) are never read
            self._conn.execute("DELETE FROM slots WHERE identity != ?", (self.identity,))
        except sqlite3.DatabaseError:
            self._conn.close()
            raise

    def _open_read_only(self) -> None:
        """The slots of a store this process cannot write (a shared data directory on a
        read-only mount, say): read as they are (nothing writes a read-only file meanwhile),
        none when there is no store; building a slot then fails (:func:`fill`)."""
        self.writable = False
        if self.path.is_file():
            uri = f"{self.path.resolve().as_uri()}?mode=ro&immutable=1"
            self._conn = sqlite3.connect(uri, uri=True, isolation_level=None)
            try:
                self._conn.execute("SELECT 1 FROM slots LIMIT 1").fetchall()
                return
            except sqlite3.DatabaseError:  # damaged or of another format: no usable slot
                self._conn.close()
        self._conn = sqlite3.connect(":memory:", isolation_level=None)
        self._conn.execute(SLOTS_TABLE)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SlotStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, keys: Iterable[Key]) -> dict[Key, Slot]:
        """The intact stored slots among ``keys``."""
        out: dict[Key, Slot] = {}
        by_split: dict[tuple[str, str], list[int]] = {}
        for split, difficulty, index in keys:
            by_split.setdefault((split, difficulty), []).append(index)
        for (split, difficulty), indices in by_split.items():
            for lo in range(0, len(indices), 500):
                part = indices[lo : lo + 500]
                rows = self._conn.execute(
                    "SELECT idx, unfiltered, filtered, info, digest FROM slots WHERE identity = ? "
                    f"AND split = ? AND difficulty = ? AND idx IN ({','.join('?' * len(part))})",
                    (self.identity, split, difficulty, *part),
                ).fetchall()
                for idx, unfiltered, filtered, info, digest in rows:
                    if _digest(unfiltered, filtered, info) == digest:
                        key = (split, difficulty, idx)
                        out[key] = Slot(key, unfiltered, filtered, json.loads(info))
        return out

    def iter(self, keys: Iterable[Key], verify: bool = True) -> Iterator[Slot]:
        """The stored slots of ``keys`` (each (split, difficulty) in index order), streamed;
        raises LookupError when one is missing or (``verify``: their digests are checked)
        damaged. Later passes over slots one pass has verified may skip the digests."""
        groups: dict[tuple[str, str], set[int]] = {}
        for split, difficulty, index in keys:
            groups.setdefault((split, difficulty), set()).add(index)
        for (split, difficulty), wanted in groups.items():
            rows = self._conn.execute(
                "SELECT idx, unfiltered, filtered, info, digest FROM slots WHERE identity = ? "
                "AND split = ? AND difficulty = ? ORDER BY idx",
                (self.identity, split, difficulty),
            )
            seen = 0
            for idx, unfiltered, filtered, info, digest in rows:
                if idx not in wanted:
                    continue
                if verify and _digest(unfiltered, filtered, info) != digest:
                    raise LookupError(f"{self.path}: slot {split}/{difficulty}/{idx} is damaged")
                seen += 1
                yield Slot((split, difficulty, idx), unfiltered, filtered, json.loads(info))
            if seen != len(wanted):
                raise LookupError(f"{self.path}: {len(wanted) - seen} slot(s) of "
                                  f"{split}/{difficulty} are not built")  # fmt: skip

    def missing(self, keys: Iterable[Key]) -> list[Key]:
        """The keys among ``keys`` with no intact stored slot, in their order."""
        keys = list(keys)
        have = set()
        for lo in range(0, len(keys), 2000):
            have |= set(self.get(keys[lo : lo + 2000]))
        return [k for k in keys if k not in have]

    def absent(self, keys: Iterable[Key]) -> list[Key]:
        """The keys among ``keys`` with no stored row at all (their content is not read: a
        quick check that rows just stored are still there), in their order."""
        keys = list(keys)
        have: set[Key] = set()
        for split, difficulty in dict.fromkeys((k[0], k[1]) for k in keys):
            rows = self._conn.execute("SELECT idx FROM slots WHERE identity = ? AND split = ? "
                                      "AND difficulty = ?", (self.identity, split, difficulty))  # fmt: skip
            have.update((split, difficulty, idx) for (idx,) in rows)
        return [k for k in keys if k not in have]

    def put(self, slots: Iterable[Slot]) -> None:
        rows = [(self.identity, *s.key, s.unfiltered, s.filtered,
                 json.dumps(s.info, sort_keys=True), s.digest()) for s in slots]  # fmt: skip
        if rows:
            with self._conn:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.executemany("INSERT OR REPLACE INTO slots VALUES (?,?,?,?,?,?,?,?)",
                                       rows)  # fmt: skip

    def drop(self, split: str) -> None:
        """Forget every stored slot of ``split`` (a forced rebuild)."""
        if not self.writable:
            raise ReadOnlyStore(f"{self.path.parent} is read-only: its {split} slots cannot be "
                                "built again")  # fmt: skip
        self._conn.execute("DELETE FROM slots WHERE identity = ? AND split = ?",
                           (self.identity, split))  # fmt: skip


def fill(store: SlotStore, db_path: str, seed: int, keys: Sequence[Key],
         workers: int | None = None, label: str = "behavior2trip: instances") -> int:  # fmt: skip
    """Build the slots of ``keys`` the store lacks (at the ``noise`` level its identity
    carries), storing them as they finish (an interrupted build keeps what it made); returns
    how many were built. Every slot of ``keys`` is stored on return: slots another process
    removed meanwhile (e.g. a store of an older generator opened anew) are built again."""
    built = 0
    for round_ in range(FILL_ROUNDS):
        # every stored slot's content is checked once; later rounds only ask which rows are gone
        missing = store.missing(keys) if round_ == 0 else store.absent(keys)
        if not missing:
            return built
        if not store.writable:
            raise ReadOnlyStore(f"{store.path.parent} is read-only and {len(missing):,} of the "
                                f"{len(keys):,} instance slot(s) asked for are not built there: "
                                "build them with this command on a writable --data-dir")  # fmt: skip
        batch: list[Slot] = []
        try:
            for slot in build_slots(db_path, seed, missing, workers, label, store.noise,
                                    done=len(keys) - len(missing)):  # fmt: skip
                batch.append(slot)
                if len(batch) >= 64:
                    store.put(batch)
                    batch = []
        finally:  # also the slots built before an error or Ctrl-C: a later build reuses them
            store.put(batch)
        built += len(missing)
    if store.absent(keys):
        raise StoreChanged(f"{store.path}: another process keeps removing the slots this build "
                           "stores (a travelgym of another version on the same data directory?)")  # fmt: skip
    return built
