"""A run killed with SIGKILL part-way, several times, then resumed equals an uninterrupted run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

from travelgym.runner.batch import RunConfig, run_compass
from travelgym.runner.specs import parse_agent_spec
from travelgym.runner.store import EPISODES

TASKS = 30
AGENT = "scripted:sampled"


def _normalise(line: str) -> dict:
    """An episode without wall-clock fields (the only legitimate differences between runs)."""
    episode = json.loads(line)
    episode.pop("duration_s")
    for turn in episode["turns"]:
        turn.pop("duration_s")
        for call in turn["tool_calls"]:
            call.pop("duration_ms")
    return episode


def _lines(path) -> list[str]:
    return [x for x in path.read_text().splitlines() if x.strip()] if path.exists() else []


def test_sigkill_then_resume_matches_uninterrupted(tmp_path, compass_db):
    data_dir = compass_db.parent.parent
    reference = tmp_path / "reference"
    asyncio.run(run_compass(RunConfig(agent=parse_agent_spec(AGENT), out=reference, limit=TASKS,
                                      data_dir=data_dir, progress=False)))  # fmt: skip
    out = tmp_path / "killed"
    episodes = out / "scripted-sampled" / EPISODES
    command = [
        sys.executable,
        "-m",
        "travelgym.cli",
        "run",
        "compass",
        "--agent",
        AGENT,
        "--limit",
        str(TASKS),
        "--out",
        str(out),
        "--no-progress",
        "--data-dir",
        str(data_dir),
    ]
    killed_mid_run = 0
    for round_number, threshold in enumerate((4, 11, 19)):
        args = command + (["--resume"] if round_number else [])
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while (
            proc.poll() is None
            and len(_lines(episodes)) < threshold
            and time.monotonic() < deadline
        ):
            time.sleep(0.01)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            killed_mid_run += 1
        proc.wait(timeout=30)
    assert killed_mid_run >= 2, "the runs finished before they could be killed"
    assert len(_lines(episodes)) < TASKS
    final = subprocess.run(command + ["--resume"], capture_output=True, text=True, timeout=300)
    assert final.returncode == 0, final.stderr
    got = [_normalise(x) for x in _lines(episodes)]
    want = [_normalise(x) for x in _lines(reference / EPISODES)]
    keys = [(e["task_id"], e["trial"]) for e in got]
    assert len(keys) == len(set(keys)) == TASKS  # no duplicate, no missing episode
    assert sorted(got, key=lambda e: e["task_id"]) == sorted(want, key=lambda e: e["task_id"])


def test_resume_refuses_a_different_run(tmp_path, compass_db):
    from click.testing import CliRunner

    from travelgym.cli import main

    data_dir = str(compass_db.parent.parent)
    runner = CliRunner()
    base = ["run", "compass", "--agent", "scripted:greedy", "--out", str(tmp_path), "--no-progress",
            "--data-dir", data_dir]  # fmt: skip
    assert runner.invoke(main, base + ["--limit", "2"]).exit_code == 0
    again = runner.invoke(main, base + ["--limit", "2"])
    assert again.exit_code == 1 and "--resume" in again.output
    other = runner.invoke(main, base + ["--limit", "3", "--resume"])
    assert other.exit_code == 1 and "different run" in other.output
    bad = runner.invoke(main, ["run", "compass", "--agent", "wizard:x", "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "scripted:greedy" in bad.output
