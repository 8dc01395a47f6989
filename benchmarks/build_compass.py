"""Benchmark the full COMPASS database build from scratch.

Each repeat runs ``travelgym build compass --force`` in a fresh child process and data directory
(wall time including interpreter start-up, CPU time and peak RSS of that child via ``os.wait4``,
database file size). As a same-run reference, a plain baseline writes the same number of rows into
an empty SQLite file with ``executemany``; the report gives the build/baseline ratio.

    python benchmarks/build_compass.py [--repeats 3] [--seed 0] [--target-s 30]

Prints a JSON summary, then a markdown table. Exits 1 when the median build time exceeds the
target (30 s), 2 when a build fails.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_S = 30.0


def run_build(seed: int, workdir: Path) -> dict[str, Any]:
    """Build the database once in a child process; return its time, memory and size."""
    data_dir = workdir / "data"
    cmd = [sys.executable, "-m", "travelgym.cli", "build", "compass"]
    cmd += ["--seed", str(seed), "--data-dir", str(data_dir), "--force", "--json"]
    log = workdir / "build.log"
    with log.open("wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"build failed ({proc.returncode}):\n{log.read_text()}")
    info = json.loads(log.read_text())
    path = Path(info["path"])
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mib": _rss_mib(usage.ru_maxrss),
        "db_mib": path.stat().st_size / 2**20,
        "rows": count_rows(path),
        "content_hash": info["content_hash"],
    }


def _rss_mib(maxrss: int) -> float:
    """``ru_maxrss`` is KiB on Linux and bytes on macOS."""
    return maxrss / 2**20 if sys.platform == "darwin" else maxrss / 2**10


def count_rows(path: Path) -> int:
    """Rows in every content table of the database (the tables the content hash covers)."""
    from travelgym.suites.compass.schema import TABLE_ORDER

    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return sum(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t, _ in TABLE_ORDER)
    finally:
        conn.close()


def run_baseline(rows: int, workdir: Path) -> float:
    """Seconds to write ``rows`` offer-shaped rows into an empty SQLite file (same pragmas)."""
    path = workdir / "baseline.sqlite"
    path.unlink(missing_ok=True)
    start = time.perf_counter()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute(
        "CREATE TABLE t (id INTEGER, night TEXT, price REAL, available INTEGER,"
        " a TEXT, b TEXT, c TEXT, PRIMARY KEY (id, night)) WITHOUT ROWID"
    )
    conn.executemany(
        "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            (i // 31, f"2025-08-{i % 31 + 1:02d}", 100.0 + i % 97, i % 7, "x", "y", "z")
            for i in range(rows)
        ),
    )
    conn.commit()
    conn.close()
    return time.perf_counter() - start


def summarise(builds: list[dict[str, Any]], baselines: list[float], target: float) -> dict:
    """Medians, ranges and the build/baseline ratio."""

    def stat(key: str) -> dict[str, float]:
        values = [b[key] for b in builds]
        return {
            "median": round(statistics.median(values), 3),
            "min": round(min(values), 3),
            "max": round(max(values), 3),
        }

    build_median = statistics.median(b["wall_s"] for b in builds)
    baseline_median = statistics.median(baselines)
    return {
        "benchmark": "compass_build",
        "repeats": len(builds),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
        },
        "build_wall_s": stat("wall_s"),
        "build_cpu_s": stat("cpu_s"),
        "peak_rss_mib": stat("peak_rss_mib"),
        "db_mib": round(builds[0]["db_mib"], 2),
        "rows": builds[0]["rows"],
        "content_hash": builds[0]["content_hash"],
        "deterministic": len({b["content_hash"] for b in builds}) == 1,
        "baseline_wall_s": {
            "median": round(baseline_median, 3),
            "min": round(min(baselines), 3),
            "max": round(max(baselines), 3),
        },
        "ratio_build_to_baseline": round(build_median / baseline_median, 2),
        "target_s": target,
        "within_target": build_median <= target,
    }


def markdown(summary: dict[str, Any]) -> str:
    """The summary as a markdown table (median, min, max over the repeats)."""
    rows = [
        ("Build wall time (s)", summary["build_wall_s"]),
        ("Build CPU time, user + sys (s)", summary["build_cpu_s"]),
        ("Peak RSS of the build process (MiB)", summary["peak_rss_mib"]),
        ("Baseline: write the same rows with executemany (s)", summary["baseline_wall_s"]),
    ]
    lines = ["| measure | median | min | max |", "| --- | ---: | ---: | ---: |"]
    lines += [
        f"| {name} | {s['median']:.2f} | {s['min']:.2f} | {s['max']:.2f} |" for name, s in rows
    ]
    lines += [
        f"| Database file size (MiB) | {summary['db_mib']:.2f} | | |",
        f"| Rows in content tables | {summary['rows']:,} | | |",
        f"| Build / baseline ratio (medians) | {summary['ratio_build_to_baseline']:.2f} | | |",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="builds to time (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="database seed (default 0)")
    parser.add_argument("--target-s", type=float, default=TARGET_S, help="median build target")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    builds, baselines = [], []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="tg-bench-") as tmp:
            try:
                builds.append(run_build(args.seed, Path(tmp)))
            except RuntimeError as exc:
                print(exc, file=sys.stderr)
                return 2
            baselines.append(run_baseline(builds[-1]["rows"], Path(tmp)))
    summary = summarise(builds, baselines, args.target_s)
    print(json.dumps(summary, indent=2))
    print()
    print(markdown(summary))
    return 0 if summary["within_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
