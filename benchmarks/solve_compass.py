"""Time ``travelgym solve compass --task ID`` on a fresh data directory, this checkout against a
reference revision in the same run.

On a fresh data directory the command builds the COMPASS database and then the ground truth:
before issue 31 of every task (the whole file), now only of the task asked for (kept in the
partial file, see ``travelgym.suites.compass.ground_truth``). Each repeat runs the command once
on each side, alternating, each time in a new empty ``--data-dir``, in a child process:

    travelgym solve compass --task ID --data-dir FRESH --json

and records the child's wall time and CPU time (user + system). The report gives the medians,
their ratio (this / reference) and checks that both sides print the same ground truth (exit 1
otherwise, or when this side's median wall time is over ``--target-s``).

    python benchmarks/solve_compass.py [--task compass-004] [--repeats 3] [--reference REV]
                                       [--db-seed N] [--target-s 10] [--json]

``--db-seed N`` (N > 0) solves on another seed's database, whose tasks are generated: before,
all 281 of them first; now only the one asked for (``task_sets.TaskSet``). The option is
passed as ``--seed``, the name every revision knows.

``--reference`` is a git revision (default :data:`reference.BEFORE_ISSUE_31`, the commit before
issue 31's speed work), exported by ``benchmarks/reference.py``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import BEFORE_ISSUE_31, env_for, reference_src  # noqa: E402

TARGET_S = 10.0


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def solve_fresh(task: str, workdir: Path, src: Path | None,
                db_seed: int = 0) -> tuple[list[Any], float, float]:  # fmt: skip
    """``solve compass --task`` in a child on an empty data directory under ``workdir`` (code
    from ``src``, this checkout's when None); its JSON output, wall time and CPU time."""
    data_dir = workdir / "data"
    cmd = [sys.executable, "-m", "travelgym.cli", "solve", "compass", "--task", task,
           "--data-dir", str(data_dir), "--json", "--seed", str(db_seed)]  # fmt: skip
    cpu = _children_cpu_s()
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env_for(src))
    wall = time.perf_counter() - start
    cpu = _children_cpu_s() - cpu
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"solve failed with exit status {done.returncode}")
    return json.loads(done.stdout), wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="compass-004")
    parser.add_argument("--repeats", type=int, default=3, help="alternating runs per side")
    parser.add_argument("--reference", default=BEFORE_ISSUE_31, help="the 'before' revision")
    parser.add_argument("--target-s", type=float, default=TARGET_S)
    parser.add_argument("--db-seed", type=int, default=0, help="the database seed")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    args = parser.parse_args()
    ref_src = reference_src(args.reference)
    runs: dict[str, dict[str, list[float]]] = {s: {"wall_s": [], "cpu_s": []}
                                               for s in ("reference", "this")}  # fmt: skip
    outputs: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="travelgym-solve-compass-") as tmp:
        for i in range(args.repeats):
            for side, src in (("reference", ref_src), ("this", None)):
                out, wall, cpu = solve_fresh(args.task, Path(tmp) / f"{side}-{i}", src,
                                             args.db_seed)  # fmt: skip
                runs[side]["wall_s"].append(round(wall, 2))
                runs[side]["cpu_s"].append(round(cpu, 2))
                outputs.setdefault(side, out)
    medians = {side: {k: round(statistics.median(v), 2) for k, v in got.items()}
               for side, got in runs.items()}  # fmt: skip
    ratios = {
        k: round(medians["this"][k] / medians["reference"][k], 3) for k in ("wall_s", "cpu_s")
    }
    same = outputs["this"] == outputs["reference"]
    within = medians["this"]["wall_s"] <= args.target_s
    result = {
        "command": f"travelgym solve compass --task {args.task} --data-dir FRESH --json "
        f"--seed {args.db_seed}",
        "date": dt.date.today().isoformat(),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "load_average": [round(x, 2) for x in os.getloadavg()],
        },  # fmt: skip
        "reference": args.reference,
        "repeats": args.repeats,
        "runs": runs,
        "medians": medians,
        "ratio_this_over_reference": ratios,
        "identical_output": same,
        "target_s": args.target_s,
        "within_target": within,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{result['command']}, {args.repeats} alternating runs each (medians):")
        print("| | reference | this | ratio |")
        print("| --- | ---: | ---: | ---: |")
        for k in ("wall_s", "cpu_s"):
            print(f"| {k} | {medians['reference'][k]:.2f} | {medians['this'][k]:.2f} "
                  f"| {ratios[k]:.3f} |")  # fmt: skip
        print(f"identical output: {same}; this side within {args.target_s:g} s: {within}")
    return 0 if same and within else 1


if __name__ == "__main__":
    sys.exit(main())
