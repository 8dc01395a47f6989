"""Locate, build and validate the COMPASS database under the data directory."""

from __future__ import annotations

import os
from pathlib import Path

from travelgym.atomic import remove_orphans
from travelgym.core.suite import BuiltData
from travelgym.db import read_metadata
from travelgym.paths import suite_dir
from travelgym.suites.compass.generate import DEFAULT_SEED, GENERATOR_VERSION, build_database
from travelgym.suites.compass.schema import SCHEMA_VERSION

SUITE = "compass"


# what ensure_database returns: the file, its metadata and whether this call (re)built it
BuiltDatabase = BuiltData


def database_path(seed: int = DEFAULT_SEED, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Path of the generated database for ``seed`` under the data directory."""
    return suite_dir(SUITE, data_dir) / f"compass-seed{seed}.sqlite"


def is_current(metadata: dict[str, str], seed: int) -> bool:
    """True when a database's metadata matches this generator version, schema and seed."""
    return (
        metadata.get("generator_version") == GENERATOR_VERSION
        and metadata.get("schema_version") == SCHEMA_VERSION
        and metadata.get("seed") == str(seed)
        and bool(metadata.get("content_hash"))
    )


def ensure_database(
    seed: int = DEFAULT_SEED,
    data_dir: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> BuiltDatabase:
    """Build the database when it is missing, stale or ``force`` is set; return where it is."""
    path = database_path(seed, data_dir)
    meta = read_metadata(path)
    if not force and is_current(meta, seed):
        remove_orphans(path)  # of a build killed while another finished it
        return BuiltDatabase(path, meta, built=False)
    meta = build_database(path, seed)
    return BuiltDatabase(path, meta, built=True)
