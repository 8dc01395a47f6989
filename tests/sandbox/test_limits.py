"""Limits that hold against code that attacks them (issue 34): the channel, the wall clock,
memory held outside the address space, and the bytes a run stores."""

from __future__ import annotations

import time

from tests.sandbox.support import run
from travelgym.sandbox import SandboxError, SandboxLimits, ToolBridge
from travelgym.suites.compass.tools import CompassContext, compass_registry

# the code's end of the channel, and a call frame written on it without waiting for the reply
_CHANNEL = (
    "import os, struct, sys\n"
    "fd = int(sys.argv[1])\n"
    'body = b\'{"name": "get_weekday", "args": ["2025-08-01"], "kwargs": {}}\'\n'
    "frame = struct.pack('>cI', b'C', len(body)) + body\n"
)


def test_code_that_exits_with_replies_queued_gets_a_result():
    source = _CHANNEL + "os.write(fd, frame * 20000)\nos._exit(0)\n"
    result = run(source)  # raised BrokenPipeError before
    assert result.error is None and "replies unsent" in result.stderr


def test_code_that_shuts_its_channel_mid_run_gets_a_result():
    # variant: the code stays alive, with its end of the channel shut while calls are answered
    source = _CHANNEL + (
        "import socket, time\n"
        "os.write(fd, frame * 20000)\n"
        "end = socket.socket(fileno=fd)\nend.shutdown(socket.SHUT_RD)\n"
        "time.sleep(0.5)\nprint('still here')\n"
    )
    result = run(source, audit=False)  # the audit hook refuses socket objects: the OS layer alone
    assert result.stdout == "still here\n" and "replies unsent" in result.stderr


class _SlowBridge(ToolBridge):
    """COMPASS tools that take 20 ms a call (a slow database, or a heavy query)."""

    def handle(self, request: bytes, max_calls: int) -> bytes:
        time.sleep(0.02)
        return super().handle(request, max_calls)


def _slow_bridge(compass_db) -> _SlowBridge:
    context = CompassContext.from_path(compass_db)
    return _SlowBridge(compass_registry(), context)


def test_pipelined_calls_are_not_answered_past_the_wall_clock(compass_db):
    # 300 calls sent at once, before the deadline: answered one by one they would take 6 s
    source = _CHANNEL + "os.write(fd, frame * 300)\nimport time\ntime.sleep(60)\n"
    bridge = _slow_bridge(compass_db)
    start = time.monotonic()
    result = run(source, tools=bridge, limits=SandboxLimits(1.5, 2))
    assert time.monotonic() - start < 1.5 + 1.0
    assert result.error == SandboxError.TIMEOUT and bridge.calls < 100


def test_calls_through_the_tools_module_stop_at_the_wall_clock(compass_db):
    # variant: ordinary blocking calls in a loop, each answered before the next is sent
    source = "from tools import get_weekday\nwhile True:\n    get_weekday('2025-08-01')\n"
    bridge = _slow_bridge(compass_db)
    start = time.monotonic()
    result = run(source, tools=bridge, limits=SandboxLimits(1.0, 2, tool_calls=10_000))
    assert time.monotonic() - start < 1.0 + 1.0
    assert result.error == SandboxError.TIMEOUT


# 300 MiB in memfd pages under a 128 MiB limit: each file stays under RLIMIT_FSIZE, and the
# pages are unmapped, so RLIMIT_AS does not count them; were the fix to fail, the host would
# hold 320 MiB for a moment (safe)
_MEMFD = """import os
total, chunk, held = 0, b"x" * (1 << 20), []
try:
    while total < 300 << 20:
        fd = os.memfd_create("m")
        held.append(fd)
        for _ in range(32):
            os.write(fd, chunk)
            total += 1 << 20
except OSError as exc:
    print("refused", exc.errno)
print(total >> 20)
"""
_SMALL_MEMORY = SandboxLimits(10, 5, memory_bytes=128 << 20)


def test_memfd_pages_cannot_outgrow_the_memory_limit():
    result = run(_MEMFD, limits=_SMALL_MEMORY, audit=False)  # the OS layer alone
    assert result.stdout.split() == ["refused", "1", "0"], result


def test_system_v_shared_memory_is_refused():
    # variant: a System V segment (kept after shmdt) through ctypes, not in the list
    source = (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "print(libc.shmget(0, 300 << 20, 0o1000 | 0o600), ctypes.get_errno())\n"
    )
    result = run(source, limits=_SMALL_MEMORY, audit=False)
    assert result.stdout.split() == ["-1", "1"], result


def test_posix_shared_memory_has_nowhere_to_live():
    source = (
        "from multiprocessing import shared_memory\n"
        "try:\n    shared_memory.SharedMemory(create=True, size=300 << 20)\n"
        "except OSError as exc:\n    print(exc.errno)\n"
    )
    result = run(source, limits=_SMALL_MEMORY, audit=False)
    assert result.stdout.strip() in ("30", "13"), result  # read-only /dev/shm (or no access)
