"""Benchmark the default Behavior2Trip build from scratch: the small POI database and all 11,400
instances (9,000 train / 2,400 test), as a fresh ``ensure_database`` + ``ensure_instances`` does.

Each repeat runs in a fresh child process and empty data directory; the child times the two
phases with ``perf_counter`` and the parent takes the wall time (interpreter start-up included),
CPU time and peak RSS of the child and its worker processes from ``os.wait4``.

    python benchmarks/instances_behavior2trip.py [--repeats 1] [--workers N] [--target-s 120]
        [--reference [REV]]

With ``--reference`` the same build also runs once on the code of git revision REV (default:
the commit before issue 31's speed work; ``benchmarks/reference.py``) in the same session, and
the report gives the CPU-seconds and peak-memory ratios of the instance phase (now/reference).

Prints a JSON summary, then markdown tables (timings; Table 2 statistics). Exits 1 when the
median total exceeds the target (120 s), 2 when a build fails.
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

TARGET_S = 120.0


def child(data_dir: str, workers: int | None) -> None:
    """The timed work (run in the child process); prints one JSON line."""
    t0 = time.perf_counter()
    from travelgym.suites.behavior2trip import instances
    from travelgym.suites.behavior2trip.build import ensure_database

    t1 = time.perf_counter()
    db = ensure_database(data_dir=data_dir)
    t2 = time.perf_counter()
    cpu_before = _cpu()
    paths = instances.ensure_instances(db, data_dir, workers=workers)
    t3 = time.perf_counter()
    instances_cpu = _cpu() - cpu_before
    files = {s: {"mib": p.stat().st_size / 2**20, "sha256": _sha256(p),
                 "count": sum(1 for _ in p.open("rb"))} for s, p in paths.items()}  # fmt: skip
    stats = {}
    if hasattr(instances, "instance_stats"):  # a reference revision may predate the statistics
        by_split = instances.instance_stats(data_dir, db=db, generate=False)["splits"]
        stats = {s: v["by_difficulty"] for s, v in by_split.items()}
    print(json.dumps({
        "import_s": t1 - t0, "db_s": t2 - t1, "instances_s": t3 - t2,
        "instances_cpu_s": instances_cpu,
        "db_mib": db.path.stat().st_size / 2**20, "db_content_hash": db.metadata["content_hash"],
        "files": files, "stats": stats,
    }))  # fmt: skip


def _sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the generator's workers)."""
    import resource

    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run_once(workers: int | None, src: Path | None = None) -> dict[str, Any]:
    """One build in a fresh child process and data directory, on this checkout's code or on
    that of ``src`` (a reference revision's src directory)."""
    from reference import env_for

    with tempfile.TemporaryDirectory(prefix="tg-b2t-bench-") as tmp:
        cmd = [sys.executable, __file__, "--child", tmp]
        if workers:
            cmd += ["--workers", str(workers)]
        out_path = Path(tmp) / "child.out"
        with out_path.open("wb") as out:
            start = time.perf_counter()
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env_for(src))
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
        text = out_path.read_text()
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"build failed:\n{text}")
        result = json.loads(text.strip().splitlines()[-1])
    maxrss = usage.ru_maxrss / (2**20 if sys.platform == "darwin" else 2**10)
    return {
        **result,
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mib": maxrss,
    }


def summarise(runs: list[dict[str, Any]], target: float, workers: int | None) -> dict[str, Any]:
    def stat(key: str) -> dict[str, float]:
        values = [r[key] for r in runs]
        return {"median": round(statistics.median(values), 2), "min": round(min(values), 2),
                "max": round(max(values), 2)}  # fmt: skip

    first = runs[0]
    shas = {json.dumps({s: f["sha256"] for s, f in r["files"].items()}) for r in runs}
    return {
        "benchmark": "behavior2trip_instances",
        "repeats": len(runs),
        "workers": workers or os.cpu_count(),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },  # fmt: skip
        "total_wall_s": stat("wall_s"),
        "import_s": stat("import_s"),
        "db_build_s": stat("db_s"),
        "instances_s": stat("instances_s"),
        "cpu_s": stat("cpu_s"),
        "instances_cpu_s": stat("instances_cpu_s"),
        "peak_rss_mib": stat("peak_rss_mib"),
        "instances_per_s": round(11_400 / statistics.median(r["instances_s"] for r in runs), 1),
        "db_mib": round(first["db_mib"], 2),
        "db_content_hash": first["db_content_hash"],
        "files": first["files"],
        "deterministic": len(shas) == 1,
        "stats": first["stats"],
        "target_s": target,
        "within_target": statistics.median(r["wall_s"] for r in runs) <= target,
    }


def markdown(summary: dict[str, Any]) -> str:
    rows = [("Total wall time, fresh process (s)", "total_wall_s"), ("Imports (s)", "import_s"),
            ("Database build (s)", "db_build_s"), ("All 11,400 instances (s)", "instances_s"),
            ("CPU time, all processes (s)", "cpu_s"),
            ("CPU time, instances with witnesses and QC (s)", "instances_cpu_s"),
            ("Peak RSS (MiB)", "peak_rss_mib")]  # fmt: skip
    lines = ["| measure | median | min | max |", "| --- | ---: | ---: | ---: |"]
    for name, key in rows:
        s = summary[key]
        lines.append(f"| {name} | {s['median']:.2f} | {s['min']:.2f} | {s['max']:.2f} |")
    lines.append(f"| Instances per second | {summary['instances_per_s']} | | |")
    for split, f in summary["files"].items():
        lines.append(f"| instances-small-v*-{split}.jsonl (MiB) | {f['mib']:.1f} | | |")
    lines += ["", "| split | level | actions | preferences | POIs | days | companions |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for split, by_diff in summary["stats"].items():
        for diff in ("easy", "medium", "hard"):
            e = by_diff[diff]
            cells = [f"{e[k]['measured']:.2f} ({e[k]['paper']})" for k in
                     ("actions", "preferences", "pois", "days", "companions")]  # fmt: skip
            lines.append(f"| {split} | {diff} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1, help="builds to time (default 1)")
    parser.add_argument("--workers", type=int, default=None, help="generator processes")
    parser.add_argument("--target-s", type=float, default=TARGET_S, help="median total target")
    parser.add_argument(
        "--reference",
        nargs="?",
        const="",
        default=None,
        metavar="REV",
        help="also build once on git revision REV (default: before issue 31)",
    )
    parser.add_argument("--child", metavar="DATA_DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.workers)
        return 0
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    try:
        runs = [run_once(args.workers) for _ in range(args.repeats)]
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 2
    summary = summarise(runs, args.target_s, args.workers)
    if args.reference is not None:
        from reference import BEFORE_ISSUE_31, reference_src

        rev = args.reference or BEFORE_ISSUE_31
        ref = run_once(args.workers, reference_src(rev))
        summary["reference"] = {"rev": rev, **{k: round(ref[k], 2) for k in (
            "wall_s", "cpu_s", "instances_s", "instances_cpu_s", "peak_rss_mib")}}  # fmt: skip
        summary["ratio_now_to_reference"] = {
            k: round(summary[k]["median"] / ref[k], 3) for k in ("instances_cpu_s", "peak_rss_mib")
        } | {  # fmt: skip
            "total_wall_s": round(summary["total_wall_s"]["median"] / ref["wall_s"], 3)
        }
    print(json.dumps(summary, indent=2))
    print()
    print(markdown(summary))
    return 0 if summary["within_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
