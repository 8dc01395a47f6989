"""What the task generator's acceptance rules do to the objectives: the metric shares of the
single-metric tasks against the intended weights (``taskgen.METRICS``, the paper's Fig. 13), the
wish-list sizes of the feature-count tasks against theirs (``FEATURE_COUNTS``, Fig. 14), and
every rejected draw counted by reason.

    python benchmarks/task_metrics.py [--db-seed 0] [--data-dir DIR]

Regenerates the seed's task set (about a minute) with the rejection counter on; the tasks are
the ones ``travelgym generate-tasks`` writes, byte for byte.
"""

from __future__ import annotations

import argparse
import collections
import time
from pathlib import Path

from travelgym.db import connect_readonly
from travelgym.suites.compass.build import ensure_database
from travelgym.suites.compass.taskgen import FEATURE_COUNTS, METRICS, SLOTS, generate_tasks


def metric_shares(db_seed: int, data_dir: Path | None) -> dict:
    """Per metric (Level I; Levels II-III) and per wish-list size: intended weight and
    generated count; the rejections by reason; the generation time."""
    conn = connect_readonly(ensure_database(seed=db_seed, data_dir=data_dir).path)
    rejected: collections.Counter = collections.Counter()
    start = time.perf_counter()
    tasks = generate_tasks(conn, rejected=rejected)
    seconds = time.perf_counter() - start
    counts = collections.Counter(
        (min(t.level, 2), t.objective.metric) for t in tasks if t.objective.type == "single_metric"
    )
    table = {}
    for table_level, (metrics, weights) in METRICS.items():
        slots = sum(n for (lv, kind), n in SLOTS.items()
                    if kind == "single_metric" and min(lv, 2) == table_level)  # fmt: skip
        table[table_level] = [(m, w, slots, counts[(table_level, m)])
                              for m, w in zip(metrics, weights, strict=True)]  # fmt: skip
    sizes = collections.Counter(
        len(t.objective.features) for t in tasks if t.objective.type == "feature_count"
    )
    slots = sum(n for (_, kind), n in SLOTS.items() if kind == "feature_count")
    table["sizes"] = [
        (size, w, slots, sizes[size]) for size, w in zip(*FEATURE_COUNTS, strict=True)
    ]
    return {"table": table, "rejected": rejected, "seconds": seconds, "tasks": len(tasks)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db-seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()
    result = metric_shares(args.db_seed, args.data_dir)
    print(f"db seed {args.db_seed}: {result['tasks']} tasks in {result['seconds']:.1f} s")
    for level, rows in result["table"].items():
        title = {1: "Level I metric", 2: "Levels II-III metric", "sizes": "wish-list size"}
        print(f"{title[level]}, intended, generated")
        for metric, weight, slots, count in rows:
            print(f"  {metric!s:<16} {100 * weight:5.1f} % ({weight * slots:5.1f})  "
                  f"{100 * count / slots:5.1f} % ({count})")  # fmt: skip
    draws = sum(n for reason, n in result["rejected"].items() if "replaced" not in reason)
    print(f"candidates drawn: {draws + result['tasks']}, rejected: {draws}")
    for reason, count in sorted(result["rejected"].items(), key=lambda kv: -kv[1]):
        print(f"  {count:6d}  {reason}")


if __name__ == "__main__":
    main()
