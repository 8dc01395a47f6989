"""Locate, build and validate the Behavior2Trip database under the data directory."""

from __future__ import annotations

import os
from pathlib import Path

from travelgym.atomic import remove_orphans
from travelgym.core.suite import BuiltData
from travelgym.db import read_metadata
from travelgym.paths import suite_dir
from travelgym.suites.behavior2trip.generate import (
    DEFAULT_SCALE,
    DEFAULT_SEED,
    GENERATOR_VERSION,
    build_database,
    check_scale,
)
from travelgym.suites.behavior2trip.schema import SCHEMA_VERSION

SUITE = "behavior2trip"


# what ensure_database returns: the file, its metadata and whether this call (re)built it
BuiltDatabase = BuiltData


def database_path(
    scale: str = DEFAULT_SCALE,
    seed: int = DEFAULT_SEED,
    data_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """``<data dir>/behavior2trip/behavior2trip-<scale>-seed<N>.sqlite``."""
    check_scale(scale)
    return suite_dir(SUITE, data_dir) / f"behavior2trip-{scale}-seed{seed}.sqlite"


def is_current(metadata: dict[str, str], scale: str, seed: int) -> bool:
    """True when a database's metadata matches this generator version, schema, scale and seed."""
    return (
        metadata.get("generator_version") == GENERATOR_VERSION
        and metadata.get("schema_version") == SCHEMA_VERSION
        and metadata.get("scale") == scale
        and metadata.get("seed") == str(seed)
        and bool(metadata.get("content_hash"))
    )


def ensure_database(
    scale: str = DEFAULT_SCALE,
    seed: int = DEFAULT_SEED,
    data_dir: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> BuiltDatabase:
    """Build the database when it is missing, stale or ``force`` is set; return where it is."""
    path = database_path(scale, seed, data_dir)
    meta = read_metadata(path)
    if not force and is_current(meta, scale, seed):
        remove_orphans(path)  # of a build killed while another finished it
        return BuiltDatabase(path, meta, built=False)
    meta = build_database(path, seed, scale)
    return BuiltDatabase(path, meta, built=True)
