"""Time the default benchmark run: ``travelgym run compass`` with no agent or user options.

That is the three scripted baselines (greedy, sampled, exhaustive) with the template user on all
281 tasks, one trial each. The script builds the database and the ground truth first (untimed),
then runs the command in a child process into a fresh temporary ``--out``:

    travelgym run compass --out TMP --data-dir DIR --json

(``--json`` only changes the output: the score summaries come back as JSON, and it turns the
progress bar off). It reports the child's wall time in all, each agent's episode time (the
runner's ``episodes_wall_s``), episodes per second, how the episodes ended, and the
FR / OR-5 / OR-10 / OR-20 / optimal table by agent and level.

    python benchmarks/default_run.py [--data-dir DIR] [--target-s 180] [--json]

With ``--reference SRC`` (the ``src`` directory of another checkout, e.g. the release before a
refactor) the same command also runs on that code, alternating with this one ``--repeats``
times in the same session; the report gives both medians, their ratio (this / reference), and
checks that both produce identical score summaries.

Checks (exit 1 when any fails): every agent has 281 scored episodes; the exhaustive baseline
has FR = OR-5 = 100 (the optimum is reachable through the tools); the greedy baseline is feasible
far more often than it is near-optimal (FR - OR-5 >= 20 points); the whole run takes at most
``--target-s`` seconds (180).
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_S = 180.0
TASKS = 281
GREEDY_GAP_POINTS = 20.0
AGENTS = ("scripted:greedy", "scripted:sampled", "scripted:exhaustive")


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "travelgym.cli", *args]


def prepare(data_dir: Path) -> None:
    """Build the database and the ground truth (not timed)."""
    for command in (("build", "compass"), ("solve", "compass")):
        subprocess.run(cli(*command, "--data-dir", str(data_dir)), check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip


def terminations(run_dir: Path) -> dict[str, int]:
    counts: collections.Counter[str] = collections.Counter()
    from travelgym.runner.store import read_run

    for episode in read_run(run_dir, as_dicts=True).episodes:
        counts[episode["termination"]] += 1
    return dict(sorted(counts.items()))


def run_default(
    data_dir: Path, out: Path, source: Path | None = None
) -> tuple[dict[str, Any], float]:
    """Run the default command in a child process (on the code in ``source``, default: this
    checkout's); return its JSON summaries and wall time."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = str(source)
    start = time.perf_counter()
    done = subprocess.run(cli("run", "compass", "--out", str(out), "--data-dir", str(data_dir),
                              "--json"), capture_output=True, text=True, env=env)  # fmt: skip
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"travelgym run compass failed with exit status {done.returncode}")
    return json.loads(done.stdout), wall


def checks(summaries: dict[str, Any], total_s: float, target_s: float) -> list[dict[str, Any]]:
    out = []

    def check(name: str, ok: bool, detail: str) -> None:
        out.append({"check": name, "ok": bool(ok), "detail": detail})

    for agent in AGENTS:
        n = summaries.get(agent, {}).get("overall", {}).get("n", 0)
        check(f"{agent} scored every task", n == TASKS, f"n = {n} (expected {TASKS})")
    ex = summaries["scripted:exhaustive"]["overall"]
    check("exhaustive FR = OR-5 = 100", ex["FR"] == 100.0 and ex["OR5"] == 100.0,
          f"FR {ex['FR']}, OR-5 {ex['OR5']}")  # fmt: skip
    gr = summaries["scripted:greedy"]["overall"]
    gap = gr["FR"] - gr["OR5"]
    check(f"greedy OR-5 < FR by >= {GREEDY_GAP_POINTS:g} points", gap >= GREEDY_GAP_POINTS,
          f"FR {gr['FR']}, OR-5 {gr['OR5']}, gap {gap:.2f} points")  # fmt: skip
    check(f"total wall time <= {target_s:g} s", total_s <= target_s, f"{total_s:.1f} s")
    return out


def machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
    }


def report(result: dict[str, Any]) -> str:
    lines = [
        f"Default run: {result['episodes']} episodes ({len(AGENTS)} agents x {TASKS} tasks), "
        f"template user; machine: {result['machine']['cpus']} CPUs, "
        f"Python {result['machine']['python']}, SQLite {result['machine']['sqlite']}.",
        "",
        "| agent | episodes | episode time (s) | episodes/s | ended: accepted / turn limit / error |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for agent, a in result["agents"].items():
        t = a["terminations"]
        lines.append(
            f"| {agent} | {a['episodes']} | {a['episodes_wall_s']:.1f} | {a['episodes_per_s']:.1f}"
            f" | {t.get('accepted', 0)} / {t.get('turn_limit', 0)} / {t.get('error', 0)} |"
        )
    lines.append(
        f"| **whole command** | {result['episodes']} | {result['total_wall_s']:.1f} |"
        f" {result['episodes_per_s']:.1f} | |"
    )
    lines += [
        "",
        "| agent | tasks | n | FR | OR-5 | OR-10 | OR-20 | optimal |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for agent, a in result["agents"].items():
        rows = [("all", a["scores"]["overall"])]
        rows += [(f"Level {k}", v) for k, v in a["scores"]["by_level"].items()]
        for name, agg in rows:
            lines.append(
                f"| {agent} | {name} | {agg['n']} | {agg['FR']:.1f} | {agg['OR5']:.1f} |"
                f" {agg['OR10']:.1f} | {agg['OR20']:.1f} | {agg['optimal']:.1f} |"
            )
    lines.append("")
    for c in result["checks"]:
        lines.append(f"- {'PASS' if c['ok'] else 'FAIL'}: {c['check']} ({c['detail']})")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="Reuse this data directory (default: a temporary one).")  # fmt: skip
    parser.add_argument("--target-s", type=float, default=TARGET_S)
    parser.add_argument("--json", action="store_true", help="Print a JSON summary instead.")
    parser.add_argument("--reference", type=Path, default=None,
                        help="src directory of another checkout to time against.")  # fmt: skip
    parser.add_argument("--repeats", type=int, default=3, help="Alternating runs per side.")
    args = parser.parse_args()
    if args.reference is not None:
        return compare(args)
    with tempfile.TemporaryDirectory(prefix="travelgym-default-run-") as tmp:
        data_dir = args.data_dir or Path(tmp) / "data"
        prepare(data_dir)
        out = Path(tmp) / "runs"
        summaries, total = run_default(data_dir, out)
        agents = {}
        for agent in AGENTS:
            summary = summaries[agent]
            wall = summary["episodes_wall_s"]
            n = summary["overall"]["n"]
            agents[agent] = {
                "episodes": n,
                "episodes_wall_s": wall,
                "episodes_per_s": round(n / wall, 2) if wall else None,
                "terminations": terminations(out / agent.replace(":", "-")),
                "scores": {k: summary[k] for k in ("overall", "by_level", "by_objective")},
            }
    episodes = sum(a["episodes"] for a in agents.values())
    result = {
        "command": "travelgym run compass --out TMP --data-dir DIR --json",
        "date": dt.date.today().isoformat(),
        "machine": machine(),
        "episodes": episodes,
        "total_wall_s": round(total, 2),
        "episodes_per_s": round(episodes / total, 2),
        "agents": agents,
        "target_s": args.target_s,
        "checks": checks(summaries, total, args.target_s),
    }
    print(json.dumps(result, indent=2) if args.json else report(result))
    return 0 if all(c["ok"] for c in result["checks"]) else 1


def _scores(summaries: dict[str, Any]) -> dict[str, Any]:
    return {a: {k: v for k, v in r.items() if k != "episodes_wall_s"} for a, r in summaries.items()}


def compare(args: argparse.Namespace) -> int:
    """Alternate the default run on this code and on ``--reference``; print medians and ratio."""
    import statistics

    walls: dict[str, list[float]] = {"this": [], "reference": []}
    scores: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="travelgym-default-run-") as tmp:
        data_dir = args.data_dir or Path(tmp) / "data"
        prepare(data_dir)
        for i in range(args.repeats):
            for side, source in (("reference", args.reference), ("this", None)):
                summaries, wall = run_default(data_dir, Path(tmp) / f"{side}-{i}", source)
                walls[side].append(wall)
                scores.setdefault(side, _scores(summaries))
    this, ref = statistics.median(walls["this"]), statistics.median(walls["reference"])
    same = scores["this"] == scores["reference"]
    result = {"this_s": walls["this"], "reference_s": walls["reference"],
              "median_this_s": round(this, 2), "median_reference_s": round(ref, 2),
              "ratio": round(this / ref, 3), "identical_scores": same}  # fmt: skip
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"default run, {args.repeats} alternating runs each: this {this:.1f} s (median), "
              f"reference {ref:.1f} s, ratio {this / ref:.3f}; identical scores: {same}")  # fmt: skip
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
