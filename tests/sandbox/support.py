"""Helpers of the sandbox tests: run code and check that nothing of it is left behind."""

from __future__ import annotations

import os
from pathlib import Path

from travelgym.sandbox import SandboxLimits, boundary, run_code
from travelgym.sandbox.boundary import UID_BASE

FAST = SandboxLimits(wall_seconds=10, cpu_seconds=2)


def own_sandbox_uids() -> range:
    """The host user ids this test process gives its sandboxes (see ``boundary.uid_slot``)."""
    first = UID_BASE + (os.getpid() % (1 << 20)) * 64
    return range(first, first + 64)


def process_uid(pid: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def leftovers(pgid: int | None = None) -> list[int]:
    """Live processes of this test process's sandboxes (by user id, or by process group)."""
    uids, found = own_sandbox_uids(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if stat[0] in ("Z", "X"):
            continue
        if process_uid(entry) in uids or (pgid is not None and int(stat[2]) == pgid):
            found.append(int(entry))
    return found


def run(source: str, **kwargs):
    """``run_code`` with fast limits, asserting that the call left no process behind.

    Refuses to run without bubblewrap: some attacks (``kill(-1)`` as root) would hit the host.
    """
    assert boundary.current().kind == "bubblewrap", "these tests need the bubblewrap sandbox"
    result = run_code(source, **{"limits": FAST, **kwargs})
    assert leftovers(result.pid) == [], f"processes left behind: {leftovers(result.pid)}"
    return result
