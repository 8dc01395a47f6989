"""Where a Behavior2Trip slot's CPU goes, by what each witness attempt came to: the part any
witness search must pay (the oracle's planning and checking of the request it keeps) against
the part spent on attempts that end without a witness.

Builds the first ``--per-level`` slots of every (split, difficulty) of the small database in
this process (one worker, the database built first and not timed) and times, with
``time.process_time``, each call of the witness search by its outcome:

- ``kept``: the oracle planned the request and its plan passed every check (the witness);
- ``checks_failed``: a full plan that failed a check; ``gave_up``: the oracle gave up
  (at the leg screen or on a day no template fits); ``unsatisfiable``: refused from the
  database alone before any planning;
- ``profile_redrawn``: every attempt of a profile whose 12 requests had no witness (the
  profile is drawn again), counted apart from the classes above;
- the rest of the slot (drawing profiles, trajectories and requests, the quality control,
  serialising).

``kept`` is split again into the candidates the quality control keeps and those it removes
(whose witness is paid for and dropped). The ``kept`` share of the kept candidates is the
floor of this design: a faster oracle and checks can lower it, fewer attempts cannot.

    python benchmarks/b2t_witness_breakdown.py [--per-level 30] [--data-dir DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from typing import Any

SPLITS = ("train", "test")
LEVELS = ("easy", "medium", "hard")
TOTAL = 11_400
TARGET_CPU_S = 120  # issue 31: all 11,400 instances with witnesses and quality control
SPLITS_WARM = 799  # the last test slot of a level: a warm-up outside the measured ones


def measure(data_dir: str, per_level: int) -> dict[str, Any]:
    """Build the slots in this process, timing the witness search by outcome."""
    from travelgym.suites.behavior2trip import witness
    from travelgym.suites.behavior2trip.build import ensure_database
    from travelgym.suites.behavior2trip.instance_slots import build_slot

    db = ensure_database(data_dir=data_dir)
    path = str(db.path)
    build_slot(path, 2024, ("test", "easy", SPLITS_WARM))  # imports, catalog, connections
    seconds: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    attempt: dict[str, float] = {}
    unsatisfiable, plan, witnessed = (witness._unsatisfiable, witness._witness_plan,
                                      witness.witnessed)  # fmt: skip

    def timed_unsatisfiable(instance, db_path):
        start = time.process_time()
        found = unsatisfiable(instance, db_path)
        attempt["s"] = time.process_time() - start
        attempt["outcome"] = "unsatisfiable" if found is not None else "planned"
        return found

    def timed_plan(instance, db_path):
        start = time.process_time()
        found = plan(instance, db_path)
        attempt["s"] += time.process_time() - start
        attempt["outcome"] = ("gave_up" if found is None
                              else "checks_failed" if found[1] else "kept")  # fmt: skip
        return found

    def timed_witnessed(draw_request, build, db_path, rejections):
        outcomes: list[tuple[str, float]] = []

        def find(instance, db_path):
            attempt.clear()
            found = original_find(instance, db_path)
            outcomes.append((attempt["outcome"], attempt["s"]))
            return found

        original_find, witness.find_witness = witness.find_witness, find
        try:
            found = witnessed(draw_request, build, db_path, rejections)
        finally:
            witness.find_witness = original_find
        if found is None:
            seconds["profile_redrawn"] += sum(s for _, s in outcomes)
            counts["profile_redrawn"] += len(outcomes)
        else:
            for outcome, s in outcomes:
                seconds[outcome] += s
                counts[outcome] += 1
            pending.append(outcomes[-1][1])  # the kept attempt, until the control's verdict
        return found

    pending: list[float] = []
    witness._unsatisfiable, witness._witness_plan = timed_unsatisfiable, timed_plan
    witness.witnessed = timed_witnessed
    keys = [(s, d, i) for s in SPLITS for d in LEVELS for i in range(per_level)]
    candidates = removed = 0
    start = time.process_time()
    try:
        for key in keys:
            slot = build_slot(path, 2024, key)
            n = len(slot.info["candidates"])
            candidates += n
            removed += n - 1
            # every candidate but the last one was removed by the quality control
            seconds["kept_removed_by_qc"] += sum(pending[:-1])
            seconds["kept_in_slot"] += pending[-1]
            pending.clear()
    finally:
        witness._unsatisfiable, witness._witness_plan = unsatisfiable, plan
        witness.witnessed = witnessed
    total = time.process_time() - start
    n = len(keys)
    searched = sum(seconds[k] for k in ("kept", "checks_failed", "gave_up", "unsatisfiable",
                                        "profile_redrawn"))  # fmt: skip
    parts = {
        "kept_in_slot": seconds["kept_in_slot"],
        "kept_removed_by_qc": seconds["kept_removed_by_qc"],
        "checks_failed": seconds["checks_failed"],
        "gave_up": seconds["gave_up"],
        "unsatisfiable": seconds["unsatisfiable"],
        "profile_redrawn": seconds["profile_redrawn"],
        "rest_of_slot": total - searched,
    }
    return {
        "slots": n, "candidates": candidates, "removed_by_qc": removed,
        "attempts": dict(counts), "cpu_s": round(total, 3),
        "cpu_ms_per_slot": round(1000 * total / n, 2),
        "projected_cpu_s_all_11400": round(total / n * TOTAL),
        "ms_per_slot": {k: round(1000 * v / n, 2) for k, v in parts.items()},
        "share": {k: round(v / total, 3) for k, v in parts.items()},
        "floor_ms_per_slot": round(1000 * parts["kept_in_slot"] / n, 2),
        "target_ms_per_slot": round(1000 * TARGET_CPU_S / TOTAL, 2),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-level", type=int, default=30)
    parser.add_argument("--data-dir", help="a data directory (default: a temporary one)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not 1 <= args.per_level < SPLITS_WARM:
        parser.error(f"--per-level must be from 1 to {SPLITS_WARM - 1}")
    with tempfile.TemporaryDirectory(prefix="tg-b2t-breakdown-") as tmp:
        result = measure(args.data_dir or tmp, args.per_level)
    summary = {"benchmark": "behavior2trip_witness_breakdown", "per_level": args.per_level,
               "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                           "python": platform.python_version(), "load": os.getloadavg()},
               **result}  # fmt: skip
    print(json.dumps(summary, indent=2))
    if not args.json:
        print("\n| part | ms per slot | share |\n| --- | ---: | ---: |")
        for part, ms in result["ms_per_slot"].items():
            print(f"| {part} | {ms} | {result['share'][part]:.0%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
