"""What re-deriving a run costs ``travelgym score`` (issue 34): for each run directory, the CPU
of the suite's scoring of its answers and, in the same process, of
:func:`travelgym.runner.recheck.recheck_run` (every episode's answer from its turns, its score
from that answer), with the counts and disagreements it found.

    python benchmarks/score_recheck.py RUN_DIR... [--repeats 3] [--data-dir DIR] [--json]

Make the runs first, e.g. ``travelgym run compass --out runs`` (the three scripted baselines on
all 281 tasks), then pass ``runs/*``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any


def measure(run_dir: Path, repeats: int, data_dir: Path | None) -> dict[str, Any]:
    """Median CPU seconds of scoring and of re-deriving ``run_dir`` over ``repeats``."""
    from travelgym.core.registry import get_suite
    from travelgym.runner.recheck import recheck_run
    from travelgym.runner.run_summary import score_answers
    from travelgym.runner.store import read_manifest

    suite = get_suite(read_manifest(run_dir)["suite"])
    options = suite.options()
    score_answers(suite, run_dir, 0, data_dir, [], options)  # warm: data built, imports done
    scored, rechecked, check = [], [], None
    for _ in range(repeats):
        start = time.process_time()
        score_answers(suite, run_dir, 0, data_dir, [], options)
        scored.append(time.process_time() - start)
        start = time.process_time()
        check = recheck_run(suite, run_dir, 0, data_dir, options)
        rechecked.append(time.process_time() - start)
    assert check is not None
    score_s, recheck_s = statistics.median(scored), statistics.median(rechecked)
    return {"run": str(run_dir), "score_cpu_s": round(score_s, 3),
            "recheck_cpu_s": round(recheck_s, 3), "ratio": round(recheck_s / score_s, 3),
            "answers_rederived": check.answers_rederived,
            "scores_rederived": check.scores_rederived, "disagreements": len(check.problems)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [measure(run, args.repeats, args.data_dir) for run in args.runs]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        print(f"{row['run']}: score {row['score_cpu_s']} s CPU, re-derivation "
              f"{row['recheck_cpu_s']} s ({row['ratio']:.2f} of it); {row['answers_rederived']} "
              f"answers and {row['scores_rederived']} scores re-derived, "
              f"{row['disagreements']} disagreements")  # fmt: skip


if __name__ == "__main__":
    main()
