"""Limits that hold against code that attacks them (issue 34): the channel, the wall clock,
memory held outside the address space, and the bytes a run stores."""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest

from tests.sandbox.support import run
from travelgym.agents.code_exec import run_python_call
from travelgym.sandbox import SandboxError, SandboxLimits, ToolBridge, Workspace
from travelgym.sandbox.storage import StoreBudget, cut_text, json_size
from travelgym.suites.compass.env import CompassToolSession
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


def test_calls_pipelined_in_bursts_are_not_answered_past_the_wall_clock(compass_db):
    # variant: 30 bursts of 10 calls, 5 ms apart, so that calls keep arriving while earlier
    # ones are answered (each read holds a few frames, not the whole batch)
    source = _CHANNEL + (
        "import time\nfor _ in range(30):\n    os.write(fd, frame * 10)\n    time.sleep(0.005)\n"
        "time.sleep(60)\n"
    )
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


def _size(value) -> int:
    """Bytes as stored: a cut value is its text (JSON escapes aside)."""
    return len(value.encode()) if isinstance(value, str) else json_size(value)


def _stored_bytes(calls) -> int:
    return sum(_size(c.arguments) + _size(c.result) for c in calls)


def _run_python(compass_db, code: str, limits: SandboxLimits):
    env = CompassToolSession(CompassContext.from_path(compass_db).conn)
    arguments = json.dumps({"code": code})
    content = asyncio.run(run_python_call(env, "call_1", "run_python", arguments, limits,
                                          Workspace()))  # fmt: skip
    return env, json.loads(content)


_BUDGET = SandboxLimits(20, 10, result_bytes=64 << 10, stored_bytes=1 << 20)


@pytest.mark.parametrize(
    "code",
    [
        # the attack: a short loop writing large notes (stored as each call's arguments)
        "from tools import notebook\nfor i in range(200):\n    notebook('write', 'x' * 100_000)",
        # variant: small calls whose results are large (the whole notebook, again and again)
        "from tools import notebook\nfor i in range(20):\n    notebook('write', 'y' * 10_000)\n"
        "for i in range(100):\n    notebook('list_all')",
    ],
    ids=["arguments", "results"],
)
def test_tool_calls_from_code_store_a_bounded_number_of_bytes(compass_db, code):
    env, _ = _run_python(compass_db, code, _BUDGET)
    assert len(env.calls) > 100  # the container and the calls its code made
    assert _stored_bytes(env.calls) < _BUDGET.stored_bytes + (64 << 10)  # before: 20 MB
    cut = [c for c in env.calls if "...[cut: " in json.dumps([c.arguments, c.result])]
    assert cut and all(_size(c.arguments) <= _BUDGET.result_bytes for c in env.calls)


@pytest.mark.parametrize("stream", ["stdout", "stderr"])  # stderr: the variant
def test_an_output_flood_is_stored_cut_with_a_marker(compass_db, stream):
    code = (
        f"import sys\nchunk = 'z' * (1 << 20)\nfor _ in range(50):\n    sys.{stream}.write(chunk)"
    )
    env, payload = _run_python(compass_db, code, _BUDGET)
    (container,) = env.calls
    stored = container.result[stream]
    assert payload[stream] == stored and len(stored.encode()) <= _BUDGET.result_bytes
    cut = re.findall(r"\.\.\.\[cut: (\d+) bytes\]", stored)
    assert cut and int(cut[-1]) >= (50 << 20) - _BUDGET.output_chars


def test_cut_text_keeps_whole_characters_within_the_limit():
    text = "é" * 1000
    kept = cut_text(text, 100)
    assert len(kept.encode()) <= 100 and kept.endswith(
        f"...[cut: {2000 - 2 * kept.count('é')} bytes]"
    )
    assert cut_text(text, 2000) == text


def test_a_value_json_cannot_hold_is_stored_as_a_marker():
    nested: list = []
    for _ in range(5000):  # deeper than json.dumps recurses
        nested = [nested]
    store = StoreBudget(1 << 10, 4 << 10)
    assert store.value(nested) == '"<a value JSON cannot hold>"'
    assert store.value({"a": 1}) == {"a": 1}
    for _ in range(4):  # a KiB each, at most
        store.value("x" * (8 << 10))
    assert store.value("y" * 100) == "...[cut: 102 bytes]"  # the episode's budget is spent
