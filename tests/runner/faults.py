"""A reusable fault-injection harness for run directories.

- :class:`FaultyDisk`: stands in for ``os.write`` in :mod:`travelgym.runner.durable` (short writes,
  a disk that fills up: a short write then ``ENOSPC``, any errno on the n-th write);
- :func:`tmpfs_available` / :func:`run_in_tmpfs`: a real, tiny tmpfs in a private mount namespace;
- :func:`kill_and_resume`: ``SIGKILL`` a real ``travelgym run`` subprocess at seeded random points,
  resume, repeat, and count kill points, torn lines, duplicates and lost episodes.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import travelgym.runner.durable as durable
from travelgym.runner.episode_file import TORN
from travelgym.runner.store import EPISODES, QUARANTINE, read_run

# ------------------------------------------------------------------ a fault-injecting writer


class FaultyDisk:
    """``os.write`` with faults. ``chunk``: at most this many bytes stored per call (short
    writes); ``capacity``: bytes that fit before the disk is full (the write that crosses it is
    short, the next fails with ``ENOSPC``); ``fail_on``: ``{call number: errno}`` (1-based)."""

    def __init__(self, chunk: int | None = None, capacity: int | None = None,
                 fail_on: dict[int, int] | None = None, delay_s: float = 0.0) -> None:  # fmt: skip
        self.chunk, self.capacity, self.fail_on = chunk, capacity, dict(fail_on or {})
        self.delay_s = delay_s  # a slow disk: this long per call
        self.calls = self.stored = self.short_writes = self.refused = 0
        self._real = os.write

    def free(self, nbytes: int | None = None) -> None:
        """Make room: ``nbytes`` more (``None``: no limit any more)."""
        self.capacity = None if nbytes is None else self.stored + nbytes

    def __call__(self, fd: int, data) -> int:
        self.calls += 1
        if self.calls in self.fail_on:
            code = self.fail_on[self.calls]
            self.refused += 1
            raise OSError(code, os.strerror(code))
        size = len(data)
        if self.chunk is not None:
            size = min(size, self.chunk)
        if self.capacity is not None:
            room = self.capacity - self.stored
            if room <= 0:
                self.refused += 1
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            size = min(size, room)
        if self.delay_s:
            time.sleep(self.delay_s)
        written = self._real(fd, bytes(data[:size]))
        self.short_writes += written < len(data)
        self.stored += written
        return written


@contextlib.contextmanager
def injected(disk: FaultyDisk):
    """Route the run store's writes through ``disk`` for the block."""
    original = durable.os_write
    durable.os_write = disk
    try:
        yield disk
    finally:
        durable.os_write = original


# ------------------------------------------------------------------ a real tiny filesystem


def tmpfs_available() -> bool:
    """Whether this machine lets us mount a tmpfs in a private mount namespace (root on Linux)."""
    if sys.platform != "linux" or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                           capture_output=True, timeout=30)  # fmt: skip
    return probe.returncode == 0


def run_in_tmpfs(mountpoint: Path, size: str, script: str, timeout: float = 180):
    """Run the bash ``script`` with a fresh tmpfs of ``size`` (``mount`` syntax, e.g. ``1m``)
    mounted on ``mountpoint``; the mount (and what is on it) vanishes when the script ends."""
    Path(mountpoint).mkdir(parents=True, exist_ok=True)
    wrapped = f"set -u\nmount -t tmpfs -o size={size} tmpfs {mountpoint}\n{script}"
    return subprocess.run(["unshare", "-m", "bash", "-c", wrapped], capture_output=True,
                          text=True, timeout=timeout, env=child_env())  # fmt: skip


# ------------------------------------------------------------------ kill and resume


def cli_command(*args: str, slow_disk: bool = False, gate: Path | None = None) -> list[str]:
    """``python -m travelgym.cli ARGS`` running this checkout's code (``slow_disk``: the same
    CLI writing through :mod:`tests.runner.slow_disk_cli`, so a kill can land mid-write;
    ``gate``: through :mod:`tests.runner.gated_cli`, pausing after each saved episode until the
    file ``gate`` exists)."""
    if gate is not None:
        return [sys.executable, "-m", "tests.runner.gated_cli", str(gate), *args]
    module = "tests.runner.slow_disk_cli" if slow_disk else "travelgym.cli"
    return [sys.executable, "-m", module, *args]


def child_env() -> dict[str, str]:
    """The environment of a child ``travelgym``: this checkout's code and its tests package."""
    src = Path(durable.__file__).resolve().parents[2]
    paths = [str(src), str(src.parent), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def normalise(episode: dict) -> dict:
    """An episode without its wall-clock fields (the only legitimate differences between runs)."""
    episode = json.loads(json.dumps(episode))
    episode.pop("duration_s", None)
    for unit in episode.get("turns") or episode.get("steps") or []:
        unit.pop("duration_s", None)
        for call in unit.get("tool_calls", []):
            call.pop("duration_ms", None)
    return episode


def raw_episodes(path: Path) -> list[dict]:
    """Every newline-terminated line of ``path`` as JSON (no strictness: for counting)."""
    data = path.read_bytes() if path.exists() else b""
    return [json.loads(x) for x in data[: data.rfind(b"\n") + 1].splitlines() if x.strip()]


@dataclass
class KillFigures:
    """What a kill-and-resume chain did and found."""

    kill_points: int = 0  # processes SIGKILLed
    idle_kills: int = 0  # of which before the session saved an episode
    torn_lines: int = 0  # kills that left a torn last line
    quarantined: int = 0  # lines in the quarantine files at the end
    chains: int = 0  # run directories brought to completion
    duplicates: int = 0
    lost: int = 0
    mismatched: int = 0  # final episodes that differ from the uninterrupted run's
    wall_s: float = 0.0
    problems: list[str] = field(default_factory=list)


class _Tail:
    """Counts the lines of a growing file, reading only what was added; ``partial``: a line is
    being written (bytes after the last newline)."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset, self.lines, self.partial = path, 0, 0, False

    def poll(self) -> int:
        try:
            with open(self.path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size < self.offset:  # cut back (a torn line quarantined): count again
                    self.offset = self.lines = 0
                fh.seek(self.offset)
                chunk = fh.read()
        except FileNotFoundError:
            return 0
        self.offset += len(chunk)
        self.lines += chunk.count(b"\n")
        if chunk:
            self.partial = not chunk.endswith(b"\n")
        return self.lines


def _kill_once(args: list[str], episodes: Path, rng: random.Random, when: str,
               deadline_s: float) -> tuple[bool, int]:  # fmt: skip
    """Start ``args`` and SIGKILL it: ``when`` is ``start`` (a random moment of its start),
    ``write`` (while it writes a line, after 0-2 more episodes) or ``any`` (a random moment
    after 1-3 more episodes). ``(killed, exit code)``."""
    tail = _Tail(episodes)
    want = tail.poll() + rng.randint(0 if when == "write" else 1, 3)
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=child_env())  # fmt: skip
    deadline = time.monotonic() + deadline_s
    if when == "start":
        time.sleep(rng.uniform(0.0, 1.0))
    else:
        while proc.poll() is None and time.monotonic() < deadline:
            if tail.poll() >= want and (when == "any" or tail.partial):
                break
            time.sleep(0.001 if when == "write" else 0.005)
        time.sleep(rng.uniform(0.0, 0.002 if when == "write" else 0.12))
    killed = proc.poll() is None
    if killed:
        os.kill(proc.pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=60)
    if not killed and proc.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed: {err.decode(errors='replace')[-2000:]}")
    return killed, proc.returncode


def kill_and_resume(chain: Callable[[int], tuple[list[str], Path]], kills: int,
                    reference: list[dict], rng: random.Random,
                    deadline_s: float = 120) -> KillFigures:  # fmt: skip
    """SIGKILL real runs ``kills`` times in all (seeded random points: a quarter while the
    process starts, a quarter while it writes a line, the rest anywhere), resuming after each. ``chain(n)`` gives the n-th chain's command (a
    fresh ``--out``) and the run directory it writes; a chain ends when a session finishes by
    itself or the kills are spent, then is resumed to completion and compared with
    ``reference`` (the uninterrupted run's episodes)."""
    figures, started = KillFigures(), time.monotonic()
    want = {(e["task_id"], e["trial"]): normalise(e) for e in reference}
    while figures.kill_points < kills:
        figures.chains += 1
        command, out = chain(figures.chains)
        episodes = out / EPISODES
        finished, first, last_torn = False, True, b""
        while not finished and figures.kill_points < kills:
            saved = len(raw_episodes(episodes))
            when = rng.choice(("start", "write", "any", "any"))
            args = command + ([] if first else ["--resume"])
            killed, _ = _kill_once(args, episodes, rng, when, deadline_s)
            first = False
            if not killed:
                finished = True
                continue
            figures.kill_points += 1
            figures.idle_kills += len(raw_episodes(episodes)) == saved
            data = episodes.read_bytes() if episodes.exists() else b""
            torn = data[data.rfind(b"\n") + 1 :]
            figures.torn_lines += bool(torn) and torn != last_torn
            last_torn = torn
            try:  # every saved episode stays readable at every kill point
                read_run(out)
            except Exception as exc:  # noqa: BLE001 - recorded as a problem of the property
                figures.problems.append(f"after kill {figures.kill_points}: {exc}")
        if not finished:
            final = subprocess.run(command + ["--resume"], capture_output=True, text=True,
                                   env=child_env(), timeout=deadline_s)  # fmt: skip
            if final.returncode != 0:
                figures.problems.append(f"final resume failed: {final.stderr[-2000:]}")
        _compare(out, want, figures)
    figures.wall_s = round(time.monotonic() - started, 1)
    return figures


def _compare(out: Path, want: dict[tuple[str, int], dict], figures: KillFigures) -> None:
    got = raw_episodes(out / EPISODES)
    keys = [(e["task_id"], e["trial"]) for e in got]
    figures.duplicates += len(keys) - len(set(keys))
    figures.lost += len(set(want) - set(keys))
    by_key = {(e["task_id"], e["trial"]): normalise(e) for e in got}
    figures.mismatched += sum(by_key.get(k) != v for k, v in want.items() if k in by_key)
    quarantine = out / QUARANTINE
    records = (
        [json.loads(x) for x in quarantine.read_text().splitlines()] if quarantine.exists() else []
    )
    figures.quarantined += len(records)
    figures.problems += [f"quarantined for another reason: {r['reason']}" for r in records
                         if r["reason"] != TORN]  # fmt: skip
