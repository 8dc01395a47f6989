"""A build's worker processes never leave it waiting forever or outlive it: a worker that dies
stops the build with one line (CPython's pool deadlocked joining a worker blocked on sending
its result: `tasks behavior2trip` hung at 64/800 after one worker was killed, and ignored
SIGTERM), and workers die with the process that started them (killing the command left both
workers running for good, holding the slot store open)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    from travelgym.parallel import WorkerDied, result_of, worker_pool

    def big(_):
        time.sleep(0.5)
        return b"x" * (64 << 20)  # blocks on the result pipe once nobody reads it

    def die(_):
        os.kill(os.getpid(), signal.SIGKILL)

    def sleep(_):
        time.sleep(60)

    def stop(signum, frame):  # the command's handlers raise on SIGHUP too
        raise KeyboardInterrupt

    mode = sys.argv[1]
    if mode == "ctrl-c":
        signal.signal(signal.SIGHUP, stop)
        try:
            with worker_pool(2) as pool:
                pool.submit(sleep, 0)  # one worker busy, the other idle
                time.sleep(1.5)
                print(" ".join(str(p) for p in pool._processes), flush=True)
                time.sleep(60)
        except KeyboardInterrupt:
            print("stopped", flush=True)
            raise SystemExit(130)
    with worker_pool(2) as pool:
        if mode == "dies":
            futures = [pool.submit(big, 0), pool.submit(die, 0)]
            try:
                for f in futures:
                    result_of(f, pool)
            except WorkerDied as exc:
                print("stopped:", exc, flush=True)
                raise SystemExit(3)
        else:
            futures = [pool.submit(sleep, i) for i in range(2)]
            time.sleep(1.5)
            print(" ".join(str(p) for p in pool._processes), flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
    """
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_a_dead_worker_stops_the_build_with_one_line():
    done = subprocess.run([sys.executable, "-c", CHILD, "dies"], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "a worker process of the build died" in done.stdout


def test_workers_die_with_the_process_that_started_them():
    done = subprocess.run([sys.executable, "-c", CHILD, "orphans"], capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    pids = [int(p) for p in done.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids), pids


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGHUP], ids=["SIGINT", "SIGHUP"])
def test_ctrl_c_to_the_process_group_stops_the_build_without_a_worker_traceback(sig):
    """A terminal's Ctrl-C (or its closing) reaches every process of the group: each idle
    worker raised its own exception and printed a traceback under the command's one line."""
    process = subprocess.Popen([sys.executable, "-c", CHILD, "ctrl-c"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    pids = [int(p) for p in process.stdout.readline().split()]
    assert len(pids) == 2
    os.killpg(process.pid, sig)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stdout.strip() == "stopped" and "Traceback" not in stderr, stderr
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids), pids
