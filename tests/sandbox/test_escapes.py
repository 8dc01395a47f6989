"""Escape attempts against the sandbox, each contained, the episode going on afterwards.

Every attack runs twice: with the audit hook (the product's setting) and without it
(``audit=False``), which shows that the operating-system boundary holds on its own: an audit
hook is not a security boundary, so each attack may get past it and must still be contained.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import travelgym
from tests.sandbox.support import FAST, leftovers, process_uid, run
from travelgym.sandbox import SandboxLimits, Workspace
from travelgym.sandbox.boundary import UID_BASE
from travelgym.suites.compass.tasks import PACKAGE_TASKS

LAYERS = pytest.mark.parametrize("audit", [True, False], ids=["with-hook", "boundary-only"])
SECRET = "sk-travelgym-test-secret-do-not-leak"


def _probe(paths: list[str]) -> str:
    """Code that tries to read each path and prints one JSON verdict per path."""
    return textwrap.dedent(f"""
        import json, os
        out = {{}}
        for path in {paths!r}:
            try:
                if os.path.isdir(path):
                    out[path] = 'LISTED ' + ','.join(sorted(os.listdir(path))[:5])
                else:
                    with open(path, 'rb') as fh:
                        out[path] = 'READ ' + fh.read(200).decode('latin-1')
            except OSError as exc:
                out[path] = 'DENIED ' + type(exc).__name__
        print(json.dumps(out))
    """)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@LAYERS
def test_reads_outside_the_working_directory_find_nothing(audit, compass_db, trips_db):
    package = Path(travelgym.__file__).resolve().parent
    secrets = [
        str(compass_db),
        str(compass_db.parent),  # the data directory: ground truth lives beside the database
        *map(str, sorted(compass_db.parent.glob("*"))),
        str(trips_db),
        *map(str, sorted(Path(trips_db).parent.glob("*"))),
        str(package),
        str(PACKAGE_TASKS),
        str(Path.home()),
        os.getcwd(),
        sys.executable,
        f"/proc/{os.getpid()}/environ",
        f"/proc/{os.getpid()}/cmdline",
        f"/proc/{os.getpid()}/mem",
        f"/proc/{os.getppid()}/environ",
        "/etc/passwd",
        "/root",
        "/tmp",
    ]
    result = run(_probe(secrets), audit=audit)
    assert result.ok, result
    verdicts = json.loads(result.stdout)
    assert all(v.startswith("DENIED") for v in verdicts.values()), verdicts


@LAYERS
def test_travelgym_is_not_importable(audit):
    source = (
        "import sys\nfor path in ['/usr/local/lib', '/usr/lib/python3/dist-packages']:\n"
        "    sys.path.append(path)\n"
        "try:\n    import travelgym\n    print('IMPORTED', travelgym.__file__)\n"
        "except ImportError:\n    print('absent')\n"
        "import importlib.util\nprint(importlib.util.find_spec('pydantic'))"
    )
    result = run(source, audit=audit)
    assert result.stdout.split() == ["absent", "None"], result


@LAYERS
def test_process_creation_is_contained(audit):
    source = textwrap.dedent("""
        import gc, os, sys, time
        made, failures = 0, set()
        for _ in range(64):
            try:
                pid = os.fork()
            except OSError as exc:
                failures.add(type(exc).__name__)
                break
            except Exception as exc:
                failures.add(type(exc).__name__)
                break
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            made += 1
        for argv in (['/bin/sh', '-c', 'id'], ['/usr/bin/env'], ['/bin/busybox', 'sh']):
            try:
                os.execv(argv[0], argv)
            except Exception as exc:
                failures.add(argv[0] + ':' + type(exc).__name__)
        helpers = [o for o in gc.get_objects() if getattr(o, '__name__', '') == 'fork_exec']
        try:
            import _posixsubprocess
            helpers.append(_posixsubprocess.fork_exec)
        except ImportError as exc:
            failures.add('import:' + type(exc).__name__)
        print(made, sorted(failures), len(helpers))
    """)
    limits = SandboxLimits(10, 2, processes=8)
    result = run(source, audit=audit, limits=limits)
    made = int(result.stdout.split()[0]) if result.stdout else 0
    assert made < limits.processes, result  # RLIMIT_NPROC holds for the sandbox's own user
    assert "/bin/sh:FileNotFoundError" in result.stdout or result.refusals  # no shell inside


@LAYERS
def test_the_database_cannot_be_written_by_any_route(audit, compass_db, tmp_path):
    before = _sha(compass_db)
    db = str(compass_db)
    routes = [
        f"import sqlite3\nc = sqlite3.connect({db!r})\nc.execute('DELETE FROM hotels')\nc.commit()",
        f"import sqlite3\nsqlite3.connect('file:{db}?mode=rw', uri=True).execute('PRAGMA user_version=9')",
        f"import sqlite3\nc = sqlite3.connect(':memory:')\nc.execute(\"ATTACH DATABASE {db!r} AS x\")\n"
        "c.execute('DELETE FROM x.hotels')\nc.commit()",
        f"open({db!r}, 'r+b').write(b'garbage')",
        f"open({db + '-wal'!r}, 'wb').write(b'garbage')",
        f"import os\nos.remove({db!r})",
        f"import shutil\nshutil.copy('/dev/zero', {db!r})",
    ]
    for source in routes:
        result = run(source, audit=audit)
        assert not result.ok, source
    assert _sha(compass_db) == before
    assert not Path(db + "-wal").exists() and not Path(db + "-journal").exists()


@LAYERS
def test_the_guard_can_be_rewritten_but_the_file_system_stays_read_only(audit):
    source = textwrap.dedent("""
        import gc, os
        for obj in gc.get_objects():
            if type(obj).__name__ == 'Policy':
                obj.workdir = '/'
        wrote = []
        for path in ['/x', '/usr/x', '/sandbox/boot.py', '/proc/x', '/dev/shm/x', '/etc/x']:
            try:
                with open(path, 'w') as fh:
                    fh.write('x')
                wrote.append(path)
            except OSError:
                pass
        print('wrote', wrote)
    """)
    result = run(source, audit=audit)
    assert result.stdout.strip() == "wrote []", result


@LAYERS
def test_symlink_and_rename_races_reach_nothing(audit, compass_db):
    source = textwrap.dedent(f"""
        import os, threading
        target, stop, seen = {str(compass_db)!r}, threading.Event(), set()
        open('innocent', 'w').write('fine')
        def flip():
            while not stop.is_set():
                for dest in (target, 'innocent', '/sandbox/boot.py', '/proc/1/environ'):
                    try:
                        os.symlink(dest, 'link.tmp')
                        os.rename('link.tmp', 'link')
                    except OSError:
                        pass
        thread = threading.Thread(target=flip)
        thread.start()
        for _ in range(3000):
            try:
                with open('link', 'rb') as fh:
                    seen.add(fh.read(16))
            except OSError:
                pass
        stop.set()
        thread.join()
        print(sorted(seen))
    """)
    workspace = Workspace()
    result = run(source, audit=audit, workspace=workspace)
    assert b"SQLite format" not in result.stdout.encode(), result
    assert "link" not in workspace.files()  # links are not kept; the parent never follows one


@LAYERS
def test_parent_environment_and_memory_are_invisible(audit, monkeypatch):
    monkeypatch.setenv("TRAVELGYM_SECRET_API_KEY", SECRET)
    head, tail = SECRET[:8], SECRET[8:]  # the code's own text never holds the whole secret
    source = textwrap.dedent(f"""
        import os
        needle = ({head!r} + {tail!r}).encode()
        found, pids = [], [p for p in os.listdir('/proc') if p.isdigit()]
        for pid in pids + ['{os.getpid()}', '{os.getppid()}']:
            for name in ('environ', 'cmdline', 'mem'):
                try:
                    with open(f'/proc/{{pid}}/{{name}}', 'rb') as fh:
                        if needle in fh.read(1 << 20):
                            found.append((pid, name))
                except OSError:
                    pass
            try:
                for fd in os.listdir(f'/proc/{{pid}}/fd'):
                    target = os.readlink(f'/proc/{{pid}}/fd/{{fd}}')
                    if target.startswith('/') and not target.startswith(('/dev/', '/work')):
                        found.append((pid, target))
            except OSError:
                pass
        print(len(pids), found, needle.decode() in str(dict(os.environ)))
    """)
    result = run(source, audit=audit)
    assert result.ok, result
    count, rest = result.stdout.split(" ", 1)
    assert int(count) <= 4  # only the sandbox's own processes are visible
    assert rest.strip() == "[] False", result


@LAYERS
def test_no_terminal_to_inject_into(audit):
    source = textwrap.dedent("""
        import fcntl, os, termios
        injected = []
        fds = [0, 1, 2]
        try:
            fds.append(os.open('/dev/tty', os.O_RDWR))
        except OSError:
            pass
        for fd in fds:
            try:
                fcntl.ioctl(fd, termios.TIOCSTI, b'x')
                injected.append(fd)
            except OSError:
                pass
        print('injected', injected, os.getsid(0) == os.getpid())
    """)
    result = run(source, audit=audit)
    assert "injected [] " in result.stdout or result.refusals, result


@LAYERS
def test_signals_cannot_reach_outside_processes(audit):
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        source = textwrap.dedent(f"""
            import os, signal
            hit = []
            for pid in ({victim.pid}, {os.getpid()}, {os.getppid()}, -1):
                try:
                    os.kill(pid, signal.SIGKILL)
                    hit.append(pid)
                except (OSError, PermissionError) as exc:
                    pass
            print('hit', hit)
        """)
        run(source, audit=audit)
        time.sleep(0.2)
        assert victim.poll() is None  # still alive
    finally:
        victim.kill()
        victim.wait()


def test_nothing_survives_a_killed_benchmark(tmp_path):
    """The benchmark is SIGKILLed while its sandboxed code has forked children that ignore
    every catchable signal: within 5 s no process of that sandbox is left."""
    code = textwrap.dedent("""
        import os, signal, time
        for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(s, signal.SIG_IGN)
        for _ in range(3):
            if os.fork() == 0:
                break
        print('ready', flush=True)
        time.sleep(120)
    """)
    bench = textwrap.dedent(f"""
        import sys
        from travelgym.sandbox import SandboxLimits, run_code
        print('pid', flush=True)
        run_code({code!r}, limits=SandboxLimits(120, 100), audit=False)
    """)
    proc = subprocess.Popen([sys.executable, "-c", bench], stdout=subprocess.PIPE, text=True)
    first = UID_BASE + (proc.pid % (1 << 20)) * 64
    uids = range(first, first + 64)
    try:
        assert proc.stdout.readline().strip() == "pid"
        deadline = time.monotonic() + 20
        while not _uid_processes(uids) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # let the children fork
        assert len(_uid_processes(uids)) >= 3
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 5
    while _uid_processes(uids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _uid_processes(uids) == []


def _uid_processes(uids: range) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and process_uid(entry) in uids:
            try:
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state not in ("Z", "X"):
                out.append(int(entry))
    return out


@LAYERS
def test_the_disk_cap_is_total_and_the_episode_goes_on(audit):
    limits = SandboxLimits(20, 10, file_bytes=4 << 20, disk_bytes=8 << 20)
    source = textwrap.dedent("""
        import os
        written = 0
        for i in range(100):
            try:
                with open(f'f{i}', 'wb') as fh:
                    for _ in range(4):
                        fh.write(b'x' * (1 << 20))
                        written += 1 << 20
            except OSError:
                break
        elsewhere = []
        for path in ('/tmp/x', '/dev/shm/x', '/x', '/proc/self/x'):
            try:
                open(path, 'wb').write(b'x')
                elsewhere.append(path)
            except OSError:
                pass
        print(written, elsewhere)
    """)
    workspace = Workspace()
    result = run(source, audit=audit, limits=limits, workspace=workspace)
    written, elsewhere = result.stdout.split(" ", 1)
    assert int(written) <= limits.disk_bytes and elsewhere.strip() == "[]", result
    after = run("import os\nprint(len(os.listdir('.')))", limits=limits, workspace=workspace)
    assert after.ok


@LAYERS
def test_no_network_not_even_loopback_or_abstract_sockets(audit):
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.3)
    abstract = socket.socket(socket.AF_UNIX)
    name = f"travelgym-test-{os.getpid()}"
    abstract.bind("\0" + name)
    abstract.listen()
    abstract.settimeout(0.3)
    port = listener.getsockname()[1]
    source = textwrap.dedent(f"""
        import socket
        reached = []
        for family, address in ((socket.AF_INET, ('127.0.0.1', {port})),
                                (socket.AF_INET, ('1.1.1.1', 53)),
                                (socket.AF_UNIX, '\\0{name}')):
            try:
                s = socket.socket(family)
                s.settimeout(1)
                s.connect(address)
                reached.append(address)
            except OSError:
                pass
        print('reached', reached)
    """)
    try:
        result = run(source, audit=audit)
        assert result.stdout.strip() == "reached []" or result.refusals, result
        for server in (listener, abstract):
            with pytest.raises(TimeoutError):
                server.accept()
    finally:
        listener.close()
        abstract.close()


@LAYERS
def test_limits_cannot_be_raised(audit):
    source = textwrap.dedent("""
        import resource
        raised = []
        for name in ('RLIMIT_NPROC', 'RLIMIT_AS', 'RLIMIT_CPU', 'RLIMIT_FSIZE'):
            which = getattr(resource, name)
            try:
                resource.setrlimit(which, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
                raised.append(name)
            except (ValueError, OSError):
                pass
        print('raised', raised)
    """)
    result = run(source, audit=audit)
    assert "raised []" in result.stdout or result.refusals, result


def test_after_every_attack_the_next_call_works():
    result = run("print(sum(range(10)))", limits=FAST)
    assert result.ok and result.stdout == "45\n" and leftovers() == []
