"""``travelgym report``: the run directories' suite writes its report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from travelgym.core.registry import get_suite
from travelgym.runner.errors import RunDirError
from travelgym.runner.run_manifest import read_manifest


def suite_of_runs(run_dirs: list[Path]) -> str:
    """The one suite all ``run_dirs`` belong to (their manifests'); :class:`RunDirError` when
    they mix suites or none is given."""
    if not run_dirs:
        raise RunDirError("no run directory given")
    found = {Path(d): str(read_manifest(Path(d), required=True).get("suite") or "")
             for d in run_dirs}  # fmt: skip
    names = set(found.values())
    if len(names) > 1:
        listed = "; ".join(f"{d} ({s})" for d, s in found.items())
        raise RunDirError(f"cannot mix suites in one report: {listed}; write one report per suite")
    return names.pop()


def write_report(run_dirs: list[Path], out: Path, **options: Any) -> Any:
    """Write the HTML report of ``run_dirs`` (one suite) to ``out``."""
    return get_suite(suite_of_runs(run_dirs)).write_report(list(run_dirs), out, **options)
