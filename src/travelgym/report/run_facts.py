"""The cells of the runs' facts table (:func:`travelgym.report.tables.facts_table`) that every
suite's report shows: manifest fields, the unscored episodes and how the episodes ended."""

from __future__ import annotations

from collections import Counter
from typing import Any

from travelgym.report.body import ReportRun

MISSING = "\u2013"  # a manifest field the run does not record


def manifest_fact(run: ReportRun, key: str) -> Any:
    """The run's manifest field ``key``, or a dash where it has none."""
    return run.manifest.get(key, MISSING)


def unscored(run: ReportRun) -> int:
    """How many of the run's episodes have no score."""
    return sum(1 for e in run.episodes if not e.score)


def terminations(run: ReportRun) -> str:
    """How the run's episodes ended: ``"<termination> <count>"`` by termination, comma-joined."""
    counts = Counter(e.termination for e in run.episodes)
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))


def provenance_fact(run: ReportRun) -> str:
    """What the run's code was, from its manifest: ``travelgym <version> @ <commit[:12]>``
    (``+dirty`` with uncommitted changes), the Python version and the result-shaping packages,
    comma-joined; a dash for a manifest from before provenance was recorded."""
    found = run.manifest.get("provenance")
    if not isinstance(found, dict):
        return MISSING
    harness = f"travelgym {run.manifest.get('travelgym_version', '?')}"
    commit = found.get("git_commit")
    if isinstance(commit, str) and commit:
        harness += f" @ {commit[:12]}" + ("+dirty" if found.get("git_dirty") else "")
    parts = [harness]
    if found.get("python"):
        parts.append(str(found["python"]))
    packages = found.get("packages")
    if isinstance(packages, dict):
        parts += [f"{name} {version}" for name, version in sorted(packages.items())]
    return ", ".join(parts)
