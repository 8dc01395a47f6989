"""How much OR-A % credits on each task: the share of the feasible set at least as good as the
top-A % threshold on the scored key (objective, then the stated tie-break).

    python benchmarks/credited_shares.py [--seed 0] [--data-dir DIR]

Prints, for A in 5/10/20, the distribution (min, median, 90th percentile, max) of
credited / |X_feas| over the seed's tasks, how many tasks are at the bound
max(2, 2 x A % x |X_feas|), how many tasks have more than one optimal plan, and how many have
their optimum equal to the top-5 % threshold. With ``--no-tie-break`` the same figures for
the objective alone (what ties would credit without the stated tie-break).
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

import numpy as np

from travelgym.db import connect_readonly
from travelgym.suites.compass.build import ensure_database
from travelgym.suites.compass.solver import TOP_PERCENTS, solve
from travelgym.suites.compass.task_sets import task_file_for
from travelgym.suites.compass.taskgen import credit_bound
from travelgym.suites.compass.tasks import load_tasks


def shares(seed: int, data_dir: Path | None, tie_break: bool) -> dict:
    """Credited shares, bound violations and optimal counts over the seed's tasks."""
    conn = connect_readonly(ensure_database(seed=seed, data_dir=data_dir).path)
    out = {"shares": collections.defaultdict(list), "over_bound": collections.Counter(),
           "optimal_counts": [], "optimum_is_t5": 0, "tasks": 0}  # fmt: skip
    for task in load_tasks(task_file_for(seed, data_dir)):
        if not tie_break:
            objective = task.objective.model_copy(update={"tie_break": None})
            task = task.model_copy(update={"objective": objective})
        truth = solve(conn, task)
        n = truth.feasible_count
        out["tasks"] += 1
        for a in TOP_PERCENTS:
            credited = truth.credited[str(a)]
            out["shares"][a].append(credited / n)
            out["over_bound"][a] += credited > credit_bound(a, n)
        out["optimal_counts"].append(truth.optimal_count)
        out["optimum_is_t5"] += tuple(truth.thresholds["5"]) == tuple(truth.optimum_key)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--no-tie-break", action="store_true")
    args = parser.parse_args()
    result = shares(args.seed, args.data_dir, tie_break=not args.no_tie_break)
    print(f"seed {args.seed}: {result['tasks']} tasks"
          f"{' (objective alone, no tie-break)' if args.no_tie_break else ''}")  # fmt: skip
    print("A   min     median  p90     max     over bound")
    for a in TOP_PERCENTS:
        q = np.percentile(result["shares"][a], [0, 50, 90, 100]) * 100
        print(f"{a:<3} " + " ".join(f"{v:6.2f}%" for v in q) + f"  {result['over_bound'][a]}")
    several = sum(c > 1 for c in result["optimal_counts"])
    print(f"tasks with more than one optimal plan: {several} (max {max(result['optimal_counts'])})")
    print(f"tasks whose optimum equals the top-5 % threshold: {result['optimum_is_t5']}")


if __name__ == "__main__":
    main()
