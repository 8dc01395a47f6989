"""The Behavior2Trip analysis (:func:`~travelgym.suites.behavior2trip.analysis.analyze_runs`) as
text: metrics by difficulty, per-check pass rates, RQ2's length bins and RQ3's table."""

from __future__ import annotations

from typing import Any

from travelgym.core.columns import Column, N, table, text_column
from travelgym.suites.behavior2trip.analysis_table import format_table
from travelgym.suites.behavior2trip.columns import BY_KEY, GROUP, RUN, columns_of

BIN = text_column("bin", "actions", legend="behaviour-trajectory length bin, in actions (RQ2)")
BIN_KEYS = ("DR", "final", "C_micro", "UPC_micro", "LLM")
CHECK = text_column("id", "check", legend="the rule check's id")
KIND = text_column("group", "kind", legend="C (commonsense) or UPC (user preference)")
EACH_RUN = text_column("checks.RUN", "(each run)", legend="one column per run: the check's pass "
                       "rate (%) and passed/applicable; - where it never applied")  # fmt: skip
#: every column ``analyze`` prints, for its legend
LEGEND = (RUN, GROUP, N, *BY_KEY.values(), BIN, CHECK, KIND, EACH_RUN)


def format_levels(runs: dict[str, dict[str, Any]]) -> list[str]:
    """Metrics overall and by difficulty, one block of rows per run."""
    rows = [{"run": label, "group": group, **agg} for label, run in runs.items()
            for group, agg in groups_of(run["summary"])]  # fmt: skip
    return table([RUN, GROUP, N, *columns_of(rows)], rows,
                 title="Metrics by difficulty (% of answers)").splitlines()  # fmt: skip


def groups_of(summary: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [("all", summary["overall"]), *summary["by_difficulty"].items()]


def format_bins(runs: dict[str, dict[str, Any]]) -> list[str]:
    """RQ2: the metrics per trajectory-length bin, one block of rows per run."""
    rows = [{"run": label, **b} for label, run in runs.items() for b in run["length_bins"]]
    columns = [c for c in columns_of(rows) if c.key in BIN_KEYS]
    lines = table([RUN, BIN, N, *columns], rows,
                  title="RQ2: metrics by behaviour-trajectory length (% of answers)").splitlines()  # fmt: skip
    lines += [f"  {label}: {run['unknown_length']} answer(s) of unknown length left out"
              for label, run in runs.items() if run["unknown_length"]]  # fmt: skip
    return lines


def format_checks(runs: dict[str, dict[str, Any]]) -> list[str]:
    """Per-check pass rates: one row per check, one column per run (rate and passed/applicable)."""
    labels = list(runs)
    rate = Column("rate", "rate")  # how each run's cell writes its rate
    ids = list(dict.fromkeys(c["id"] for run in runs.values() for c in run["checks"]))
    by_run = {x: {c["id"]: c for c in runs[x]["checks"]} for x in labels}
    rows = []
    for cid in ids:
        group = next(by_run[x][cid]["group"] for x in labels if cid in by_run[x])
        cells = []
        for x in labels:
            c = by_run[x].get(cid)
            cells.append("-" if c is None else f"{rate.text(c['rate'])} {c['passed']}/"
                         f"{c['applicable']}")  # fmt: skip
        rows.append([cid, group, *cells])
    columns = [CHECK, KIND, *(Column(f"checks.{x}", x, decimals=0) for x in labels)]
    return table(columns, rows, title="Pass rate of each check (%, passed/applicable)").splitlines()


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
