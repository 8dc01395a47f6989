"""The exhaustive scripted agent on every task of several database seeds.

Each database seed has its own task file (the shipped one for seed 0, a generated one for the
others); a valid task set lets the exhaustive agent, which searches every allowed stay through
the tools, reach the optimum on every task. Prints FR / OR-5 / optimal per seed and level.

    python benchmarks/exhaustive_seeds.py --seeds 0 1 5 [--data-dir DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from travelgym.runner.batch import RunConfig, run_suite


def run_seed(seed: int, out: Path, data_dir: Path | None) -> dict:
    """The score summary of the exhaustive agent on every task of database seed ``seed``."""
    clock = time.perf_counter()
    cfg = RunConfig("compass", "scripted:exhaustive", out=out, db_seed=seed, data_dir=data_dir,
                    progress=False, concurrency=8)  # fmt: skip
    summary = asyncio.run(run_suite(cfg))
    return {"seed": seed, "seconds": round(time.perf_counter() - clock, 1),
            "overall": summary["overall"], "by_level": summary["by_level"]}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 5])
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            result = run_seed(seed, Path(tmp) / f"seed{seed}", args.data_dir)
            results.append(result)
            o = result["overall"]
            print(f"seed {seed}: n={o['n']} FR={o['FR']} OR5={o['OR5']} optimal={o['optimal']} "
                  f"({result['seconds']} s)")  # fmt: skip
            for level, row in result["by_level"].items():
                print(f"  level {level}: n={row['n']} FR={row['FR']} OR5={row['OR5']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
