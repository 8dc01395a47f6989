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
def test_reads_outside_the_working_directory_find_nothing(audit, compass_db, trips_db,
                                                          answer_files):  # fmt: skip
    package = Path(travelgym.__file__).resolve().parent
    assert all(path.is_file() for path in answer_files.values())  # built before the attack
    secrets = [
        str(compass_db),
        str(compass_db.parent),  # the data directory: ground truth lives beside the database
        *map(str, sorted(compass_db.parent.glob("*"))),
        str(trips_db),
        *map(str, sorted(Path(trips_db).parent.glob("*"))),
        *map(str, answer_files.values()),
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
    assert {str(p) for p in answer_files.values()} <= set(secrets)
    result = run(_probe(secrets), audit=audit)
    assert result.ok, result
    verdicts = json.loads(result.stdout)
    assert all(v.startswith("DENIED") for v in verdicts.values()), verdicts


_HUNT_ANSWER_FILES = r"""
import json, os
names, dirs, held, needles = __NAMES__, __DIRS__, __HELD__, [bytes.fromhex(h) for h in __NEEDLES__]
out = {'walked': 0, 'walk': [], 'proc': [], 'links': [], 'content': []}


def look(where, data):
    if any(n in data for n in needles):
        out['content'].append(where)


for top, subdirs, files in os.walk('/'):
    subdirs[:] = [d for d in subdirs if os.path.join(top, d) not in ('/proc', '/sys', '/dev')]
    for name in files:
        out['walked'] += 1
        if name in names or top in dirs:
            out['walk'].append(os.path.join(top, name))
        try:
            with open(os.path.join(top, name), 'rb') as fh:
                look(os.path.join(top, name), fh.read(1 << 16))
        except OSError:
            pass
pids = sorted({p for p in os.listdir('/proc') if p.isdigit()} | set(__HOST_PIDS__) | {'self'})
for pid in pids:
    for fd in [*held, *range(64)]:
        target = f'/proc/{pid}/fd/{fd}'
        try:
            link = os.readlink(target)
        except OSError:
            continue
        if os.path.basename(link) in names or os.path.dirname(link) in dirs:
            out['links'].append(link)
        try:
            with open(target, 'rb') as fh:
                data = fh.read(1 << 16)
            out['proc'].append(target)
            look(target, data)
        except OSError:
            pass
    for link in ('cwd', 'root'):
        for sub in ['', *sorted(set(__FULL__))]:
            path = f'/proc/{pid}/{link}' + sub
            try:
                if os.path.isdir(path):
                    entries = os.listdir(path)
                    if any(e in names for e in entries):
                        out['links'].append(path)
                else:
                    with open(path, 'rb') as fh:
                        look(path, fh.read(1 << 16))
                    out['links'].append(path)
            except OSError:
                pass
print(json.dumps(out))
"""


@LAYERS
def test_the_answer_files_are_there_and_no_route_reaches_them(audit, answer_files):
    """Ground truth and instance files exist on the host, the test process holds each open
    (so /proc/<parent>/fd/N would be a way in), and inside the sandbox no walk of the file
    system, no /proc/<pid>/fd link, and no cwd or root link of any visible or host process
    reaches them or their content."""
    files = list(answer_files.values())
    held = [os.open(path, os.O_RDONLY) for path in files]
    try:
        needles = []
        for path, fd in zip(files, held, strict=True):  # the parent really has them open
            assert os.readlink(f"/proc/self/fd/{fd}") == str(path)
            head = Path(f"/proc/{os.getpid()}/fd/{fd}").read_bytes()[:48]
            assert head and head == path.read_bytes()[:48]
            needles.append(head.hex())
        source = (
            _HUNT_ANSWER_FILES.replace("__NAMES__", repr(sorted({p.name for p in files})))
            .replace("__DIRS__", repr(sorted({str(p.parent) for p in files})))
            .replace("__HELD__", repr(held))
            .replace("__NEEDLES__", repr(needles))
            .replace("__HOST_PIDS__", repr([str(os.getpid()), str(os.getppid())]))
            .replace("__FULL__", repr([str(p) for p in files]))
        )
        result = run(source, audit=audit, limits=SandboxLimits(30, 20))
    finally:
        for fd in held:
            os.close(fd)
    assert result.ok, result
    found = json.loads(result.stdout)
    assert found["walked"] > 100  # the walk really covered the sandbox's file system
    assert found["proc"], found  # and /proc/<pid>/fd was readable (the sandbox's own fds)
    assert (found["walk"], found["links"], found["content"]) == ([], [], []), found


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


# each route ends by printing DONE; TARGET is the database path (or, in the control, a file in
# the working directory), "evil" a replacement the code wrote first
WRITE_ROUTES = {
    "copy-then-rename": "os.rename('evil', TARGET)",
    "copy-then-replace": "os.replace('evil', TARGET)",
    "shutil.move": "shutil.move('evil', TARGET)",
    "shutil.copyfile-over": "shutil.copyfile('evil', TARGET)",
    "hard-link-then-write": "os.link(TARGET, 'hard')\nopen('hard', 'r+b').write(b'garbage')",
    "hard-link-beside-then-rename": "os.link('evil', TARGET + '.new')\n"
                                    "os.rename(TARGET + '.new', TARGET)",
    "create-shm": "open(TARGET + '-shm', 'wb').write(b'garbage')",
    "create-journal": "open(TARGET + '-journal', 'wb').write(b'garbage')",
    "create-wal": "os.close(os.open(TARGET + '-wal', os.O_CREAT | os.O_WRONLY, 0o666))",
    "symlink-journal": "os.symlink('/work/evil', TARGET + '-journal')",
    "truncate": "os.truncate(TARGET, 0)",
}  # fmt: skip
_WRITE_PRELUDE = "import os, shutil\nTARGET = {target!r}\nopen('evil', 'wb').write(b'garbage')\n"
INJECTIONS = (
    "x'; PRAGMA query_only=0; DELETE FROM hotels; --",
    "x\"); ATTACH DATABASE 'file:/work/x?mode=rwc' AS y; CREATE TABLE y.t(a); --",
    "1 OR 1=1; UPDATE pois SET name='pwned'; --",
    "PRAGMA query_only = 0",
)
_INJECT = r"""
import inspect, json, tools
payloads, calls, answers = __PAYLOADS__, 0, []
def plausible(name, annotation):
    if 'date' in name:
        return '2025-08-10'
    return 2 if annotation in (int, 'int', float, 'float') else 'Zion'
for name in tools.__all__:
    if name == 'Python':
        continue
    params = inspect.signature(getattr(tools, name)).parameters.values()
    base = {p.name: (p.default if p.default is not inspect.Parameter.empty
                     else plausible(p.name, p.annotation)) for p in params}
    for p in params:
        if isinstance(base[p.name], int) and not isinstance(base[p.name], bool):
            continue
        for payload in payloads:
            answers.append(getattr(tools, name)(**{**base, p.name: payload}))
            calls += 1
print(json.dumps({'calls': calls, 'errors': sum('error' in a for a in answers if isinstance(a, dict))}))
"""


def _suite_db(suite: str, compass_db: Path, trips_db: Path, tmp_path: Path):
    """A private copy of the suite's database (an escape must never spoil the shared one),
    its registry and a context on it."""
    from travelgym.suites.behavior2trip.tools import TripsContext, trips_registry
    from travelgym.suites.compass.tools import CompassContext, compass_registry

    source = compass_db if suite == "compass" else Path(trips_db)
    copy = tmp_path / suite / source.name
    copy.parent.mkdir()
    copy.write_bytes(source.read_bytes())
    if suite == "compass":
        return copy, compass_registry(), CompassContext.from_path(copy)
    return copy, trips_registry(), TripsContext.from_path(copy)


@LAYERS
@pytest.mark.parametrize("suite", ["compass", "behavior2trip"])
def test_more_database_write_routes_leave_it_byte_identical(audit, suite, compass_db, trips_db,
                                                            tmp_path):  # fmt: skip
    import sqlite3

    from travelgym.sandbox import ToolBridge

    db, registry, context = _suite_db(suite, compass_db, trips_db, tmp_path)
    before, beside = _sha(db), sorted(os.listdir(db.parent))
    for route, body in WRITE_ROUTES.items():  # control: each route works on a file it can reach
        control = run(_WRITE_PRELUDE.format(target="/work/control.sqlite")
                      + "open(TARGET, 'wb').write(b'original')\n" + body + "\nprint('DONE')",
                      audit=audit)  # fmt: skip
        assert control.ok and control.stdout == "DONE\n", (route, control)
    for route, body in WRITE_ROUTES.items():
        workspace = Workspace()
        result = run(_WRITE_PRELUDE.format(target=str(db)) + body + "\nprint('DONE')",
                     audit=audit, workspace=workspace)  # fmt: skip
        assert not result.ok and "DONE" not in result.stdout, (route, result)
        after = run("print(open('evil', 'rb').read())", workspace=workspace)
        assert after.ok and after.stdout == "b'garbage'\n"  # the episode goes on
    recorded: list = []
    bridge = ToolBridge(registry, context, lambda *call: recorded.append(call[0]))
    injected = run(_INJECT.replace("__PAYLOADS__", repr(list(INJECTIONS))), audit=audit,
                   tools=bridge, limits=SandboxLimits(60, 30))  # fmt: skip
    assert injected.ok, injected
    counts = json.loads(injected.stdout)
    assert counts["calls"] >= 4 * len(INJECTIONS) and len(recorded) == counts["calls"]
    # the bridge's own connection cannot write its database either, even with query_only off
    table = context.conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchone()[0]
    with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
        context.conn.execute(f'DELETE FROM "{table}"')
    with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
        context.conn.execute("PRAGMA query_only = 0")
    assert context.conn.execute("PRAGMA query_only").fetchone()[0] == 1  # still on
    context.close()
    assert _sha(db) == before
    assert sorted(os.listdir(db.parent)) == beside  # no -shm, -journal, -wal or .new beside it


def test_the_bridge_connection_refuses_a_writable_attach(compass_db, tmp_path):
    """Defence in depth: were a tool ever to run SQL text, neither ``PRAGMA query_only = 0`` nor
    an ``ATTACH`` of the database file with ``mode=rw`` gets through the tools' read-only
    connection (its authorizer refuses both; no attached databases are allowed)."""
    import sqlite3

    db, _, context = _suite_db("compass", compass_db, compass_db, tmp_path)
    before = _sha(db)
    refused = []
    try:
        for sql in ("PRAGMA query_only = 0", f"ATTACH DATABASE 'file:{db}?mode=rw' AS again",
                    "DELETE FROM again.hotels", "DELETE FROM hotels", "CREATE TABLE x (y)"):  # fmt: skip
            try:
                context.conn.execute(sql)
            except sqlite3.DatabaseError as exc:
                refused.append("not authorized" in str(exc) or "no such table" in str(exc))
        context.conn.commit()
        assert context.conn.execute("SELECT count(*) FROM hotels").fetchone()[0] > 0  # reads work
    finally:
        context.close()
    assert refused == [True] * 5, refused
    assert _sha(db) == before


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
