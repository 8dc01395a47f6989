"""The GRPO smoke run, this checkout against a reference revision in the same session: ``travelgym
train grpo --model tiny --max-steps N`` for COMPASS and Behavior2Trip (the commands of
``docs/training/grpo.md``'s quick start), each in a fresh child process and output directory,
alternating this code and the reference ``--repeats`` times. Reports each side's median wall and
CPU seconds (the child and its workers, ``os.wait4``) and the ratio this / reference.

    python benchmarks/grpo_smoke.py --reference REV [--suites compass,behavior2trip]
        [--steps 3] [--repeats 1] [--data-dir DIR] [--json]

Needs the train extra. The data (databases, instances, ground truth) is built first, untimed,
in ``--data-dir`` (a temporary directory by default). Not a test: timings depend on the machine
(figures in docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import env_for, reference_src, timed_child  # noqa: E402

ARGS = {"compass": ["--limit", "2"], "behavior2trip": ["--difficulty", "easy", "--limit", "4"]}


def command(suite: str, steps: int, out: Path, data_dir: Path) -> list[str]:
    return [sys.executable, "-m", "travelgym.cli", "train", "grpo", "--suite", suite, "--model",
            "tiny", "--max-steps", str(steps), "--output-dir", str(out), "--data-dir",
            str(data_dir), *ARGS[suite]]  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", required=True, help="a git revision to compare with")
    parser.add_argument("--suites", default="compass,behavior2trip")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    suites = [s for s in args.suites.split(",") if s]
    unknown = [s for s in suites if s not in ARGS]
    if unknown or args.steps < 1 or args.repeats < 1:
        parser.error(f"--suites: choose from {', '.join(ARGS)}; --steps, --repeats >= 1")
    sides = {"this": None, "reference": reference_src(args.reference)}
    work = Path(tempfile.mkdtemp(prefix="grpo-smoke-"))
    data_dir = args.data_dir or work / "data"
    result: dict = {"reference": args.reference, "steps": args.steps, "repeats": args.repeats,
                    "suites": {}}  # fmt: skip
    for suite in suites:
        # one untimed run builds the data (and the tiny model's tokenizer files) first
        timed_child(command(suite, 1, work / f"warm-{suite}", data_dir), env_for(None),
                    work / f"warm-{suite}.log")  # fmt: skip
        runs: dict[str, list[dict]] = {side: [] for side in sides}
        for i in range(args.repeats):
            for side, src in sides.items():
                out = work / f"{suite}-{side}-{i}"
                runs[side].append(timed_child(command(suite, args.steps, out, data_dir),
                                              env_for(src), work / f"{out.name}.log"))  # fmt: skip
        medians = {side: {k: statistics.median(r[k] for r in rs) for k in ("wall_s", "cpu_s")}
                   for side, rs in runs.items()}  # fmt: skip
        result["suites"][suite] = {
            **{f"{side}_{k}": round(v, 2) for side, m in medians.items() for k, v in m.items()},
            "wall_ratio": round(medians["this"]["wall_s"] / medians["reference"]["wall_s"], 3),
            "cpu_ratio": round(medians["this"]["cpu_s"] / medians["reference"]["cpu_s"], 3),
        }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for suite, row in result["suites"].items():
            print(f"{suite}: {row['this_wall_s']} s against {row['reference_wall_s']} s wall "
                  f"(ratio {row['wall_ratio']}), CPU ratio {row['cpu_ratio']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
