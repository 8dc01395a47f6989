"""Where a run's TravelPlanner data comes from: the file ``travelgym ingest travelplanner``
wrote, or (``--data PATH [--database DIR]``) a copy ingested from those files into a cache in
the data directory, reused while the files are unchanged. :class:`PlannerData` gives the queries
of a split and the sandbox each query's plan is checked against."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from travelgym.core.errors import UserError
from travelgym.db import connect_readonly
from travelgym.paths import suite_dir
from travelgym.suites.travelplanner.dataset import split_of
from travelgym.suites.travelplanner.ingest import SUITE, ingest, load_queries, open_ingested
from travelgym.suites.travelplanner.records import Query
from travelgym.suites.travelplanner.sandbox import Sandbox
from travelgym.suites.travelplanner.sandbox_db import DatabaseSandbox
from travelgym.suites.travelplanner.sandbox_reference import ReferenceSandbox

CACHE = "from-files"  # <data dir>/travelplanner/from-files/<key>.sqlite
DEFAULT_SPLIT = "validation"


def _fingerprint(paths: list[Path]) -> str:
    """A key over every file under ``paths`` (name, size, modification time)."""
    digest = hashlib.sha256()
    for root in paths:
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for file in files:
            stat = file.stat()
            digest.update(f"{file.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def cached_ingest(dataset: str | os.PathLike[str], database: str | os.PathLike[str] | None,
                  data_dir: Path | None, split: str | None = None) -> Path:  # fmt: skip
    """The ingested copy of ``dataset`` (and ``database``) in the cache, made when missing or
    when a file changed since; returns its path."""
    sources = [Path(dataset).expanduser()] + ([Path(database).expanduser()] if database else [])
    for source in sources:
        if not source.exists():
            raise UserError(f"{source}: no such file or directory")
    if sources[0].is_file() and split is None and split_of(sources[0]) is None:
        raise UserError(f"{sources[0]}: cannot tell the split from the file name; add --split "
                        "train, validation or test")  # fmt: skip
    key = _fingerprint(sources) + (f"\0{split}" if split else "")
    name = hashlib.sha256(key.encode()).hexdigest()[:20] + ".sqlite"
    path = suite_dir(SUITE, data_dir) / CACHE / name
    if not path.exists():
        ingest(sources[0], sources[1] if database else None, data_dir, split=split, out=path)
    return path


class PlannerData:
    """An ingested TravelPlanner file, open read-only: its metadata, queries and sandboxes."""

    def __init__(self, path: Path, meta: dict) -> None:
        self.path, self.meta = Path(path), meta
        self.conn = connect_readonly(self.path)
        self.database = DatabaseSandbox(self.conn) if self.has_database else None

    @classmethod
    def open(cls, data: str | None = None, database: str | None = None,
             data_dir: Path | None = None, split: str | None = None) -> PlannerData:  # fmt: skip
        """The data of ``--data``/``--database`` (cached ingest) or, without ``data``, the
        ingested file of the data directory (``--database`` alone is refused)."""
        if data is None and database is not None:
            raise UserError("--database goes with --data PATH (or ingest both: `travelgym "
                            "ingest travelplanner --dataset PATH --database DIR`)")  # fmt: skip
        path = cached_ingest(data, database, data_dir, split) if data is not None else None
        return cls(*open_ingested(data_dir, path))

    @property
    def content_hash(self) -> str:
        """The content hash ingest computed."""
        return str(self.meta["content_hash"])

    @property
    def has_database(self) -> bool:
        """Whether the database was ingested with the dataset."""
        return bool(self.meta.get("has_database"))

    @property
    def splits(self) -> dict[str, int]:
        """Queries per ingested split."""
        return dict(self.meta.get("splits") or {})

    def split(self, wanted: str | None) -> str:
        """The split to use: ``wanted``, else the only one ingested, else validation."""
        if wanted is not None:
            return wanted
        return next(iter(self.splits)) if len(self.splits) == 1 else DEFAULT_SPLIT

    def queries(self, split: str | None) -> list[Query]:
        """The queries of the split (see :meth:`split`), in idx order."""
        return load_queries(self.conn, self.split(split))

    def queries_sha256(self, queries: list[Query]) -> str:
        """A hash of the queries' records (the run's task identity)."""
        text = json.dumps([q.model_dump(mode="json") for q in queries], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def sandbox_for(self, query: Query) -> Sandbox:
        """What ``query``'s plan is checked against: the database when ingested, else the
        query's reference information (with the city set inferred: :func:`reference_states`)."""
        if self.database is not None:
            return self.database
        return reference_sandbox(query)

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()


def reference_states(query: Query, sandbox: ReferenceSandbox) -> dict[str, str]:
    """The city set a query's reference information implies (it has no city-to-state table):
    a multi-city query's destination is a state, so every city the reference describes other
    than the origin lies in it; a one-city query's destination (and the origin) are cities of
    an unknown state, recorded as ``"?"``. Trips of up to 3 days never compare states."""
    described = {r.city for r in sandbox.accommodation_rows + sandbox.restaurant_rows
                 + sandbox.attraction_rows}  # fmt: skip
    state = query.dest if query.visiting_city_number > 1 else "?"
    states = {city: state for city in described if city != query.org}
    if query.visiting_city_number == 1:
        states[query.dest] = "?"
    states[query.org] = "?"
    return states


def reference_sandbox(query: Query) -> ReferenceSandbox:
    """The sandbox of ``query``'s reference information, with :func:`reference_states`."""
    sandbox = ReferenceSandbox(query)
    sandbox.states.update({k: v for k, v in reference_states(query, sandbox).items()
                           if k not in sandbox.states})  # fmt: skip
    return sandbox
