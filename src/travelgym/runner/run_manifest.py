"""Reading a run directory's ``manifest.json`` for analysis, with errors that name the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from travelgym.runner.store import MANIFEST, RunDirError
from travelgym.safe_open import read_regular_text


def read_manifest(run_dir: str | Path, required: bool = False) -> dict[str, Any]:
    """The manifest of ``run_dir`` as a dict (``{}`` when there is none and not ``required``).
    An unreadable manifest, or one that is not a JSON object, is a :class:`RunDirError` naming
    the file and the reason."""
    path = Path(run_dir) / MANIFEST
    try:
        text = read_regular_text(path)
    except FileNotFoundError:
        if required:
            raise RunDirError(f"{Path(run_dir)} is not a run directory: no {MANIFEST}") from None
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise RunDirError(f"{path}: cannot read: {exc}") from None
    try:
        manifest = json.loads(text)
    except RecursionError:
        raise RunDirError(f"{path}: JSON nested too deeply to read") from None
    except ValueError as exc:
        raise RunDirError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(manifest, dict):
        raise RunDirError(f"{path}: not a JSON object")
    return manifest
