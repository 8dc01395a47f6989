"""The COMPASS report's analysis: the tables of
:func:`travelgym.suites.compass.analysis.metrics.analyze_runs` (the runs as columns, rows named
by each metric's path) and the figures of :func:`travelgym.suites.compass.analysis.plots.
write_plots`, each left out with a note when its module is missing or fails."""

from __future__ import annotations

import contextlib
import html
import inspect
import json
import tempfile
from pathlib import Path
from typing import Any

from travelgym.report.body import ReportRun, Section
from travelgym.report.figures import figures_html
from travelgym.report.markup import esc, finite
from travelgym.report.tables import flatten, human_path, is_scalar, matrix, render_value
from travelgym.suites.compass.analysis.columns import WORDS

ANALYSIS_SKIP = {
    "run_dir",
    "agent",
    "manifest",
    "warnings",
    "episodes",
    "format_version",
    "scores",
}  # scores: the summary tables already show them
MAX_ANALYSIS_ROWS = 400  # per table


def _details(group: str, summary: str, table: str, is_open: bool) -> str:
    return (f'<details class="metric-group" data-group="{esc(group)}"{" open" if is_open else ""}>'
            f"<summary>{esc(summary)}</summary>{table}</details>")  # fmt: skip


def render_analysis(result: dict[str, Any]) -> str:
    """``analyze_runs`` output as HTML: one table per metric group with the runs as columns,
    then the pairwise comparisons and the stability across repeated runs."""
    runs = result.get("runs") if isinstance(result.get("runs"), dict) else None
    if runs is None:
        return render_value(result)
    names = list(runs)
    parts = []
    warnings = [f"{n}: {w}" for n, r in runs.items() for w in (r.get("warnings") or [])]
    if warnings:
        parts.append('<ul class="notes">' + "".join(f"<li>{esc(w)}</li>" for w in warnings)
                     + "</ul>")  # fmt: skip
    groups: list[str] = []
    for run in runs.values():
        groups += [k for k in run if k not in ANALYSIS_SKIP and k not in groups]
    scalars = [g for g in groups if all(is_scalar(r.get(g)) for r in runs.values())]
    if scalars:
        rows = {n: {g: runs[n].get(g) for g in scalars} for n in names}
        parts.append("<h3>Runs</h3>" + matrix(rows, names, "analysis-runs", MAX_ANALYSIS_ROWS,
                                              WORDS))  # fmt: skip
    for index, group in enumerate(g for g in groups if g not in scalars):
        rows = {n: flatten(runs[n].get(group)) for n in names if runs[n].get(group) is not None}
        if not rows:
            continue
        table = matrix(rows, names, f"analysis-{group}", MAX_ANALYSIS_ROWS, WORDS)
        parts.append(_details(group, human_path(group, WORDS), table, index < 2))
    comparisons = result.get("comparisons") or []
    if comparisons:
        labels = [f"{c.get('a')} \u2212 {c.get('b')}" for c in comparisons]
        rows = {label: flatten({k: v for k, v in c.items() if k not in ("a", "b")})
                for label, c in zip(labels, comparisons, strict=True)}  # fmt: skip
        table = matrix(rows, labels, "analysis-comparisons", MAX_ANALYSIS_ROWS, WORDS)
        parts.append(_details("comparisons", "Pairwise comparisons (first run minus second)",
                              table, True))  # fmt: skip
    stability = result.get("stability") or {}
    if isinstance(stability, dict) and stability:
        rows = {agent: flatten(v) for agent, v in stability.items()}
        table = matrix(rows, list(rows), "analysis-stability", MAX_ANALYSIS_ROWS, WORDS)
        parts.append(_details("stability", "Stability across repeated runs", table, True))
    return "".join(parts)


@contextlib.contextmanager
def _runs_already_read(metrics: Any, runs: list[ReportRun]):
    """Let ``analyze_runs`` use the episodes this report has already read instead of parsing
    every ``episodes.jsonl`` a second time (about a fifth of the report's time on full runs):
    its ``load_run`` is swapped, for the call only, for one that answers from memory."""
    original = getattr(metrics, "load_run", None)
    if original is None:
        yield
        return
    cache = {str(Path(r.directory)): (r.manifest, r.episodes) for r in runs}

    def load_run(run_dir):
        hit = cache.get(str(Path(run_dir)))
        return hit if hit is not None else original(run_dir)

    metrics.load_run = load_run
    try:
        yield
    finally:
        metrics.load_run = original


def analyze(runs: list[ReportRun], tasks: dict[str, Any], notes: list[str]) -> dict | None:
    """``analyze_runs`` on the runs (with the per-episode rows the figures need), or None."""
    try:
        from travelgym.suites.compass.analysis import metrics
    except ImportError:
        notes.append(
            "travelgym.suites.compass.analysis.metrics is not installed: no extra metric tables"
        )
        return None
    kwargs: dict[str, Any] = {}
    params = inspect.signature(metrics.analyze_runs).parameters
    if "tasks" in params:
        kwargs["tasks"] = tasks
    if "allow_mixed" in params:  # a report shows everything, and says what a row mixes
        kwargs["allow_mixed"] = True
    try:
        with _runs_already_read(metrics, runs):
            result = metrics.analyze_runs([r.directory for r in runs], **kwargs)
    except Exception as exc:  # noqa: BLE001 - the rest of the report is still worth having
        notes.append(f"analyze_runs failed: {type(exc).__name__}: {exc}")
        return None
    if not isinstance(result, dict):
        return {"result": result}
    for agent, row in (result.get("stability") or {}).items():
        if isinstance(row, dict) and row.get("mixed"):
            notes.append(f"the stability row of {agent} pools runs that differ in "
                         f"{' and '.join(row['mixed'])}")  # fmt: skip
    return result


def analysis_section(result: dict[str, Any]) -> Section:
    """The analysis tables, then the raw JSON (without the per-episode rows) collapsed."""
    result = finite(result)
    for run in (result.get("runs") or {}).values():
        if isinstance(run, dict):
            run.pop("episodes", None)  # per-episode rows: the viewer shows the episodes
    raw = html.escape(json.dumps(result, indent=1, default=str))
    return Section("analysis", "Analysis", f"{render_analysis(result)}<details><summary>Raw "
                   f"analysis JSON</summary><pre class='raw'>{raw}</pre></details>")  # fmt: skip


def plots_section(source: dict[str, Any] | list[Path], notes: list[str]) -> Section | None:
    """The figures of ``write_plots`` (SVG), or None."""
    try:
        from travelgym.suites.compass.analysis.plots import write_plots
    except ImportError:
        notes.append("travelgym.suites.compass.analysis.plots is not installed: no figures")
        return None
    params = inspect.signature(write_plots).parameters
    kwargs = {"formats": ("svg",)} if "formats" in params else {}
    with tempfile.TemporaryDirectory(prefix="travelgym-report-") as tmp:
        try:
            paths = [Path(p) for p in write_plots(source, Path(tmp), **kwargs)]
        except Exception as exc:  # noqa: BLE001
            notes.append(f"write_plots failed: {type(exc).__name__}: {exc}")
            return None
        figures = figures_html(paths)
    return Section("plots", "Figures", figures) if figures else None
