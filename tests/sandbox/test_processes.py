"""Process creation by every route Python offers, each actually attempted from inside the sandbox.

Every route runs twice, with the audit hook and without it (``audit=False``). With the hook, the
ordinary route is refused (the refusal is reported). Without it, the route really starts
processes and the boundary alone contains them: they stay in the sandbox's PID namespace (its
``/proc`` shows its own processes only, never a planted host process), they never outnumber
``limits.processes`` (counted inside, through ``/proc``, after every start, and outside, by a
host thread counting the sandbox user's processes for the whole call), and they are gone when
the call ends: the next call in the same workspace, with the tool bridge, sees only itself and
its tool call works.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tests.sandbox.support import leftovers, own_sandbox_uids, process_uid, run
from travelgym.sandbox import SandboxLimits, ToolBridge, Workspace
from travelgym.suites.compass.tools import CompassContext, compass_registry

LAYERS = pytest.mark.parametrize("audit", [True, False], ids=["with-hook", "boundary-only"])
LIMITS = SandboxLimits(wall_seconds=15, cpu_seconds=6, processes=8)
ATTEMPTS = 2 * LIMITS.processes  # every looping route tries to start twice the limit
MARKER = f"travelgym-host-marker-{os.getpid()}"

_PRELUDE = r'''
import json, os, sys, time
MARKER, ATTEMPTS = __MARKER__, __ATTEMPTS__
SLEEPER = [sys.executable, '-c', 'import time; time.sleep(60)']
COUNTER = [sys.executable, '-c', "import os; print('inner', len([p for p in os.listdir('/proc') if p.isdigit()]))"]
open('before-attack.txt', 'w').write('kept')
state = {'started': 0, 'max_seen': 0, 'host_seen': [], 'errors': [], 'refused': [], 'notes': [],
         'pid1': open('/proc/1/cmdline', 'rb').read().decode('latin-1')}


def snap():
    pids = [p for p in os.listdir('/proc') if p.isdigit()]
    state['max_seen'] = max(state['max_seen'], len(pids))
    for pid in pids:
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as fh:
                if MARKER.encode() in fh.read():
                    state['host_seen'].append(pid)
        except OSError:
            pass


def failed(exc):
    name = type(exc).__name__
    (state['refused'] if name in ('SandboxViolation', 'RefusedImport') else state['errors']).append(
        f'{name}: {str(exc)[:120]}')


def attempt(start, times=ATTEMPTS):
    """Call ``start`` up to ``times`` times, counting successes, stopping at the first failure."""
    for _ in range(times):
        try:
            start()
        except BaseException as exc:
            failed(exc)
            break
        state['started'] += 1
        snap()


def child_sleeps():
    """In a forked child: sleep, and never return into the attack code."""
    try:
        time.sleep(60)
    finally:
        os._exit(0)
'''

_REPORT = "\nsnap()\nprint('STATE ' + json.dumps(state))\n"

ROUTES = {
    "os.fork": """
        def start():
            if os.fork() == 0:
                child_sleeps()
        attempt(start)
    """,
    "subprocess.run": """
        def start():
            import subprocess
            done = subprocess.run(COUNTER, capture_output=True, text=True, timeout=10)
            state['notes'].append(done.stdout.strip())
        attempt(start, 3)
    """,
    "subprocess.Popen": """
        def start():
            import subprocess
            subprocess.Popen(SLEEPER)
        attempt(start)
    """,
    "os.posix_spawn": """
        attempt(lambda: os.posix_spawn(sys.executable, SLEEPER, {}))
    """,
    "os.posix_spawnp": """
        name = os.path.basename(sys.executable)  # found on the sandbox's PATH
        attempt(lambda: os.posix_spawnp(name, [name, *SLEEPER[1:]], {'PATH': '/usr/bin:/bin'}))
    """,
    "os.system": """
        def start():
            status = os.system('sleep 60 & sleep 60')
            state['notes'].append(status)
        attempt(start, 3)
    """,
    "os.popen": """
        def start():
            pipe = os.popen('sleep 60')
            state['notes'].append(pipe.close())
        attempt(start, 3)
    """,
    "pty.spawn": """
        def start():
            import pty
            state['notes'].append(pty.spawn(COUNTER))
        attempt(start, 3)
    """,
    "pty.fork": """
        def start():
            import pty
            pid, fd = pty.fork()
            if pid == 0:
                child_sleeps()
        attempt(start)
    """,
    "multiprocessing-fork": """
        def start():
            import multiprocessing
            multiprocessing.get_context('fork').Process(target=time.sleep, args=(60,)).start()
        attempt(start)
    """,
    "multiprocessing-spawn": """
        def start():
            import multiprocessing
            multiprocessing.get_context('spawn').Process(target=time.sleep, args=(60,)).start()
        attempt(start, 4)
    """,
    "_posixsubprocess.fork_exec": """
        def start():
            import _posixsubprocess
            fork_exec(_posixsubprocess.fork_exec)
        FORK_EXEC
        attempt(start)
    """,
    # the audit hook is a second layer, not the boundary: a builtin module can be created
    # without the "import" audit event, and fork_exec itself raises none
    "_posixsubprocess.fork_exec-via-_imp": """
        def start():
            import _imp, importlib.machinery
            spec = importlib.machinery.ModuleSpec('_posixsubprocess', None)
            fork_exec(_imp.create_builtin(spec).fork_exec)
        FORK_EXEC
        attempt(start)
    """,
    "ctypes-fork-execve": """
        def start():
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            pid = libc.fork()
            if pid == 0:
                exe = sys.executable.encode()
                argv = (ctypes.c_char_p * 4)(exe, b'-c', b'import time; time.sleep(60)', None)
                libc.execve(exe, argv, (ctypes.c_char_p * 1)(None))
                os._exit(1)
            if pid < 0:
                raise OSError(ctypes.get_errno(), 'libc fork failed')
        attempt(start)
    """,
}

_FORK_EXEC = """
def fork_exec(call):
    read, write = os.pipe()
    exe = os.fsencode(sys.executable)
    args = [[exe, b'-c', b'import time; time.sleep(60)'], [exe], True, (write,), None, None,
            -1, -1, -1, -1, -1, -1, read, write, True, False, -1, None, None, None, -1, None]
    try:
        call(*args)
    except TypeError:  # Python 3.12 and later: one more argument (allow_vfork)
        call(*args, False)
    os.close(write)
    failure = os.read(read, 100)
    os.close(read)
    if failure:
        raise OSError(failure.decode('latin-1'))
"""
# routes that must really start processes when the audit hook is off (the others need a shell,
# and there is none inside, so their child exits at once: still started, still contained)
LOOPING = {"os.fork", "subprocess.Popen", "os.posix_spawn", "os.posix_spawnp", "pty.fork",
           "multiprocessing-fork", "_posixsubprocess.fork_exec",
           "_posixsubprocess.fork_exec-via-_imp", "ctypes-fork-execve"}  # fmt: skip
# routes that wait for their child: what each of three calls returned (no shell inside: exit
# status 127; the counting child saw two processes, itself and the sandbox's init)
ONE_AT_A_TIME = {
    "os.system": [127 << 8] * 3,
    "subprocess.run": ["inner 2"] * 3,
    "pty.spawn": [0] * 3,
}
# importing subprocess already stops: its optional Windows import is refused (a RefusedImport is
# no ModuleNotFoundError), and so is its C helper
SUBPROCESS = ("import: module msvcrt", "import: module _posixsubprocess")
# what the hook refuses on each route: an audit event, or the import of the module it needs
REFUSED_BY = {
    "os.fork": "os.fork",
    "subprocess.run": SUBPROCESS,
    "subprocess.Popen": SUBPROCESS,
    "os.posix_spawn": "os.posix_spawn",
    "os.posix_spawnp": "os.posix_spawn",
    "os.system": "os.system",
    "os.popen": SUBPROCESS,
    "pty.spawn": "os.forkpty",
    "pty.fork": "os.forkpty",
    "multiprocessing-fork": ("os.fork", *SUBPROCESS),
    "multiprocessing-spawn": ("import: module _posixsubprocess", *SUBPROCESS),
    "_posixsubprocess.fork_exec": "import: module _posixsubprocess",
    "ctypes-fork-execve": "import: module ctypes",
}


def _source(route: str) -> str:
    body = textwrap.dedent(ROUTES[route]).replace("FORK_EXEC", _FORK_EXEC)
    prelude = _PRELUDE.replace("__MARKER__", repr(MARKER)).replace("__ATTEMPTS__", str(ATTEMPTS))
    return prelude + body + _REPORT


class _HostCount(threading.Thread):
    """Counts, from the host, the live processes of this test process's sandbox users."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.most, self.stop = 0, threading.Event()

    def run(self) -> None:
        uids = own_sandbox_uids()
        while not self.stop.is_set():
            count = 0
            for entry in os.listdir("/proc"):
                if entry.isdigit() and process_uid(entry) in uids:
                    count += 1
            self.most = max(self.most, count)
            time.sleep(0.002)


@pytest.fixture(scope="module")
def host_marker():
    """A host process with a marker in its command line: the sandbox must never see it."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", MARKER])
    deadline = time.monotonic() + 10
    while MARKER.encode() not in Path(f"/proc/{proc.pid}/cmdline").read_bytes():
        assert time.monotonic() < deadline, "the host marker process did not start"
        time.sleep(0.01)
    yield proc
    proc.kill()
    proc.wait()


def _state(result) -> dict:
    line = next((x for x in result.stdout.splitlines() if x.startswith("STATE ")), None)
    assert line is not None, result
    return json.loads(line[len("STATE ") :])


@LAYERS
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_every_process_creation_route_is_contained(route, audit, compass_db, host_marker):
    calls: list = []
    bridge = ToolBridge(compass_registry(), CompassContext.from_path(compass_db),
                        lambda name, args, result, ms, repairs: calls.append((name, result.ok)))  # fmt: skip
    workspace = Workspace()
    counter = _HostCount()
    counter.start()
    try:
        result = run(_source(route), audit=audit, limits=LIMITS, workspace=workspace, tools=bridge)
    finally:
        counter.stop.set()
        counter.join()
    state = _state(result)
    assert result.ok, result
    assert "/sandbox/boot.py" in state["pid1"]  # /proc is the sandbox's own PID namespace
    assert state["host_seen"] == [] and host_marker.poll() is None
    assert state["max_seen"] <= LIMITS.processes, state
    assert counter.most <= LIMITS.processes, (counter.most, state)
    if audit and route in REFUSED_BY:
        assert state["started"] == 0 and state["refused"], state
        assert result.refusals[0].startswith(REFUSED_BY[route]), result.refusals
    else:
        assert state["refused"] == [], state
        if route in LOOPING:  # it really started processes, until the process limit stopped it
            assert 2 <= state["started"] < LIMITS.processes, state
            assert state["max_seen"] >= state["started"] + 1, state
            assert any(e.startswith("BlockingIOError") or "Resource temporarily" in e
                       for e in state["errors"]), state  # fmt: skip
        elif route in ONE_AT_A_TIME:  # each call started a child that ended before it returned
            assert state["notes"] == ONE_AT_A_TIME[route], state
        else:  # the child found no shell (os.popen), or spawned children that sleep
            assert state["started"] >= 1 or state["errors"], state
    assert leftovers() == []  # nothing of the call is left on the host

    after = textwrap.dedent("""
        import json, os, tools
        pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
        print(json.dumps([pids, open('before-attack.txt').read(), tools.get_weekday(date_str='2025-08-01')]))
    """)
    calls.clear()
    follow = run(after, limits=LIMITS, workspace=workspace, tools=bridge)
    assert follow.ok, follow
    pids, kept, weekday = json.loads(follow.stdout)
    assert pids == [1]  # no leftover process of the attack: the new call sees only itself
    assert kept == "kept" and "error" not in weekday and calls == [("get_weekday", True)]
