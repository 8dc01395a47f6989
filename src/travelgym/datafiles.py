"""Versioned data files (task files, instance files): JSONL written atomically with its
sha256, and a ``NAME.manifest.json`` beside it holding the version, hash and counts."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import BaseModel


def dump_jsonl(items: list[BaseModel], path: Path) -> str:
    """Write models as JSONL (one compact, key-stable line each); return the file's sha256."""
    text = "".join(item.model_dump_json() + "\n" for item in items)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return hashlib.sha256(text.encode()).hexdigest()


def manifest_path(path: Path) -> Path:
    """Where the manifest of data file ``path`` lives."""
    return path.with_name(path.stem + ".manifest.json")


def write_manifest(path: Path, meta: dict) -> None:
    """Write the manifest of data file ``path``."""
    manifest_path(path).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")


def read_manifest(path: Path) -> dict:
    """The manifest of data file ``path``."""
    return json.loads(manifest_path(path).read_text())
