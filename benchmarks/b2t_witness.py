"""What satisfiable-by-construction costs Behavior2Trip's instance generator (issue 18, item 1).

Every instance is generated with a *witness*: the oracle planner (the hidden profile, every fact
through the tools) plans the drawn request and the 32 checks pass the plan; a request without
one is drawn again with the same trip length and party (destination, dates and budget change),
up to ``WITNESS_ATTEMPTS`` times, then the profile is drawn again
(``travelgym.suites.behavior2trip.witness``). For the first N instances of each difficulty of a
split this reports: the share whose first request had a witness, requests and profiles drawn per
instance, how often the kept request names another destination than the first one drawn, mean
trip length of the first requests next to the kept ones (the bias profile redraws could add),
and seconds per instance next to the same generator with the witness search switched off (the
reference, in the same run: the ratio is the figure to compare across machines).

    python benchmarks/b2t_witness.py [--per-level 60] [--split test] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def level(catalog: Any, split: str, difficulty: str, n: int, seed: int) -> dict[str, Any]:
    """The witness figures of instances 0..n-1 of one level."""
    from travelgym.suites.behavior2trip import witness as w
    from travelgym.suites.behavior2trip.instances import generate_instance

    real = w.find_witness
    requests: list[tuple[Any, bool]] = []

    def recording(instance: Any, db_path: str) -> str | None:
        plan = real(instance, db_path)
        requests.append((instance.instruction, plan is not None))
        return plan

    w.find_witness = recording
    rows = []
    tick = time.perf_counter()
    try:
        for i in range(n):
            requests.clear()
            rejections: dict[str, int] = {}
            kept = generate_instance(catalog, seed, split, difficulty, i, rejections)
            first = requests[0][0]
            rows.append({"first_ok": requests[0][1], "requests": len(requests),
                         "profiles": 1 + rejections.get("witness_profile", 0),
                         "moved": kept.instruction.destination_city != first.destination_city,
                         "days_first": first.days, "days_kept": kept.instruction.days})  # fmt: skip
    finally:
        w.find_witness = real
    seconds = time.perf_counter() - tick

    def mean(key: str) -> float:
        return round(sum(float(r[key]) for r in rows) / n, 3)

    return {"instances": n, "witness_as_drawn": mean("first_ok"),
            "requests_per_instance": mean("requests"), "profiles_per_instance": mean("profiles"),
            "destination_changed": mean("moved"), "mean_days_first": mean("days_first"),
            "mean_days_kept": mean("days_kept"), "s_per_instance": round(seconds / n, 4)}  # fmt: skip


def reference(catalog: Any, split: str, difficulty: str, n: int, seed: int) -> float:
    """Seconds per instance of the same generator with every first request accepted."""
    from travelgym.suites.behavior2trip import witness as w
    from travelgym.suites.behavior2trip.instances import generate_instance

    real = w.find_witness
    w.find_witness = lambda instance, db_path: "[]"
    tick = time.perf_counter()
    try:
        for i in range(n):
            generate_instance(catalog, seed, split, difficulty, i, {})
    finally:
        w.find_witness = real
    return (time.perf_counter() - tick) / n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-level", type=int, default=60)
    parser.add_argument("--split", choices=("train", "test"), default="test")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--scale", choices=("small", "full"), default="small")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from travelgym.suites.behavior2trip.behaviour_pool import PoiCatalog
    from travelgym.suites.behavior2trip.build import ensure_database

    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="b2t-witness-"))
    db = ensure_database(data_dir=data_dir, scale=args.scale)
    catalog = PoiCatalog.from_database(db.path)
    out = {}
    for diff in ("easy", "medium", "hard"):
        row = level(catalog, args.split, diff, args.per_level, args.seed)
        base = reference(catalog, args.split, diff, args.per_level, args.seed)
        out[diff] = {**row, "ratio_to_no_witness": round(row["s_per_instance"] / base, 1)}
    if args.json:
        print(json.dumps(out, indent=2))
    keys = list(next(iter(out.values())))
    print("| level | " + " | ".join(keys) + " |")
    print("| --- |" + " ---: |" * len(keys))
    for diff, row in out.items():
        print(f"| {diff} | " + " | ".join(str(row[k]) for k in keys) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
