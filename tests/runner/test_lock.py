"""One writer per run directory: a second run into the same directory is refused at once, naming
the directory and the holder's pid, and the first run's results stay intact."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

import pytest

from tests.runner.faults import child_env, cli_command, normalise, raw_episodes
from travelgym.runner.batch import RunConfig, run_suite
from travelgym.runner.lock import LOCK, RunLock
from travelgym.runner.store import EPISODES, MANIFEST, RunDirError, RunStore

TASKS = 24


@pytest.mark.slow
def test_two_concurrent_runs_into_one_directory(tmp_path, compass_db):
    data_dir = str(compass_db.parent.parent)
    reference = tmp_path / "reference"
    asyncio.run(run_suite(RunConfig("compass", "scripted:sampled", out=reference,
                                      limit=TASKS, data_dir=compass_db.parent.parent,
                                      progress=False)))  # fmt: skip
    out = tmp_path / "shared"
    args = ("run", "compass", "--agent", "scripted:sampled", "--limit", str(TASKS),
            "--no-progress", "--data-dir", data_dir, "--out", str(out))  # fmt: skip
    command = cli_command(*args)
    episodes = out / "scripted-sampled" / EPISODES
    release = tmp_path / "release"  # the first run pauses after each episode until it exists
    first = subprocess.Popen(cli_command(*args, gate=release), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=child_env())  # fmt: skip
    deadline = time.monotonic() + 120
    while first.poll() is None and not episodes.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    # the second run, as a user resuming "the" run would start it while the first still runs
    second = subprocess.run(command + ["--resume"], capture_output=True, text=True,
                            env=child_env(), timeout=120)  # fmt: skip
    assert first.poll() is None, "the first run ended before the second one started"
    release.touch()
    assert second.returncode == 1
    lines = second.stderr.strip().splitlines()
    assert lines == [f"Error: {out / 'scripted-sampled'} is in use by another run "
                     f"(pid {first.pid}); wait for it to finish or choose another --out"]  # fmt: skip
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    got = raw_episodes(episodes)
    keys = [(e["task_id"], e["trial"]) for e in got]
    assert len(keys) == len(set(keys)) == TASKS  # nothing written twice
    want = raw_episodes(reference / EPISODES)
    assert sorted(map(normalise, got), key=lambda e: e["task_id"]) == sorted(
        map(normalise, want), key=lambda e: e["task_id"]
    )


def test_the_lock_is_exclusive_within_a_process_and_released_on_close(tmp_path):
    manifest = {"suite": "compass", "agent": "scripted:greedy", "trials": 1, "task_ids": []}
    holder = RunStore(tmp_path)
    holder.open(manifest, resume=False)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(RunDirError, match=rf"in use by another run \(pid {os.getpid()}\)"):
        RunStore(tmp_path).open(manifest, resume=True)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # refused untouched
    holder.close()
    with RunStore(tmp_path) as again:  # released: the next run may continue it
        assert again.open(manifest, resume=True) == set()
    assert json.loads((tmp_path / MANIFEST).read_text())["agent"] == "scripted:greedy"
    assert (tmp_path / LOCK).exists()


def test_the_lock_is_released_when_opening_fails(tmp_path):
    RunStore(tmp_path).open({"suite": "compass", "agent": "a"}, resume=False)
    with pytest.raises(RunDirError, match="different run"):
        RunStore(tmp_path).open({"suite": "compass", "agent": "b"}, resume=True)
    lock = RunLock(tmp_path)
    lock.acquire()  # not left held by the refused open
    assert lock.held
    lock.release()
    lock.release()  # idempotent


def test_a_killed_holder_leaves_no_stale_lock(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from travelgym.runner.lock import RunLock; "
        f"lock = RunLock({str(tmp_path)!r}); lock.acquire(); print('held', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, env=child_env(), text=True)  # fmt: skip
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(RunDirError, match=rf"\(pid {holder.pid}\)"):
        RunLock(tmp_path).acquire()
    holder.kill()  # SIGKILL: the kernel drops its lock
    holder.wait(timeout=30)
    with RunLock(tmp_path) as lock:
        assert lock.held
