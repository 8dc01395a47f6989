"""Versioned data files (task files, instance files): JSONL written atomically with its
sha256, and a ``NAME.manifest.json`` beside it holding the version, hash and counts."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import BaseModel

from travelgym.atomic import replaced_on_success
from travelgym.core.errors import UserError


def dump_jsonl(items: list[BaseModel], path: Path) -> str:
    """Write models as JSONL (one compact, key-stable line each); return the file's sha256."""
    text = "".join(item.model_dump_json() + "\n" for item in items)
    path.parent.mkdir(parents=True, exist_ok=True)
    with replaced_on_success(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return hashlib.sha256(text.encode()).hexdigest()


def manifest_path(path: Path) -> Path:
    """Where the manifest of data file ``path`` lives."""
    return path.with_name(path.stem + ".manifest.json")


def write_manifest(path: Path, meta: dict) -> None:
    """Write the manifest of data file ``path``."""
    with replaced_on_success(manifest_path(path)) as tmp:  # never read half written
        tmp.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")


class ManifestError(UserError, ValueError):
    """A manifest that is not a JSON object (the message names the file)."""


def read_manifest(path: Path) -> dict:
    """The manifest of data file ``path`` (a :class:`ManifestError` naming it when it is not a
    JSON object)."""
    where = manifest_path(path)
    try:
        meta = json.loads(where.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ManifestError(f"{where}: not a manifest (not valid JSON: {exc})") from None
    if not isinstance(meta, dict):
        raise ManifestError(f"{where}: not a manifest (a JSON {type(meta).__name__}, not an "
                            "object)")  # fmt: skip
    return meta


def intact_manifest(path: Path, expected: dict) -> dict | None:
    """The manifest of the built data file ``path`` when it has every ``expected`` entry and
    its ``sha256`` names the file's bytes, else None (a missing, stale, edited or damaged file
    is built again, never read)."""
    meta = cached_manifest(path)
    if meta is None or any(meta.get(k) != v for k, v in expected.items()):
        return None
    if meta.get("sha256") != hashlib.sha256(path.read_bytes()).hexdigest():
        return None
    return meta


def cached_manifest(path: Path) -> dict | None:
    """The manifest of the built data file ``path`` (a cache), or None when the file or its
    manifest is missing or the manifest is damaged: either way the file is built again."""
    # only regular files are read: a FIFO where a data file belongs would block the read
    if not (path.is_file() and manifest_path(path).is_file()):
        return None
    try:
        return read_manifest(path)
    except ManifestError:
        return None
