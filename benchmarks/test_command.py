"""Benchmark the README's test command (``pytest``) and the fast subset (``pytest -m "not slow"``).

Each measured command runs in a child process from the repository root (wall time; CPU time,
user + sys, of the child and every process it waited for, via ``os.wait4``; the pytest summary
counts; the slowest tests from ``--durations``). The test data cache (``$TRAVELGYM_TEST_CACHE``,
see ``tests/conftest.py``) is either a fresh temporary directory, so the first command includes
the one-time data build (``--cache cold``), or the given directory, first filled by an untimed
``pytest tests/data_cache_probe.py tests/suites/behavior2trip/test_cli_trips.py`` run
(``--cache warm``, the default: what a developer's second ``pytest`` costs).

    python benchmarks/test_command.py [--which full,fast] [--cache warm|cold] [--cache-dir DIR]
                                      [--python PY] [--nice N] [--out FILE.json]

'before' for the full command is the recorded 1 h 33 min (5,580 s wall, about 45 CPU-minutes:
``pip install -e '.[test,inspect,datasets,gym,ray]' && pytest`` on a fresh venv with 2 cores,
issue 31), which rebuilt the Behavior2Trip data in every session; the script prints the ratio
against it. Targets: full command <= 20 min wall, fast subset <= 5 min (2 idle cores); exits 1
when a measured command is over its target, 2 when pytest fails.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BEFORE_FULL_S = 93 * 60  # issue 31: 1 h 33 min, 3 failed / 1445 passed / 38 skipped
TARGETS_S = {"full": 20 * 60, "fast": 5 * 60}
COMMANDS = {"full": ["-q"], "fast": ["-q", "-m", "not slow"]}
WARM_UP = ["tests/data_cache_probe.py", "tests/suites/behavior2trip/test_cli_trips.py"]


def run_pytest(python: str, args: list[str], env: dict[str, str], log: Path,
               nice: int = 0) -> dict[str, Any]:  # fmt: skip
    """``python -m pytest ARGS --durations=25`` in a child; its wall and CPU time, counts."""
    cmd = [python, "-m", "pytest", *args, "--durations=25", "-p", "no:cacheprovider"]
    if nice:
        cmd = ["nice", "-n", str(nice), *cmd]
    with log.open("wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    text = log.read_text(errors="replace")
    return {
        "command": " ".join(cmd),
        "exit_code": os.waitstatus_to_exitcode(status),
        "wall_s": round(wall, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "peak_rss_mib": round(usage.ru_maxrss / 2**10, 1),
        "counts": summary_counts(text),
        "slowest": slowest(text),
        "log": str(log),
    }


def summary_counts(text: str) -> dict[str, int]:
    """``{"passed": N, "failed": N, ...}`` from pytest's last summary line."""
    lines = [x for x in text.splitlines() if re.search(r"\d+ (passed|failed|error)", x)]
    if not lines:
        return {}
    return {k: int(n) for n, k in re.findall(r"(\d+) (\w+)", lines[-1])}


def slowest(text: str, n: int = 10) -> list[str]:
    """The first ``n`` lines of pytest's ``slowest durations`` table."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "slowest" in line and "durations" in line:
            return [x.strip() for x in lines[i + 1 : i + 1 + n] if re.match(r"\s*\d", x)]
    return []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--which", default="fast,full", help="comma list of: fast, full")
    parser.add_argument("--cache", choices=("warm", "cold"), default="warm")
    parser.add_argument("--cache-dir", type=Path, help="test data cache (default: a temp dir)")
    parser.add_argument("--python", default=sys.executable, help="the venv's python")
    parser.add_argument("--nice", type=int, default=0, help="run pytest under nice -n N")
    parser.add_argument("--out", type=Path, help="also write the JSON summary here")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="test-command-"))
    cache = args.cache_dir or work / "cache"
    env = {**os.environ, "TRAVELGYM_TEST_CACHE": str(cache)}
    env.pop("CI", None)  # the README's command on a developer machine
    results: dict[str, Any] = {
        "machine": f"{os.cpu_count()} cores, {platform.system()} {platform.machine()}, "
        f"Python {platform.python_version()}",
        "load_average_start": os.getloadavg(),
        "cache": args.cache,
        "before_full_s": BEFORE_FULL_S,
    }
    if args.cache == "warm":
        warm = run_pytest(args.python, ["-q", *WARM_UP], env, work / "warm-up.log", args.nice)
        results["warm_up"] = warm
    status = 0
    for which in [x.strip() for x in args.which.split(",") if x.strip()]:
        res = run_pytest(args.python, COMMANDS[which], env, work / f"{which}.log", args.nice)
        res["target_s"] = TARGETS_S[which]
        if which == "full":
            res["ratio_to_before"] = round(res["wall_s"] / BEFORE_FULL_S, 3)
        results[which] = res
        if res["exit_code"] != 0:
            status = 2
        elif res["wall_s"] > TARGETS_S[which] and status == 0:
            status = 1
    results["load_average_end"] = os.getloadavg()
    text = json.dumps(results, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    print("\n| command | cache | wall (s) | CPU (s) | counts | target (s) |")
    print("| --- | --- | ---: | ---: | --- | ---: |")
    for which in COMMANDS:
        if which in results:
            r = results[which]
            counts = ", ".join(f"{v} {k}" for k, v in r["counts"].items())
            print(f"| `{' '.join(COMMANDS[which])}` | {args.cache} | {r['wall_s']} | "
                  f"{r['cpu_s']} | {counts} | {r['target_s']} |")  # fmt: skip
    return status


if __name__ == "__main__":
    sys.exit(main())
