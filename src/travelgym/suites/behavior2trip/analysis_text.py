"""The Behavior2Trip analysis (:func:`~travelgym.suites.behavior2trip.analysis.analyze_runs`) as
text: metrics by difficulty, per-check pass rates, RQ2's length bins and RQ3's table."""

from __future__ import annotations

from typing import Any

from travelgym.suites.behavior2trip.analysis_table import format_table

TURNS = "clarification_turns"  # RQ1's mean clarification turns in a summary (clarify_metrics)

LEVEL_COLUMNS = (("DR", "DR"), ("C_micro", "C micro"), ("C_macro", "C macro"),
                 ("UPC_micro", "UPC micro"), ("UPC_macro", "UPC macro"), ("final", "Final"),
                 ("LLM", "LLM"))  # fmt: skip
BIN_COLUMNS = (("DR", "DR"), ("final", "Final"), ("C_micro", "C micro"),
               ("UPC_micro", "UPC micro"), ("LLM", "LLM"))  # fmt: skip


def _pct(value: float | None, width: int) -> str:
    return f"{'—' if value is None else f'{value:.2f}':>{width}}"


def _metric_rows(name: str, width: int, groups: list[tuple[str, dict[str, Any]]],
                 columns) -> list[str]:  # fmt: skip
    lines = []
    for level, agg in groups:
        cells = "".join(f" {_pct(agg.get(k), 9)}" for k, _ in columns)
        lines.append(f"  {name:<{width}} {level:<8} {agg.get('n', 0):>5}{cells}")
    return lines


def _width(runs: dict[str, Any]) -> int:
    return max(len("run"), *(len(x) for x in runs))


def _head(first: str, width: int, columns) -> str:
    return f"  {'run':<{width}} {first:<8} {'n':>5}" + "".join(f" {h:>9}" for _, h in columns)


def format_levels(runs: dict[str, dict[str, Any]]) -> list[str]:
    """Metrics overall and by difficulty, one block of rows per run."""
    width = _width(runs)
    columns = LEVEL_COLUMNS
    if any(TURNS in run["summary"]["overall"] for run in runs.values()):
        columns += ((TURNS, "clarif."),)  # RQ1 runs: the mean clarification turns
    lines = ["metrics by difficulty (percent; LLM: judge pass rate, — without a judge)",
             _head("level", width, columns)]  # fmt: skip
    for label, run in runs.items():
        summary = run["summary"]
        groups = [("all", summary["overall"]), *summary["by_difficulty"].items()]
        lines += _metric_rows(label, width, groups, columns)
    return lines


def format_bins(runs: dict[str, dict[str, Any]]) -> list[str]:
    """RQ2: the metrics per trajectory-length bin, one block of rows per run."""
    width = _width(runs)
    lines = ["RQ2: metrics by behaviour-trajectory length (actions)",
             _head("actions", width, BIN_COLUMNS)]  # fmt: skip
    for label, run in runs.items():
        groups = [(b["bin"], b) for b in run["length_bins"]]
        lines += _metric_rows(label, width, groups, BIN_COLUMNS)
        if run["unknown_length"]:
            lines.append(f"  ({run['unknown_length']} answer(s) of unknown length left out)")
    return lines


def format_checks(runs: dict[str, dict[str, Any]]) -> list[str]:
    """Per-check pass rates: one row per check, one column per run (rate and passed/applicable)."""
    labels = list(runs)
    lines = ["pass rate of each check (percent, passed/applicable; — never applicable)",
             f"  {'check':<40} {'group':<5}" + "".join(f" {x[:18]:>18}" for x in labels)]  # fmt: skip
    ids = list(dict.fromkeys(c["id"] for run in runs.values() for c in run["checks"]))
    by_run = {x: {c["id"]: c for c in runs[x]["checks"]} for x in labels}
    for cid in ids:
        group = next(by_run[x][cid]["group"] for x in labels if cid in by_run[x])
        cells = []
        for x in labels:
            c = by_run[x].get(cid)
            text = "—" if c is None or c["rate"] is None else f"{c['rate']:.1f}"
            counts = "" if c is None else f" {c['passed']}/{c['applicable']}"
            cells.append(f" {text + counts:>18}")
        lines.append(f"  {cid:<40} {group:<5}" + "".join(cells))
    return lines


def format_analysis(result: dict[str, Any]) -> str:
    """Every part of the analysis as text, with the notes at the end."""
    runs = result["runs"]
    lines = [f"{len(runs)} Behavior2Trip run(s):"]
    for label, run in runs.items():
        judge = run["judge"] or "no judge"
        lines.append(f"  {label}: {run['dir']} ({run['split']} split, {run['db_scale']} "
                     f"database, {run['summary']['episodes']} episode(s), {judge})")  # fmt: skip
    sections = [format_levels(runs), format_checks(runs), format_bins(runs),
                format_table(result["table"])]  # fmt: skip
    for section in sections:
        lines += ["", *section]
    lines += [f"note: {n}" for n in result.get("notes", [])]
    return "\n".join(lines)
