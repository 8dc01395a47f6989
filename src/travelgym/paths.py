"""Where travelgym keeps its data: one directory, overridable by flag or environment."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "TRAVELGYM_DATA_DIR"


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """Return the data directory: ``override``, else ``$TRAVELGYM_DATA_DIR``, else the per-user
    default (``platformdirs.user_data_dir("travelgym")``, e.g. ``~/.local/share/travelgym``)."""
    if override:
        path = Path(override)
    elif os.environ.get(ENV_VAR, "").strip():  # blank: unset (not a directory named " ")
        path = Path(os.environ[ENV_VAR])
    else:
        from platformdirs import user_data_dir

        path = Path(user_data_dir("travelgym", appauthor=False))
    return path.expanduser().resolve()


def suite_dir(suite: str, override: str | os.PathLike[str] | None = None) -> Path:
    """Return (and create) the sub-directory of the data directory for one suite."""
    path = data_dir(override) / suite
    path.mkdir(parents=True, exist_ok=True)
    return path
