"""How far Behavior2Trip's instances are from satisfiable by construction (issue 18, item 1).

For the first N instances of each difficulty of a split, as the generator draws them (profile,
trajectory, request), the oracle planner (``agents.oracle.oracle_plan``, the hidden profile,
every fact through the tools) looks for a *witness*: a plan passing every applicable check. A
request without one is drawn again keeping its days and party (only the destination, the dates
and the budget change), up to ``--attempts`` times, then the profile is drawn again. Reported
per difficulty: the share of generated requests that have a witness as drawn, requests and
profiles drawn per instance, the mean trip length of the witnessed requests next to the drawn
ones (the bias a rejection loop would add) and seconds per instance (what generating the
instance files that way would cost).

    python benchmarks/b2t_witness.py [--per-level 30] [--attempts 12] [--split test] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def witness(instance: Any, conn: Any, pdb: Any) -> bool:
    """Whether the oracle's plan for ``instance`` passes every applicable check."""
    from travelgym.suites.behavior2trip.agents.oracle import oracle_plan
    from travelgym.suites.behavior2trip.checks import run_checks
    from travelgym.suites.behavior2trip.plan_parse import parse_plan

    plan = oracle_plan(instance, conn, give_up=True)
    if plan is None:
        return False
    parsed, _ = parse_plan(f"<answer>{plan}</answer>")
    return parsed is not None and all(
        r.passed is not False for r in run_checks(parsed, instance, pdb)
    )


def redraw(first: Any, profile: Any, trajectory: Any, catalog: Any, d: Any) -> Any:
    """Another request for the same traveller, days and party: destination, dates, budget."""
    from travelgym.suites.behavior2trip import instruction as ins

    dest = ins.choose_destination(profile, trajectory, catalog, d)
    start = d.randint(0, len(ins.DATES) - first.days)
    budget = ins.estimate_budget(profile, catalog, dest, first.days, first.travellers,
                                 math.ceil(first.travellers / 2), d)  # fmt: skip
    return first.model_copy(update={"destination_city": dest, "start_date": ins.DATES[start],
                                    "end_date": ins.DATES[start + first.days - 1],
                                    "budget_cny": budget})  # fmt: skip


def level(catalog: Any, conn: Any, pdb: Any, split: str, difficulty: str, n: int,
          attempts: int, seed: int) -> dict[str, Any]:  # fmt: skip
    from travelgym.suites.behavior2trip.instances import (
        Instance,
        draw_triplet,
        instance_id,
        with_history,
    )
    from travelgym.suites.behavior2trip.instruction import make_instruction
    from travelgym.suites.behavior2trip.profiles import rng_for

    tick = time.perf_counter()
    requests = profiles = as_drawn = 0
    drawn_days, kept_days = [], []
    for i in range(n):
        iid = instance_id(split, difficulty, i)
        d = rng_for(seed, "instance", split, difficulty, i)
        found, tries = False, 0
        while not found and tries < 100:
            profiles += 1
            tries += 1
            profile, _, trajectory = draw_triplet(catalog, d, iid, difficulty, {})
            profile = with_history(profile, trajectory)
            first = request = make_instruction(profile, trajectory, catalog, d)
            if len(drawn_days) == i:
                drawn_days.append(first.days)
            for k in range(attempts):
                requests += 1
                instance = Instance(instance_id=iid, split=split, difficulty=difficulty,
                                    instruction=request, trajectory=trajectory, profile=profile)  # fmt: skip
                if witness(instance, conn, pdb):
                    found = True
                    as_drawn += k == 0 and tries == 1
                    kept_days.append(request.days)
                    break
                request = redraw(first, profile, trajectory, catalog, d)
    seconds = time.perf_counter() - tick
    return {"instances": n, "witness_as_drawn": round(as_drawn / n, 3),
            "requests_per_instance": round(requests / n, 2),
            "profiles_per_instance": round(profiles / n, 2),
            "mean_days_drawn": round(sum(drawn_days) / n, 2),
            "mean_days_witnessed": round(sum(kept_days) / max(1, len(kept_days)), 2),
            "seconds_per_instance": round(seconds / n, 3)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-level", type=int, default=30)
    parser.add_argument("--attempts", type=int, default=12)
    parser.add_argument("--split", choices=("train", "test"), default="test")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from travelgym.db import connect_readonly
    from travelgym.suites.behavior2trip.behaviour_pool import PoiCatalog
    from travelgym.suites.behavior2trip.build import ensure_database
    from travelgym.suites.behavior2trip.checks import PlanDB

    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="b2t-witness-"))
    db = ensure_database(data_dir=data_dir)
    catalog = PoiCatalog.from_database(db.path)
    conn = connect_readonly(db.path)
    pdb = PlanDB(conn)
    out = {diff: level(catalog, conn, pdb, args.split, diff, args.per_level, args.attempts,
                       args.seed) for diff in ("easy", "medium", "hard")}  # fmt: skip
    conn.close()
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
