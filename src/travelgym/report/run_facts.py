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
