"""What the witness search's byte-changing levers would save: each variant of the search
builds the same Behavior2Trip slots in a child process of its own, the variants alternated over
``--rounds``, and the report gives each one's CPU per slot against the installed search (median
over the rounds, same run), how many slots it builds differently (their instance bytes would
change: a new instance generator version), its witness attempts and redrawn profiles, and its peak RSS.

Variants (none is installed; each is applied to this checkout inside its child only):

- ``baseline``: the installed search (12 requests per profile before the profile is redrawn);
- ``attempts=N``: ``N`` requests per profile instead of 12 (fewer full attempts spent on a
  profile whose requests have no witness, more profiles drawn);
- ``budget-stop``: the oracle stops a plan as soon as the days planned so far cost more than
  the budget (the next thrift level is tried at once; at the last level it gives up) instead
  of planning every day first; a plan abandoned this way no longer gives up at a later day
  it could not plan, so a few requests gain a witness.

Each child builds the first ``--per-level`` slots of every (split, difficulty) of the small
database (one warm-up slot first, not timed) with ``time.process_time``.

    python benchmarks/b2t_witness_levers.py [--per-level 60] [--rounds 2]
        [--attempts 6 4] [--data-dir DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

SPLITS = ("train", "test")
LEVELS = ("easy", "medium", "hard")
TOTAL = 11_400
WARM = ("test", "easy", 799)  # a slot outside the measured ones: imports, catalog, connections


def _budget_stop() -> None:
    """Make the oracle stop a witness search's plan once its days exceed the budget."""
    from travelgym.suites.behavior2trip.agents import oracle
    from travelgym.suites.behavior2trip.agents.scripted import THRIFT_LEVELS, Planner
    from travelgym.suites.behavior2trip.agents.scripted_plan import plan_cost, render_day

    def assemble(self) -> list[dict[str, Any]]:
        ins = self.ins
        if not (self.give_up and not getattr(self.env, "records", True) and ins.budget_cny > 0):
            return Planner.assemble(self)
        self.used = set()
        self.hotel = self.choose_hotel()
        makers = [self.arrival_day, *(self.full_day for _ in range(1, ins.days - 1)),
                  self.departure_day]  # fmt: skip
        days: list[dict[str, Any]] = []
        for index, make in enumerate(makers, start=1):
            days.append(render_day(make(), index, ins, self.weather, self.city_info))
            if plan_cost(days, ins.travellers, ins.rooms) > ins.budget_cny:
                if self.thrift == THRIFT_LEVELS[-1]:
                    raise oracle.Unplannable("over the budget at every thrift level")
                return days  # over the budget: plan_steps tries the next thrift level
        return days

    oracle.OraclePlanner.assemble = assemble


def child(variant: str, per_level: int, data_dir: str) -> dict[str, Any]:
    """Build the slots under ``variant`` in this process; CPU, counts and slot digests."""
    from travelgym.suites.behavior2trip import witness
    from travelgym.suites.behavior2trip.build import ensure_database
    from travelgym.suites.behavior2trip.instance_slots import build_slot

    if variant.startswith("attempts="):
        witness.WITNESS_ATTEMPTS = int(variant.split("=", 1)[1])
    elif variant == "budget-stop":
        _budget_stop()
    elif variant != "baseline":
        raise SystemExit(f"unknown variant {variant!r}")
    path = str(ensure_database(data_dir=data_dir).path)
    build_slot(path, 2024, WARM)
    keys = [(s, d, i) for s in SPLITS for d in LEVELS for i in range(per_level)]
    digests, rejections, candidates = {}, {}, 0
    start = time.process_time()
    for key in keys:
        slot = build_slot(path, 2024, key)
        digests["/".join(map(str, key))] = slot.digest()
        candidates += len(slot.info["candidates"])
        for name, n in slot.info["rejections"].items():
            rejections[name] = rejections.get(name, 0) + n
    cpu = time.process_time() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"peak_rss_mib": round(rss), "variant": variant, "slots": len(keys), "cpu_s": round(cpu, 3),
            "cpu_ms_per_slot": round(1000 * cpu / len(keys), 2), "candidates": candidates,
            "witness_attempts_failed": rejections.get("witness", 0),
            "profiles_redrawn": rejections.get("witness_profile", 0), "digests": digests}  # fmt: skip


def measure(variants: list[str], per_level: int, rounds: int, data_dir: str) -> dict[str, Any]:
    """Run every variant ``rounds`` times, alternated, each in a fresh child process."""
    from travelgym.suites.behavior2trip.build import ensure_database

    ensure_database(data_dir=data_dir)  # built once, outside the children's timing
    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
    env = dict(os.environ, TRAVELGYM_NO_PROGRESS="1")
    for _ in range(rounds):
        for variant in variants:
            out = subprocess.run([sys.executable, __file__, "--child", variant, "--per-level",
                                  str(per_level), "--data-dir", data_dir],
                                 check=True, capture_output=True, text=True, env=env)  # fmt: skip
            runs[variant].append(json.loads(out.stdout))
    base = runs["baseline"][0]["digests"]
    base_ms = statistics.median(r["cpu_ms_per_slot"] for r in runs["baseline"])
    report = {}
    for variant, done in runs.items():
        first = done[0]
        ms = statistics.median(r["cpu_ms_per_slot"] for r in done)
        report[variant] = {
            "cpu_ms_per_slot": [r["cpu_ms_per_slot"] for r in done],
            "median_ms_per_slot": ms,
            "ratio_to_baseline": round(ms / base_ms, 3),
            "projected_cpu_s_all_11400": round(ms * TOTAL / 1000),
            "peak_rss_mib": max(r["peak_rss_mib"] for r in done),
            "slots_changed": sum(first["digests"][k] != v for k, v in base.items()),
            "candidates": first["candidates"],
            "witness_attempts_failed": first["witness_attempts_failed"],
            "profiles_redrawn": first["profiles_redrawn"],
        }
    return {"slots": runs["baseline"][0]["slots"], "variants": report}


def main(argv: list[str] | None = None) -> int:
    """Command line: measure and print the report (text or ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-level", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--attempts", type=int, nargs="*", default=[6, 4])
    parser.add_argument("--data-dir", help="a data directory (default: a temporary one)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = args.data_dir or tmp
        if args.child:
            print(json.dumps(child(args.child, args.per_level, data_dir)))
            return 0
        variants = ["baseline", *(f"attempts={n}" for n in args.attempts), "budget-stop"]
        result = measure(variants, args.per_level, args.rounds, data_dir)
    result = {"benchmark": "behavior2trip_witness_levers", "per_level": args.per_level,
              "rounds": args.rounds, "machine": {"cpus": os.cpu_count(),
              "platform": platform.platform(), "python": platform.python_version(),
              "load": list(os.getloadavg())}, **result}  # fmt: skip
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{result['slots']} slots per variant, {args.rounds} rounds (median CPU ms per slot)")
    for variant, r in result["variants"].items():
        print(f"{variant:>12}: {r['median_ms_per_slot']:6.2f} ms ({r['ratio_to_baseline']:.3f}), "
              f"{r['peak_rss_mib']} MiB, {r['slots_changed']} slots changed, "
              f"{r['witness_attempts_failed']} failed "
              f"requests, {r['profiles_redrawn']} profiles redrawn")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
