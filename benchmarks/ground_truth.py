"""Benchmark the COMPASS ground-truth solvers: the fast exact solver and Algorithm 1.

In one run:

(a) the fast solver (``travelgym.suites.compass.solver.solve``) over every shipped task, one call each on
    one connection: total seconds, per-task median and max, per level;
(b) the literal Algorithm 1 enumerator (``travelgym.suites.compass.reference_solver.reference_solve``) on a
    sample of tasks: by default the sample of ``tests/parks/test_solver.py`` (the 5 tasks with the
    fewest allowed date pairs in each (level, objective type) cell, 30 tasks); each sample task is
    solved by both solvers back to back, and the report gives the reference / fast time ratio
    overall and per level. Both must agree exactly (feasible count, optimum, top 5/10/20 %
    thresholds) or the script fails.

    python benchmarks/ground_truth.py [--sample 5] [--seed 0] [--data-dir DIR] [--target-s 10]
                                      [--json]

Prints a markdown report (``--json``: a JSON summary instead). Exits 1 when solving all tasks
with the fast solver takes ``--target-s`` seconds (10) or more, 2 when the solvers disagree.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import json
import os
import platform
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

TARGET_S = 10.0


def reference_sample(tasks: list, per_cell: int = 5) -> list:
    """The cheapest-to-enumerate tasks of every (level, objective type) cell.

    The same rule as ``_reference_sample`` in ``tests/parks/test_solver.py``: within a cell,
    tasks sorted by (number of allowed (check-in, check-out) pairs, task id), first ``per_cell``.
    """
    cells = collections.defaultdict(list)
    for t in tasks:
        cells[(t.level, t.objective.type)].append(t)
    sample = []
    for cell in sorted(cells):
        ranked = sorted(cells[cell], key=lambda t: (len(t.dates.date_pairs()), t.task_id))
        sample += ranked[:per_cell]
    return sample


def timed(func, *args) -> tuple[Any, float]:
    start = time.perf_counter()
    result = func(*args)
    return result, time.perf_counter() - start


def disagreement(task_id: str, fast, slow) -> str | None:
    """Why the two ground truths differ (feasible count, optimum, thresholds), or None."""
    for field in ("feasible_count", "optimum", "thresholds"):
        a, b = getattr(fast, field), getattr(slow, field)
        if a != b:
            return f"{task_id}: {field} differs: fast {a!r}, reference {b!r}"
    return None


def stats(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "total_s": round(sum(values), 4),
        "median_ms": round(1000 * statistics.median(values), 2) if values else 0.0,
        "max_ms": round(1000 * max(values), 2) if values else 0.0,
    }


def run(conn: sqlite3.Connection, tasks: list, per_cell: int) -> dict[str, Any]:
    from travelgym.suites.compass.reference_solver import reference_solve
    from travelgym.suites.compass.solver import solve

    # (a) fast solver over every task, in file order, on one connection
    fast_s: dict[str, float] = {}
    wall = time.perf_counter()
    for task in tasks:
        _, fast_s[task.task_id] = timed(solve, conn, task)
    all_wall = time.perf_counter() - wall

    # (b) the sample: fast solver and Algorithm 1 back to back on each task
    sample = reference_sample(tasks, per_cell)
    rows, errors = [], []
    for task in sample:
        fast, f_s = timed(solve, conn, task)
        slow, r_s = timed(reference_solve, conn, task)
        problem = disagreement(task.task_id, fast, slow)
        if problem:
            errors.append(problem)
        rows.append({
            "task_id": task.task_id,
            "level": task.level,
            "objective_type": task.objective.type,
            "date_pairs": len(task.dates.date_pairs()),
            "feasible_count": fast.feasible_count,
            "fast_s": round(f_s, 5),
            "reference_s": round(r_s, 4),
            "agree": problem is None,
        })  # fmt: skip

    def ratio(chosen: list[dict]) -> dict[str, float]:
        f, r = sum(x["fast_s"] for x in chosen), sum(x["reference_s"] for x in chosen)
        per_task = [x["reference_s"] / x["fast_s"] for x in chosen if x["fast_s"] > 0]
        return {
            "n": len(chosen),
            "fast_s": round(f, 4),
            "reference_s": round(r, 3),
            "ratio_of_totals": round(r / f, 1) if f else 0.0,
            "ratio_median": round(statistics.median(per_task), 1) if per_task else 0.0,
            "feasible_plans": sum(x["feasible_count"] for x in chosen),
        }

    by_level = {lv: [t for t in tasks if t.level == lv] for lv in (1, 2, 3)}
    return {
        "fast_all": {
            **stats(list(fast_s.values())),
            "wall_s": round(all_wall, 4),
            "slowest_task": max(fast_s, key=fast_s.get),
            "by_level": {
                str(lv): stats([fast_s[t.task_id] for t in ts]) for lv, ts in by_level.items()
            },
        },
        "reference_sample": {
            "per_cell": per_cell,
            "overall": ratio(rows),
            "by_level": {
                str(lv): ratio([x for x in rows if x["level"] == lv])
                for lv in (1, 2, 3)
                if any(x["level"] == lv for x in rows)
            },
            "tasks": rows,
        },
        "agree": not errors,
        "errors": errors,
    }


def markdown(summary: dict[str, Any]) -> str:
    fa, rs = summary["fast_all"], summary["reference_sample"]
    lines = [
        f"Fast solver, all {fa['n']} tasks: {fa['total_s']:.2f} s"
        f" (target < {summary['target_s']:g} s); slowest task {fa['slowest_task']}",
        "",
        "| tasks | n | total (s) | median per task (ms) | max per task (ms) |",
        "| --- | ---: | ---: | ---: | ---: |",
        f"| all | {fa['n']} | {fa['total_s']:.2f} | {fa['median_ms']:.1f} | {fa['max_ms']:.1f} |",
    ]
    for lv, s in fa["by_level"].items():
        lines.append(
            f"| Level {lv} | {s['n']} | {s['total_s']:.2f} | {s['median_ms']:.1f} |"
            f" {s['max_ms']:.1f} |"
        )
    lines += [
        "",
        f"Algorithm 1 (reference) vs fast solver on the sample ({rs['per_cell']} per cell):",
        "",
        "| sample | n | feasible plans | fast (s) | reference (s) | ratio of totals |"
        " median per-task ratio |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    samples = [("all", rs["overall"])] + [(f"Level {k}", v) for k, v in rs["by_level"].items()]
    for name, s in samples:
        lines.append(
            f"| {name} | {s['n']} | {s['feasible_plans']:,} | {s['fast_s']:.3f} |"
            f" {s['reference_s']:.2f} | {s['ratio_of_totals']:,.0f}x | {s['ratio_median']:,.0f}x |"
        )
    verdict = "agree exactly" if summary["agree"] else "DISAGREE"
    lines += ["", f"Feasible count, optimum and thresholds: the solvers {verdict}."]
    lines += [f"- {e}" for e in summary["errors"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=5, help="reference tasks per cell (5)")
    parser.add_argument("--seed", type=int, default=0, help="database seed (default 0)")
    parser.add_argument("--data-dir", type=Path, default=None, help="data directory")
    parser.add_argument("--target-s", type=float, default=TARGET_S, help="all-tasks target (10)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    args = parser.parse_args(argv)
    if args.sample < 0:
        parser.error("--sample must be at least 0")

    from travelgym.db import connect_readonly
    from travelgym.suites.compass.build import ensure_database
    from travelgym.suites.compass.tasks import load_tasks

    db = ensure_database(seed=args.seed, data_dir=args.data_dir)
    tasks = load_tasks()
    conn = connect_readonly(db.path)
    try:
        summary = {
            "benchmark": "compass_ground_truth",
            "date": dt.date.today().isoformat(),
            "machine": {
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
                "python": platform.python_version(),
                "sqlite": sqlite3.sqlite_version,
            },
            "db_content_hash": db.metadata["content_hash"],
            "target_s": args.target_s,
            **run(conn, tasks, args.sample),
        }
    finally:
        conn.close()
    summary["within_target"] = summary["fast_all"]["total_s"] < args.target_s
    print(json.dumps(summary, indent=2) if args.json else markdown(summary))
    if not summary["agree"]:
        return 2
    return 0 if summary["within_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
