"""Benchmark the Behavior2Trip database build at both scales.

Each repeat runs ``travelgym build behavior2trip --scale S --force`` in a fresh child process
and data directory: wall time (interpreter start-up included), CPU time and peak RSS of that
child (``os.wait4``), database file size and row counts per table (with Table 6 beside them).

    python benchmarks/build_behavior2trip.py [--scales small,full] [--repeats 3] [--seed 0]

Prints a JSON summary, then markdown tables. Exits 1 when a median build time misses its target
(small: 10 s, full: 120 s), 2 when a build fails.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGETS_S = {"small": 10.0, "full": 120.0}
TABLE6 = {"restaurants": 29_604, "flights": 710_633, "hotels": 22_473, "entertainment": 20_250,
          "trains": 10_371, "attractions": 8_229, "weather": 7_440}  # fmt: skip


def run_build(scale: str, seed: int, workdir: Path) -> dict[str, Any]:
    """Build once in a child process; return time, memory, size and row counts."""
    cmd = [sys.executable, "-m", "travelgym.cli", "build", "behavior2trip", "--scale", scale]
    cmd += ["--seed", str(seed), "--data-dir", str(workdir / "data"), "--force", "--json"]
    log = workdir / "build.log"
    with log.open("wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"build failed:\n{log.read_text()}")
    info = json.loads(log.read_text())
    path = Path(info["path"])
    from travelgym.suites.behavior2trip.stats import database_stats

    stats = database_stats(path)
    rss = usage.ru_maxrss / (2**20 if sys.platform == "darwin" else 2**10)
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mib": rss,
        "db_mib": path.stat().st_size / 2**20,
        "counts": stats["counts"],
        "total_records": stats["total_records"],
        "coverage_complete": stats["coverage"]["complete"],
        "content_hash": info["content_hash"],
    }


def bench(scale: str, seed: int, repeats: int) -> dict[str, Any]:
    runs = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix=f"b2t-{scale}-") as tmp:
            runs.append(run_build(scale, seed, Path(tmp)))
    hashes = {r["content_hash"] for r in runs}
    return {
        "scale": scale,
        "repeats": repeats,
        "wall_s": [round(r["wall_s"], 2) for r in runs],
        "median_wall_s": round(statistics.median(r["wall_s"] for r in runs), 2),
        "median_cpu_s": round(statistics.median(r["cpu_s"] for r in runs), 2),
        "peak_rss_mib": round(max(r["peak_rss_mib"] for r in runs), 1),
        "db_mib": round(runs[0]["db_mib"], 1),
        "counts": runs[0]["counts"],
        "total_records": runs[0]["total_records"],
        "coverage_complete": runs[0]["coverage_complete"],
        "deterministic": len(hashes) == 1,
        "content_hash": runs[0]["content_hash"],
        "target_s": TARGETS_S[scale],
    }


def markdown(results: list[dict[str, Any]]) -> str:
    lines = ["| scale | median wall (s) | CPU (s) | peak RSS (MiB) | file (MiB) | records | same hash |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]  # fmt: skip
    for r in results:
        lines.append(
            f"| {r['scale']} | {r['median_wall_s']} (all: {', '.join(map(str, r['wall_s']))}) | "
            f"{r['median_cpu_s']} | {r['peak_rss_mib']} | {r['db_mib']} | "
            f"{r['total_records']:,} | {'yes' if r['deterministic'] else 'NO'} |"
        )
    tables = list(results[0]["counts"])
    lines += ["", "| table | " + " | ".join(r["scale"] for r in results) + " | Table 6 |",
              "| --- |" + " ---: |" * (len(results) + 1)]  # fmt: skip
    for t in tables:
        paper = f"{TABLE6[t]:,}" if t in TABLE6 else ""
        lines.append(
            f"| {t} | " + " | ".join(f"{r['counts'][t]:,}" for r in results) + f" | {paper} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="small,full")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    try:
        results = [bench(s, args.seed, args.repeats) for s in args.scales.split(",")]
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 2
    machine = {"python": platform.python_version(), "cpus": os.cpu_count(),
               "platform": platform.platform()}  # fmt: skip
    print(json.dumps({"machine": machine, "results": results}, indent=2))
    print()
    print(markdown(results))
    return int(any(r["median_wall_s"] > r["target_s"] for r in results))


if __name__ == "__main__":
    sys.exit(main())
