"""CPU cost of a Behavior2Trip instance (generation with its witness plan, and the rule-based
quality control), this checkout against a reference revision, measured in the same run.

Each side builds the first ``--per-level`` filtered instances of every (split, difficulty) of
the small database in a fresh child process with one worker, the database built first and not
timed: this checkout through the slot store (``instance_slots.fill``), the reference through
what it had (``generate_files`` with ``per_difficulty`` and ``filter_files``; before issue 31
a removed instance was replaced by one beyond the last index). The report gives CPU seconds
per instance, peak RSS, their ratios (now / reference), the projection to all 11,400 instances,
and how many unfiltered instances are byte-identical on both sides (instance ``i``'s candidate
0 has the same generator key on both).

    python benchmarks/b2t_instance_cost.py [--per-level 40] [--reference [REV]] [--json]

The reference defaults to the commit before issue 31 (``benchmarks/reference.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from reference import BEFORE_ISSUE_31, env_for, reference_src, timed_child

SPLITS = ("train", "test")
LEVELS = ("easy", "medium", "hard")
TOTAL = 11_400


def _cpu() -> float:
    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def child(data_dir: str, per_level: int, out: str) -> None:
    """Build the instances in this process; print one JSON line; write the unfiltered lines."""
    from travelgym.suites.behavior2trip.build import ensure_database

    db = ensure_database(data_dir=data_dir)
    start, wall = _cpu(), time.perf_counter()
    try:
        from travelgym.suites.behavior2trip.instance_slots import fill
        from travelgym.suites.behavior2trip.instances import open_store
    except ImportError:  # the reference: whole files of the first n per difficulty
        from travelgym.suites.behavior2trip.instances import generate_files
        from travelgym.suites.behavior2trip.quality_filter import filter_files

        raw = {s: Path(data_dir) / f"raw-{s}.jsonl" for s in SPLITS}
        generate_files(db.path, 2024, list(SPLITS), raw, workers=1, per_difficulty=per_level)
        for split in SPLITS:
            filter_files(db.path, 2024, split, raw[split], Path(data_dir) / f"{split}.jsonl", 1)
        lines = [line for s in SPLITS for line in raw[s].read_text().splitlines()]
    else:
        keys = [(s, d, i) for s in SPLITS for d in LEVELS for i in range(per_level)]
        with open_store(db, data_dir, 2024) as store:
            fill(store, db.path, 2024, keys, workers=1)
            lines = [slot.unfiltered for slot in store.iter(keys)]
    cpu, wall = _cpu() - start, time.perf_counter() - wall
    Path(out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(json.dumps({"cpu_s": cpu, "wall_s": wall}))


def measure(per_level: int, src: Path | None, lines_out: Path) -> dict[str, Any]:
    """One side's build in a fresh child process and data directory."""
    with tempfile.TemporaryDirectory(prefix="tg-b2t-cost-") as tmp:
        cmd = [sys.executable, __file__, "--child", tmp, "--per-level", str(per_level),
               "--lines", str(lines_out)]  # fmt: skip
        log = Path(tmp) / "log"
        timed = timed_child(cmd, env_for(src), log)
        text = log.read_text(errors="replace")
    result = json.loads(text.strip().splitlines()[-1])
    n = 2 * 3 * per_level
    return {"instances": n, "cpu_s": round(result["cpu_s"], 2), "wall_s": round(result["wall_s"], 2),
            "cpu_ms_per_instance": round(1000 * result["cpu_s"] / n, 1),
            "projected_cpu_s_all_11400": round(result["cpu_s"] / n * TOTAL),
            "peak_rss_mib": round(timed["peak_rss_mib"], 1)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-level", type=int, default=40)
    parser.add_argument("--reference", default=BEFORE_ISSUE_31, metavar="REV")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--lines", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.per_level, args.lines)
        return 0
    with tempfile.TemporaryDirectory(prefix="tg-b2t-cost-lines-") as tmp:
        now = measure(args.per_level, None, Path(tmp) / "now")
        ref = measure(args.per_level, reference_src(args.reference), Path(tmp) / "ref")
        a, b = ((Path(tmp) / n).read_text().splitlines() for n in ("now", "ref"))
        same = sum(x == y for x, y in zip(sorted(a), sorted(b), strict=False))
    summary = {
        "benchmark": "behavior2trip_instance_cost", "per_level": args.per_level,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(), "load": os.getloadavg()},
        "now": now, "reference": {"rev": args.reference, **ref},
        "ratio_cpu_now_to_reference": round(now["cpu_s"] / ref["cpu_s"], 3),
        "ratio_peak_rss_now_to_reference": round(now["peak_rss_mib"] / ref["peak_rss_mib"], 3),
        "unfiltered_identical": f"{same} of {len(a)}",
    }  # fmt: skip
    print(json.dumps(summary, indent=2))
    if not args.json:
        print("\n| code | instances | CPU s | ms per instance | projected CPU s, all 11,400 |\n"
              "| --- | ---: | ---: | ---: | ---: |")  # fmt: skip
        for name, r in (("now", now), (f"reference {args.reference}", ref)):
            print(f"| {name} | {r['instances']} | {r['cpu_s']} | {r['cpu_ms_per_instance']} | "
                  f"{r['projected_cpu_s_all_11400']} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
