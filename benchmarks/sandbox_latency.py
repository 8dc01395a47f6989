"""Latency of a ``run_python`` call before and after the operating-system sandbox, same run.

"Before" is the sandbox of an earlier commit (default ``2719a54``: a ``python -I`` child with an
audit hook that opened the database itself), extracted with ``git archive`` into a temporary
directory and driven by a worker process; "after" is the bubblewrap sandbox of this checkout
(tools by message through the parent). Both workers take turns, batch by batch, so they see the
same machine state. Two cases: a trivial call (``print(1)``) and one that makes 10 tool calls
(``get_weekday`` x5, ``search_location_name`` x3, ``search_airports`` x2).

    python benchmarks/sandbox_latency.py [--rounds 10] [--batch 5] [--before REV] [--json]
    python benchmarks/sandbox_latency.py --reference REV  # before: REV's bubblewrap sandbox

``--reference REV`` compares with a revision that already has the bubblewrap sandbox (driven by
the same worker as this checkout), e.g. the commit before a change to the sandbox's limits.

Prints a markdown table of median and p95 in ms (with ``--json``, the JSON first). Exits 1 when
the trivial call's median after the change is over 50 ms (the aim of issue 14), 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AIM_TRIVIAL_MEDIAN_MS = 50.0
TRIVIAL = "print(1)"
TEN_CALLS = textwrap.dedent("""
    import tools
    for day in range(1, 6):
        tools.get_weekday(date_str=f"2025-08-0{day}")
    for query in ("Zion", "yosemity", "Grand Canyon"):
        tools.search_location_name(query=query)
    for park in ("Zion", "Arches"):
        tools.search_airports(park_name=park)
    print("done")
""")

OLD_WORKER = """
import json, sys, time
from travelgym.sandbox import ToolsSpec, run_code
spec = ToolsSpec(suite="compass", db_path=sys.argv[1])
for line in sys.stdin:
    case, source = json.loads(line)
    start = time.perf_counter()
    result = run_code(source, tools_spec=spec if case == "ten_calls" else None)
    elapsed = time.perf_counter() - start
    print(json.dumps([elapsed * 1000, result.ok]), flush=True)
"""

NEW_WORKER = """
import json, sys, time
from travelgym.suites.compass.env import CompassToolSession
from travelgym.db import connect_readonly
from travelgym.sandbox import run_code
env = CompassToolSession(connect_readonly(sys.argv[1]))
for line in sys.stdin:
    case, source = json.loads(line)
    start = time.perf_counter()
    bridge = env.tool_bridge("bench") if case == "ten_calls" else None
    result = run_code(source, tools=bridge)
    elapsed = time.perf_counter() - start
    print(json.dumps([elapsed * 1000, result.ok]), flush=True)
"""


class Worker:
    """A process that runs one sandbox call per request and answers with its latency."""

    def __init__(self, script: str, pythonpath: Path, db: Path) -> None:
        env = {"PYTHONPATH": str(pythonpath), "PATH": "/usr/bin:/bin"}
        self.proc = subprocess.Popen([sys.executable, "-c", script, str(db)], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip

    def time(self, case: str, source: str) -> float:
        self.proc.stdin.write(json.dumps([case, source]) + "\n")
        self.proc.stdin.flush()
        elapsed, ok = json.loads(self.proc.stdout.readline())
        if not ok:
            raise RuntimeError(f"{case} failed in the sandbox")
        return elapsed

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--batch", type=int, default=5)
    parser.add_argument("--before", default="2719a54", help="git revision of the old sandbox")
    parser.add_argument("--reference", default=None,
                        help="git revision with the bubblewrap sandbox to compare with instead")  # fmt: skip
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT / "src"))
    from travelgym.suites.compass.build import ensure_database

    db = ensure_database(seed=0, data_dir=args.data_dir).path
    with tempfile.TemporaryDirectory() as old_tree:
        before = args.reference or args.before
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", before, "src"],
                                 check=True, capture_output=True).stdout  # fmt: skip
        subprocess.run(["tar", "-x", "-C", old_tree], input=archive, check=True)
        old_script = NEW_WORKER if args.reference else OLD_WORKER
        workers = {"before": Worker(old_script, Path(old_tree) / "src", db),
                   "after": Worker(NEW_WORKER, ROOT / "src", db)}  # fmt: skip
        cases = {"trivial": TRIVIAL, "ten_calls": TEN_CALLS}
        times = {(w, c): [] for w in workers for c in cases}
        try:
            for worker in workers.values():  # warm-up: caches, the sandbox probe
                for case, source in cases.items():
                    worker.time(case, source)
            for _ in range(args.rounds):
                for name, worker in workers.items():
                    for case, source in cases.items():
                        times[(name, case)] += [
                            worker.time(case, source) for _ in range(args.batch)
                        ]
        finally:
            for worker in workers.values():
                worker.close()
    summary = {f"{w}/{c}": {"median_ms": round(statistics.median(v), 1), "p95_ms": round(_p95(v), 1),
                            "n": len(v)} for (w, c), v in times.items()}  # fmt: skip
    for case in cases:
        summary[f"ratio/{case}"] = round(
            summary[f"after/{case}"]["median_ms"] / summary[f"before/{case}"]["median_ms"], 2
        )
    if args.json:
        print(json.dumps(summary, indent=2))
    print("| call | before median | before p95 | after median | after p95 | after / before |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for case in cases:
        b, a = summary[f"before/{case}"], summary[f"after/{case}"]
        print(f"| {case} | {b['median_ms']} ms | {b['p95_ms']} ms | {a['median_ms']} ms | "
              f"{a['p95_ms']} ms | {summary[f'ratio/{case}']} |")  # fmt: skip
    return 0 if summary["after/trivial"]["median_ms"] <= AIM_TRIVIAL_MEDIAN_MS else 1


if __name__ == "__main__":
    sys.exit(main())
