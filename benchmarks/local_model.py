"""Honest scores of the real offline model: SmolLM2-135M-Instruct (Q4_1) behind llama.cpp.

Three runs, each a ``travelgym run`` child process on a fresh ``--out`` (needs the local extra):

1. COMPASS, ``--agent local:smollm2 --user template`` on the first ``--compass`` tasks;
2. COMPASS, ``--agent scripted:exhaustive --user local:smollm2`` (the LLM user backend, with an
   agent that can succeed) on the first ``--user-tasks`` tasks;
3. Behavior2Trip, ``--agent local:smollm2`` (the B2T action format) on ``--trips`` test
   instances (Easy/Medium/Hard interleaved).

It prints the score tables and, per run, how episodes ended, the model's tool calls and how
many of them failed, agent errors, tokens and generation speed.

    python benchmarks/local_model.py [--compass 6] [--user-tasks 3] [--trips 6] [--json]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def run(args: list[str], out: Path, data_dir: str | None) -> tuple[dict, float]:
    cmd = [sys.executable, "-m", "travelgym.cli", "run", *args, "--out", str(out), "--json",
           "--concurrency", "1"]  # fmt: skip
    if data_dir:
        cmd += ["--data-dir", data_dir]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout), wall


def episode_facts(run_dir: Path) -> dict[str, Any]:
    ends: collections.Counter[str] = collections.Counter()
    calls = failed = agent_errors = prompt = completion = 0
    gen_s = 0.0
    from travelgym.runner.store import read_run

    for ep in read_run(run_dir, as_dicts=True).episodes:
        ends[ep["termination"]] += 1
        prompt += ep["usage"]["prompt_tokens"]
        completion += ep["usage"]["completion_tokens"]
        units = ep.get("turns") or ep.get("steps") or []
        for unit in units:
            for call in unit.get("tool_calls", []):
                calls += 1
                failed += not call["ok"]
            agent_errors += bool(unit.get("error")) or len(unit.get("invalid_actions", []))
            gen_s += unit.get("duration_s", 0.0) if unit.get("role", "agent") == "agent" else 0.0
    return {"terminations": dict(ends), "tool_calls": calls, "failed_tool_calls": failed,
            "agent_errors": agent_errors, "prompt_tokens": prompt,
            "completion_tokens": completion}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--compass", type=int, default=6)
    parser.add_argument("--user-tasks", type=int, default=3)
    parser.add_argument("--trips", type=int, default=6)
    parser.add_argument("--max-turns", type=int, default=8)
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--data-dir", default=os.environ.get("TRAVELGYM_DATA_DIR"))
    parser.add_argument("--json", action="store_true")
    ns = parser.parse_args()
    turns = ["--max-turns", str(ns.max_turns)]
    plans = {
        "compass: local:smollm2 agent, template user": (
            ["compass", "--agent", "local:smollm2", "--user", "template", "--limit",
             str(ns.compass), *turns], "local-smollm2"),
        "compass: scripted:exhaustive agent, local:smollm2 user": (
            ["compass", "--agent", "scripted:exhaustive", "--user", "local:smollm2", "--limit",
             str(ns.user_tasks), *turns], "scripted-exhaustive"),
        "behavior2trip: local:smollm2 (B2T format)": (
            ["behavior2trip", "--agent", "local:smollm2", "--limit", str(ns.trips),
             "--max-steps", str(ns.max_steps)], "local-smollm2"),
    }  # fmt: skip
    report: dict[str, Any] = {"python": platform.python_version(), "cpus": os.cpu_count(),
                              "runs": {}}  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, (args, subdir)) in enumerate(plans.items()):
            out = Path(tmp) / str(i)
            summary, wall = run(args, out, ns.data_dir)
            (agent_summary,) = summary.values()
            facts = episode_facts(out / subdir)
            facts["tokens_per_s"] = round(facts["completion_tokens"] / wall, 1)
            report["runs"][name] = {"wall_s": round(wall, 1), "summary": agent_summary, **facts}
    if ns.json:
        print(json.dumps(report, indent=2))
        return
    for name, r in report["runs"].items():
        print(f"== {name} ({r['wall_s']} s)")
        print(json.dumps({k: v for k, v in r.items() if k != "wall_s"}, indent=1)[:4000])


if __name__ == "__main__":
    main()
