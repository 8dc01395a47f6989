"""How much OR-A % credits on each task: the share of the feasible set whose utility f is at
least the top-A % threshold (the f of the plan at position ceil(A % x |X_feas|)), ties on f
included, as the paper ranks (task files of version 3 state no tie-break).

    python benchmarks/credited_shares.py [--seed 0] [--data-dir DIR]

Prints, for A in 5/10/20, the distribution (min, median, 90th percentile, max) of
credited / |X_feas| over the seed's tasks and how many tasks are over the bound
max(2, 2 x A % x |X_feas|); the distribution of the number of distinct values f takes over
X_feas (and how many tasks have fewer than 5); how many tasks have more than one plan optimal
on f, and how many have their optimum equal to the top-5 % threshold. A task of an older task
file that states a tie-break is ranked on f alone here all the same.
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
from travelgym.suites.compass.taskgen import MIN_DISTINCT, credit_bound
from travelgym.suites.compass.tasks import load_tasks


def shares(seed: int, data_dir: Path | None) -> dict:
    """Credited shares, bound violations, distinct values and optimal counts on f alone over
    the seed's tasks."""
    conn = connect_readonly(ensure_database(seed=seed, data_dir=data_dir).path)
    out = {"shares": collections.defaultdict(list), "over_bound": collections.Counter(),
           "optimal_counts": [], "distinct": [], "optimum_is_t5": 0, "tasks": 0}  # fmt: skip
    for task in load_tasks(task_file_for(seed, data_dir)):
        if task.objective.tie_break is not None:  # an older file: rank on f alone all the same
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
        out["distinct"].append(truth.distinct_values)
        out["optimum_is_t5"] += tuple(truth.thresholds["5"]) == tuple(truth.optimum_key)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()
    result = shares(args.seed, args.data_dir)
    print(f"seed {args.seed}: {result['tasks']} tasks, ranked on f alone")
    print("A   min     median  p90     max     over bound")
    for a in TOP_PERCENTS:
        q = np.percentile(result["shares"][a], [0, 50, 90, 100]) * 100
        print(f"{a:<3} " + " ".join(f"{v:6.2f}%" for v in q) + f"  {result['over_bound'][a]}")
    d = np.percentile(result["distinct"], [0, 50, 90, 100])
    print(f"distinct values of f: min {d[0]:.0f}, median {d[1]:.0f}, p90 {d[2]:.0f}, "
          f"max {d[3]:.0f}; tasks under {MIN_DISTINCT}: "
          f"{sum(v < MIN_DISTINCT for v in result['distinct'])}")  # fmt: skip
    several = sum(c > 1 for c in result["optimal_counts"])
    print(f"tasks with more than one optimal plan: {several} (max {max(result['optimal_counts'])})")
    print(f"tasks whose optimum equals the top-5 % threshold: {result['optimum_is_t5']}")


if __name__ == "__main__":
    main()
