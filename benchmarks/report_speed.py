"""Time ``travelgym report`` on full runs: three scripted agents x 281 tasks.

Unless ``--runs DIR`` names existing run directories (one per agent inside DIR), the script
first produces them with the default benchmark run in a child process (untimed for the target):

    travelgym run compass --out TMP --data-dir DIR --no-progress

Then, ``--repeats`` times, it runs the report command in a fresh child process:

    travelgym report TMP/* --out report.html --data-dir DIR

and records the wall time (interpreter start-up and imports included), the child's CPU time and
peak RSS (``os.wait4``) and the HTML file's size. Once more it times the report without the
analysis tables and figures (``--no-analysis``), and once in this process to get the time of
each stage (``ReportResult.timings``).

    python benchmarks/report_speed.py [--runs DIR] [--data-dir DIR] [--repeats 3]
                                      [--target-s 30] [--json]

Prints a markdown report (``--json``: JSON). Exits 1 when the median report time is above
``--target-s`` seconds (30).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_S = 30.0


def _rss_mib(maxrss: int) -> float:
    """``ru_maxrss`` is KiB on Linux and bytes on macOS."""
    return maxrss / 2**20 if sys.platform == "darwin" else maxrss / 2**10


def child(cmd: list[str], log: Path) -> dict[str, float]:
    """Run ``cmd``; its wall time, CPU time and peak RSS. Raises when it fails."""
    start = time.perf_counter()
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} ... failed ({code}):\n{log.read_text()[-3000:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_rss_mib": _rss_mib(usage.ru_maxrss)}  # fmt: skip


def make_runs(out: Path, data_dir: Path | None, work: Path) -> float:
    cmd = [sys.executable, "-m", "travelgym.cli", "run", "compass", "--out", str(out),
           "--no-progress"]  # fmt: skip
    if data_dir is not None:
        cmd += ["--data-dir", str(data_dir)]
    return child(cmd, work / "run.log")["wall_s"]


def report_cmd(run_dirs: list[Path], out: Path, data_dir: Path | None, *extra: str) -> list[str]:
    cmd = [sys.executable, "-m", "travelgym.cli", "report", *map(str, run_dirs), "--out", str(out),
           *extra]  # fmt: skip
    if data_dir is not None:
        cmd += ["--data-dir", str(data_dir)]
    return cmd


def measure(run_dirs: list[Path], data_dir: Path | None, repeats: int, work: Path) -> dict:
    from travelgym.report.shell import write_report
    from travelgym.runner.store import read_episodes

    episodes = sum(len(read_episodes(d)) for d in run_dirs)
    html = work / "report.html"
    reports = []
    for k in range(repeats):
        html.unlink(missing_ok=True)
        result = child(report_cmd(run_dirs, html, data_dir), work / f"report{k}.log")
        result["html_mib"] = html.stat().st_size / 2**20
        reports.append(result)
    lean = work / "lean.html"
    no_analysis = child(report_cmd(run_dirs, lean, data_dir, "--no-analysis"), work / "lean.log")
    no_analysis["html_mib"] = lean.stat().st_size / 2**20
    in_process = write_report(run_dirs, work / "again.html", data_dir=data_dir)
    return {"episodes": episodes, "runs": len(run_dirs), "reports": reports,
            "no_analysis": no_analysis, "stages_s": in_process.timings,
            "verdicts": in_process.verdicts, "notes": in_process.notes}  # fmt: skip


def summarise(measured: dict[str, Any], run_s: float | None, target: float) -> dict[str, Any]:
    def stat(key: str) -> dict[str, float]:
        values = [r[key] for r in measured["reports"]]
        return {"median": round(statistics.median(values), 2), "min": round(min(values), 2),
                "max": round(max(values), 2)}  # fmt: skip

    summary = {
        "date": dt.date.today().isoformat(),
        "machine": f"{os.cpu_count()} cores, {platform.system()} {platform.machine()}, "
        f"Python {platform.python_version()}",
        "runs": measured["runs"],
        "episodes": measured["episodes"],
        "verdicts": measured["verdicts"],
        "repeats": len(measured["reports"]),
        "wall_s": stat("wall_s"),
        "cpu_s": stat("cpu_s"),
        "peak_rss_mib": stat("peak_rss_mib"),
        "html_mib": round(measured["reports"][0]["html_mib"], 2),
        "no_analysis_wall_s": round(measured["no_analysis"]["wall_s"], 2),
        "no_analysis_cpu_s": round(measured["no_analysis"]["cpu_s"], 2),
        "no_analysis_html_mib": round(measured["no_analysis"]["html_mib"], 2),
        "stages_s": measured["stages_s"],
        "notes": measured["notes"],
        "make_runs_s": round(run_s, 1) if run_s is not None else None,
        "target_s": target,
    }
    summary["ok"] = summary["wall_s"]["median"] <= target
    return summary


def markdown(s: dict[str, Any]) -> str:
    lines = [
        f"Report of {s['runs']} runs, {s['episodes']} episodes ({s['verdicts']} distinct plans "
        f"judged); {s['repeats']} repeats; {s['machine']}; {s['date']}.",
        "",
        "| measure | median | min | max |",
        "| --- | ---: | ---: | ---: |",
    ]
    for key, label in (("wall_s", "`travelgym report` wall time (s)"),
                       ("cpu_s", "CPU time, user + sys (s)"),
                       ("peak_rss_mib", "Peak RSS (MiB)")):  # fmt: skip
        v = s[key]
        lines.append(f"| {label} | {v['median']} | {v['min']} | {v['max']} |")
    lines += [
        f"| HTML size (MiB) | {s['html_mib']} | | |",
        f"| `--no-analysis` wall time (s) | {s['no_analysis_wall_s']} | | |",
        f"| `--no-analysis` CPU time (s) | {s['no_analysis_cpu_s']} | | |",
        f"| `--no-analysis` HTML size (MiB) | {s['no_analysis_html_mib']} | | |",
        "",
        "Stages (one in-process run): "
        + ", ".join(f"{k.removesuffix('_s')} {v:.2f} s" for k, v in s["stages_s"].items()),
    ]
    if s["make_runs_s"] is not None:
        lines.append(f"Producing the runs (`travelgym run compass`) took {s['make_runs_s']} s.")
    verdict = "within" if s["ok"] else "ABOVE"
    lines.append(f"Median {s['wall_s']['median']} s: {verdict} the {s['target_s']} s target.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, default=None,
                        help="directory holding one run directory per agent (default: make them)")  # fmt: skip
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--target-s", type=float, default=TARGET_S)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="report-speed-") as tmp:
        work = Path(tmp)
        run_s = None
        root = args.runs
        if root is None:
            root = work / "runs"
            run_s = make_runs(root, args.data_dir, work)
        run_dirs = sorted(p for p in root.iterdir() if (p / "episodes.jsonl").exists())
        if not run_dirs:
            parser.error(f"no run directories in {root}")
        summary = summarise(measure(run_dirs, args.data_dir, args.repeats, work), run_s,
                            args.target_s)  # fmt: skip
    print(json.dumps(summary, indent=2) if args.json else markdown(summary))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
