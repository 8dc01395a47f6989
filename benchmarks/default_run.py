"""Time the default benchmark run: ``travelgym run compass`` with no agent or user options.

That is the three scripted baselines (greedy, sampled, exhaustive) with the template user on all
281 tasks, one trial each. The script builds the database and the ground truth first (untimed),
then runs the command in a child process into a fresh temporary ``--out``:

    travelgym run compass --out TMP --data-dir DIR --json

(``--json`` only changes the output: the score summaries come back as JSON, and it turns the
progress bar off). It reports the child's wall time in all, each agent's episode time (the
runner's ``episodes_wall_s``), episodes per second, how the episodes ended, and the
FR / OR-5 / OR-10 / OR-20 / optimal table by agent and level.

    python benchmarks/default_run.py [--data-dir DIR] [--target-s 60] [--json]

With ``--reference REF`` the same command also runs on other code, alternating with this one
``--repeats`` times in the same session: REF is ``before`` (the commit before issue 31's speed
work, ``reference.BEFORE_ISSUE_31``), any git revision (exported by ``benchmarks/reference.py``)
or the ``src`` directory of another checkout. The report gives both sides' medians (wall time,
the child's CPU time, each agent's episode time), their ratio (this / reference), and checks
that both produce identical score summaries (exit 1 otherwise):

    python benchmarks/default_run.py --reference before --repeats 3 [--data-dir DIR] [--json]

Checks (exit 1 when any fails): every agent has 281 scored episodes; the exhaustive baseline
has FR = OR-5 = 100 (the optimum is reachable through the tools); the greedy baseline is feasible
far more often than it is near-optimal (FR - OR-5 >= 20 points); the whole run takes at most
``--target-s`` seconds (60, issue 31's target on 2 idle cores).
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import json
import os
import platform
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import BEFORE_ISSUE_31, env_for, reference_src  # noqa: E402

TARGET_S = 60.0
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


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_default(
    data_dir: Path, out: Path, source: Path | None = None
) -> tuple[dict[str, Any], float, float]:
    """Run the default command in a child process (on the code in ``source``, default: this
    checkout's); return its JSON summaries, wall time and CPU time (user + system)."""
    env = env_for(source)
    cpu = _children_cpu_s()
    start = time.perf_counter()
    done = subprocess.run(cli("run", "compass", "--out", str(out), "--data-dir", str(data_dir),
                              "--json"), capture_output=True, text=True, env=env)  # fmt: skip
    wall = time.perf_counter() - start
    cpu = _children_cpu_s() - cpu
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"travelgym run compass failed with exit status {done.returncode}")
    return json.loads(done.stdout), wall, cpu


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
        f"Whole command: {result['total_wall_s']:.1f} s wall clock, {result['total_cpu_s']:.1f} s "
        "CPU (user + system).",
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
    parser.add_argument("--reference", default=None, metavar="REF",
                        help="time against REF too: 'before' (the commit before issue 31), a git "
                             "revision, or another checkout's src directory")  # fmt: skip
    parser.add_argument("--repeats", type=int, default=3, help="Alternating runs per side.")
    args = parser.parse_args()
    if args.reference is not None:
        return compare(args)
    with tempfile.TemporaryDirectory(prefix="travelgym-default-run-") as tmp:
        data_dir = args.data_dir or Path(tmp) / "data"
        prepare(data_dir)
        out = Path(tmp) / "runs"
        summaries, total, cpu = run_default(data_dir, out)
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
        "total_cpu_s": round(cpu, 2),
        "episodes_per_s": round(episodes / total, 2),
        "agents": agents,
        "target_s": args.target_s,
        "checks": checks(summaries, total, args.target_s),
    }
    print(json.dumps(result, indent=2) if args.json else report(result))
    return 0 if all(c["ok"] for c in result["checks"]) else 1


def _scores(summaries: dict[str, Any]) -> dict[str, Any]:
    return {a: {k: v for k, v in r.items() if k != "episodes_wall_s"} for a, r in summaries.items()}


def _same_scores(this: dict[str, Any], ref: dict[str, Any]) -> tuple[bool, list[str]]:
    """Whether both sides scored every agent alike, on the figures both summaries carry (code
    after issue 32 adds outcome and usage counts a reference may lack); the differing keys."""
    differing = [f"{agent}.{k}" for agent in this.keys() | ref.keys()
                 for k in this.get(agent, {}).keys() & ref.get(agent, {}).keys()
                 if this[agent][k] != ref[agent][k]]  # fmt: skip
    shared = all(this[a].keys() & ref[a].keys() for a in this.keys() & ref.keys())
    return this.keys() == ref.keys() and shared and not differing, sorted(differing)


def reference_source(ref: str) -> Path:
    """The ``src`` directory REF names: ``before``, a git revision, or a directory."""
    if ref == "before":
        return reference_src(BEFORE_ISSUE_31)
    if Path(ref).is_dir():
        return Path(ref).resolve()
    return reference_src(ref)


def compare(args: argparse.Namespace) -> int:
    """Alternate the default run on this code and on ``--reference``; print medians and ratios."""
    import statistics

    source = reference_source(args.reference)
    sides: dict[str, dict[str, list[float]]] = {}
    scores: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="travelgym-default-run-") as tmp:
        data_dir = args.data_dir or Path(tmp) / "data"
        prepare(data_dir)
        for i in range(args.repeats):
            for side, src in (("reference", source), ("this", None)):
                summaries, wall, cpu = run_default(data_dir, Path(tmp) / f"{side}-{i}", src)
                got = sides.setdefault(side, collections.defaultdict(list))
                got["wall_s"].append(round(wall, 2))
                got["cpu_s"].append(round(cpu, 2))
                for agent in AGENTS:
                    got[agent].append(summaries[agent]["episodes_wall_s"])
                scores.setdefault(side, _scores(summaries))
    medians = {side: {k: round(statistics.median(v), 2) for k, v in got.items()}
               for side, got in sides.items()}  # fmt: skip
    ratios = {k: round(medians["this"][k] / medians["reference"][k], 3) for k in medians["this"]}
    same, differing = _same_scores(scores["this"], scores["reference"])
    result = {"reference": args.reference, "reference_src": str(source), "repeats": args.repeats,
              "date": dt.date.today().isoformat(), "machine": machine(),
              "runs": {side: dict(got) for side, got in sides.items()}, "medians": medians,
              "ratio_this_over_reference": ratios, "identical_scores": same,
              "differing": differing}  # fmt: skip
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"default run, {args.repeats} alternating runs each (medians; reference "
              f"{args.reference}):")  # fmt: skip
        print("| | reference | this | ratio |")
        print("| --- | ---: | ---: | ---: |")
        for k in medians["this"]:
            print(f"| {k} | {medians['reference'][k]:.1f} | {medians['this'][k]:.1f} "
                  f"| {ratios[k]:.3f} |")  # fmt: skip
        print(f"identical scores: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
