"""Benchmark the Behavior2Trip database build at both scales, before and after (issue 31).

Each repeat runs ``travelgym build behavior2trip --scale S --force`` in a fresh child process
and data directory, once with this checkout's code ("after") and once with the reference
revision's (``--reference``, default the commit before issue 31: "before"), alternating: wall
time (interpreter start-up included), CPU time of the child and its worker processes and peak
RSS of the largest of them (``os.wait4``), database file size and row counts per table (with
Table 6 beside them), and whether both give the same content hash.

    python benchmarks/build_behavior2trip.py [--scales small,full] [--repeats 3] [--seed 0]
                                            [--reference REV | --no-reference]

Prints a JSON summary, then markdown tables. Exits 1 when a median build time misses its target
(small: 10 s, full: 120 s) or the content hashes differ, 2 when a build fails.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import BEFORE_ISSUE_31, env_for, reference_src  # noqa: E402

TARGETS_S = {"small": 10.0, "full": 120.0}
TABLE6 = {"restaurants": 29_604, "flights": 710_633, "hotels": 22_473, "entertainment": 20_250,
          "trains": 10_371, "attractions": 8_229, "weather": 7_440}  # fmt: skip


def run_build(scale: str, seed: int, workdir: Path, src: Path | None = None) -> dict[str, Any]:
    """Build once in a child process importing travelgym from ``src`` (this checkout's when
    None); return time, memory, size and row counts."""
    cmd = [sys.executable, "-m", "travelgym.cli", "build", "behavior2trip", "--scale", scale]
    cmd += ["--seed", str(seed), "--data-dir", str(workdir / "data"), "--force", "--json"]
    log = workdir / "build.log"
    with log.open("wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env_for(src))
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


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "wall_s": [round(r["wall_s"], 2) for r in runs],
        "median_wall_s": round(statistics.median(r["wall_s"] for r in runs), 2),
        "median_cpu_s": round(statistics.median(r["cpu_s"] for r in runs), 2),
        "peak_rss_mib": round(max(r["peak_rss_mib"] for r in runs), 1),
        "db_mib": round(runs[0]["db_mib"], 1),
        "deterministic": len({r["content_hash"] for r in runs}) == 1,
        "content_hash": runs[0]["content_hash"],
    }


def bench(scale: str, seed: int, repeats: int, ref_src: Path | None) -> dict[str, Any]:
    after, before = [], []
    for _ in range(repeats):
        if ref_src is not None:
            with tempfile.TemporaryDirectory(prefix=f"b2t-{scale}-before-") as tmp:
                before.append(run_build(scale, seed, Path(tmp), ref_src))
        with tempfile.TemporaryDirectory(prefix=f"b2t-{scale}-") as tmp:
            after.append(run_build(scale, seed, Path(tmp)))
    out = {
        "scale": scale,
        "repeats": repeats,
        **_summary(after),
        "counts": after[0]["counts"],
        "total_records": after[0]["total_records"],
        "coverage_complete": after[0]["coverage_complete"],
        "target_s": TARGETS_S[scale],
    }
    if before:
        ref = _summary(before)
        out["before"] = ref
        out["same_hash_as_before"] = ref["content_hash"] == out["content_hash"]
        out["wall_ratio"] = round(ref["median_wall_s"] / out["median_wall_s"], 2)
        out["cpu_ratio"] = round(ref["median_cpu_s"] / out["median_cpu_s"], 2)
    return out


def markdown(results: list[dict[str, Any]]) -> str:
    lines = ["| scale | code | median wall (s) | CPU (s) | peak RSS (MiB) | file (MiB) | "
             "same hash |", "| --- | --- | ---: | ---: | ---: | ---: | --- |"]  # fmt: skip
    for r in results:
        rows = [("before", r["before"]), ("after", r)] if "before" in r else [("after", r)]
        for label, x in rows:
            lines.append(
                f"| {r['scale']} | {label} | {x['median_wall_s']} "
                f"(all: {', '.join(map(str, x['wall_s']))}) | {x['median_cpu_s']} | "
                f"{x['peak_rss_mib']} | {x['db_mib']} | "
                f"{'yes' if x['deterministic'] else 'NO'} |"
            )
        if "before" in r:
            lines.append(
                f"| {r['scale']} | ratio | ×{r['wall_ratio']} | ×{r['cpu_ratio']} | | | "
                f"{'before = after' if r['same_hash_as_before'] else 'DIFFERENT'} |"
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
    parser.add_argument("--reference", default=BEFORE_ISSUE_31, help="the 'before' revision")
    parser.add_argument("--no-reference", action="store_true", help="time this checkout only")
    args = parser.parse_args()
    ref_src = None if args.no_reference else reference_src(args.reference)
    try:
        results = [bench(s, args.seed, args.repeats, ref_src) for s in args.scales.split(",")]
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 2
    machine = {"python": platform.python_version(), "cpus": os.cpu_count(),
               "platform": platform.platform(), "load_avg_1m": round(os.getloadavg()[0], 2),
               "reference": None if args.no_reference else args.reference}  # fmt: skip
    print(json.dumps({"machine": machine, "results": results}, indent=2))
    print()
    print(markdown(results))
    missed = any(r["median_wall_s"] > r["target_s"] for r in results)
    return int(missed or not all(r.get("same_hash_as_before", True) for r in results))


if __name__ == "__main__":
    sys.exit(main())
