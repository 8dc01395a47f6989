"""Time a new user's first Behavior2Trip command on a fresh data directory:

    travelgym run behavior2trip --limit 20 --data-dir FRESH --out TMP --no-progress --json

which builds the POI database and the instances it needs (with witnesses and quality control),
then plays 20 episodes with the scripted agent. Each command runs in a child process; the report
gives its wall time, CPU time (the child and its worker processes, from ``os.wait4``) and peak
RSS. With ``--reference [REV]`` the same command also runs on the code of git revision REV
(default: the commit before issue 31's speed work; ``benchmarks/reference.py``) in the same
session, alternating, and the report gives the ratios now/reference.

    python benchmarks/first_run_behavior2trip.py [--limit 20] [--repeats 1] [--reference [REV]]
        [--target-s 60] [--json]

Exits 1 when the median wall time of this checkout's command exceeds ``--target-s`` (60 s).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from reference import BEFORE_ISSUE_31, env_for, reference_src, timed_child

TARGET_S = 60.0


def first_run(limit: int, src: Path | None) -> dict[str, Any]:
    """One first-use command in a fresh data directory; its wall, CPU and peak RSS."""
    with tempfile.TemporaryDirectory(prefix="tg-b2t-first-") as tmp:
        cmd = [sys.executable, "-m", "travelgym.cli", "run", "behavior2trip", "--limit", str(limit),
               "--data-dir", str(Path(tmp) / "data"), "--out", str(Path(tmp) / "runs"),
               "--no-progress", "--json"]  # fmt: skip
        timed = timed_child(cmd, env_for(src), Path(tmp) / "log")
        episodes = sum(1 for _ in (Path(tmp) / "runs" / "scripted" / "episodes.jsonl").open())
    return {**{k: round(v, 2) for k, v in timed.items()}, "episodes": episodes}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--reference", nargs="?", const=BEFORE_ISSUE_31, default=None,
                        metavar="REV", help="also time git revision REV (default: before issue 31)")  # fmt: skip
    parser.add_argument("--target-s", type=float, default=TARGET_S)
    parser.add_argument("--json", action="store_true", help="print only the JSON summary")
    args = parser.parse_args(argv)
    ref_src = reference_src(args.reference) if args.reference else None
    now, ref = [], []
    for _ in range(args.repeats):
        now.append(first_run(args.limit, None))
        if ref_src is not None:
            ref.append(first_run(args.limit, ref_src))

    def median(runs: list[dict[str, Any]], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    summary: dict[str, Any] = {
        "benchmark": "behavior2trip_first_run", "limit": args.limit, "repeats": args.repeats,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version()},
        "now": now, "target_s": args.target_s,
        "within_target": median(now, "wall_s") <= args.target_s,
    }  # fmt: skip
    if ref:
        summary["reference"] = {"rev": args.reference, "runs": ref}
        summary["ratio_now_to_reference"] = {
            k: round(median(now, k) / median(ref, k), 3) for k in ("wall_s", "cpu_s",
                                                                   "peak_rss_mib")}  # fmt: skip
    print(json.dumps(summary, indent=2))
    if not args.json:
        print("\n| code | wall (s) | CPU (s) | peak RSS (MiB) |\n| --- | ---: | ---: | ---: |")
        for name, runs in (("now", now), (f"reference {args.reference}", ref)):
            if runs:
                print(f"| {name} | {median(runs, 'wall_s')} | {median(runs, 'cpu_s')} | "
                      f"{median(runs, 'peak_rss_mib')} |")  # fmt: skip
    return 0 if summary["within_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
