"""The code sandbox: limits, refusals, tool bindings; the test process must always survive."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import tempfile
import uuid
from pathlib import Path

import pytest

from travelgym.parks.tools import CompassContext, compass_registry
from travelgym.sandbox import (
    SandboxError,
    SandboxLimits,
    ToolsSpec,
    describe_tools,
    run_code,
)
from travelgym.toolkit.codegen import build_module, registry_caller, tool_signature

FAST = SandboxLimits(wall_seconds=10, cpu_seconds=1)


def group_members(pgid: int) -> list[int]:
    """Processes (zombies included) whose process group is ``pgid``, read from /proc."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[2]) == pgid:
            members.append(int(entry))
    return members


def run(source: str, **kwargs):
    result = run_code(source, **{"limits": FAST, **kwargs})
    assert result.pid is not None and group_members(result.pid) == []
    return result


@pytest.fixture()
def spec(compass_db):
    return ToolsSpec(suite="compass", db_path=compass_db)


def test_normal_run():
    result = run("import sys\nprint('hello', 6 * 7)\nprint('warn', file=sys.stderr)")
    assert result.ok and result.error is None and result.exit_status == 0
    assert result.stdout == "hello 42\n" and result.stderr == "warn\n"
    assert result.wall_seconds < 5 and result.cpu_seconds > 0


def test_busy_loop_hits_cpu_limit():
    result = run("while True:\n    pass")
    assert not result.ok and result.error in (SandboxError.CPU_LIMIT, SandboxError.TIMEOUT)
    assert result.wall_seconds < 8


def test_sleep_hits_wall_timeout():
    result = run("import time\nprint('start')\ntime.sleep(60)", limits=SandboxLimits(1.0))
    assert result.error == SandboxError.TIMEOUT and result.exit_status == -9
    assert result.stdout == "start\n" and result.wall_seconds < 5


@pytest.mark.parametrize(
    "source",
    ["x = bytearray(10**10)", "x = []\nwhile True:\n    x.append(bytearray(10**7))"],
    ids=["huge", "growing"],
)
def test_memory_bomb(source):
    result = run(source, limits=SandboxLimits(10, 5, memory_bytes=256 << 20))
    assert result.error == SandboxError.MEMORY and "MemoryError" in result.traceback


@pytest.mark.parametrize(
    "source",
    [
        "import os\nwhile True:\n    os.fork()",
        "import subprocess\nsubprocess.run(['echo', 'hi'])",
        "import os\nos.system('echo hi')",
        "import os\nos.popen('echo hi').read()",
        "import os\nos.posix_spawn('/bin/echo', ['echo'], {})",
        "import os\nos.execv('/bin/echo', ['echo'])",
        "import multiprocessing\nmultiprocessing.Process(target=print).start()",
        "import pty\npty.fork()",
        "import _posixsubprocess",
        "import os\nos.kill(os.getppid(), 9)",
    ],
    ids=[
        "fork-bomb",
        "subprocess",
        "system",
        "popen",
        "posix_spawn",
        "exec",
        "multiprocessing",
        "pty",
        "posixsubprocess",
        "kill-parent",
    ],
)
def test_process_creation_refused(source):
    result = run(source)
    assert result.error == SandboxError.REFUSED, result
    assert result.refusals and "sandbox refused" in result.traceback
    assert result.stdout == ""  # no "hi" from a child process


@pytest.mark.parametrize(
    "template",
    [
        "open({path!r}, 'w').write('x')",
        "import os\nos.open({path!r}, os.O_WRONLY | os.O_CREAT)",
        "import pathlib\npathlib.Path({path!r}).write_text('x')",
        "import shutil\nopen('a.txt', 'w').write('x')\nshutil.copy('a.txt', {path!r})",
        "import os\nos.mkdir({path!r})",
        "import os\nos.symlink({path!r}, 'link')\nopen('link', 'w')",
        "import os\nos.chdir(os.path.dirname({path!r}))\nopen(os.path.basename({path!r}), 'w')",
        "import os\nd = os.open(os.path.dirname({path!r}), os.O_RDONLY)\n"
        "os.open(os.path.basename({path!r}), os.O_WRONLY | os.O_CREAT, dir_fd=d)",
        "import os\nos.mkfifo({path!r})",
    ],
    ids=["open", "os.open", "pathlib", "copy", "mkdir", "symlink", "chdir", "dir_fd", "mkfifo"],
)
def test_write_outside_workdir_refused(template):
    path = os.path.join(tempfile.gettempdir(), f"escape_{uuid.uuid4().hex}")
    result = run(template.format(path=path))
    assert result.error == SandboxError.REFUSED, result
    assert not os.path.lexists(path)


def test_write_inside_workdir_allowed(tmp_path):
    work = tmp_path / "work"
    source = (
        "import os, tempfile\nos.makedirs('sub/dir')\nopen('sub/dir/a.txt', 'w').write('kept')\n"
        "fd, name = tempfile.mkstemp()\nos.close(fd)\nos.rename(name, 'moved')\nprint(os.getcwd())"
    )
    result = run(source, workdir=work)
    assert result.ok, result
    assert (work / "sub/dir/a.txt").read_text() == "kept" and (work / "moved").exists()
    assert result.stdout.strip() == str(work.resolve())


def test_temporary_workdir_is_removed():
    result = run("import os\nprint(os.getcwd())\nopen('f', 'w').write('x')")
    assert result.ok and not os.path.exists(result.stdout.strip())


def test_network_refused():
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.3)
    port = listener.getsockname()[1]
    try:
        source = f"import socket\ns = socket.socket()\ns.connect(('127.0.0.1', {port}))"
        result = run(source)
        assert result.error == SandboxError.REFUSED and "socket" in result.refusals[0]
        with pytest.raises(TimeoutError):
            listener.accept()
        for source in (
            f"import socket\nsocket.create_connection(('127.0.0.1', {port}))",
            f"import urllib.request\nurllib.request.urlopen('http://127.0.0.1:{port}/')",
            "import socket\nsocket.getaddrinfo('localhost', 80)",
        ):
            assert run(source).error == SandboxError.REFUSED
    finally:
        listener.close()


def test_ctypes_refused():
    result = run("import ctypes\nctypes.CDLL(None).getpid()")
    assert result.error == SandboxError.REFUSED and "ctypes" in result.refusals[0]


def test_parent_environment_not_inherited(monkeypatch):
    monkeypatch.setenv("TRAVELGYM_SECRET_API_KEY", "sk-do-not-leak")
    result = run("import os\nprint(dict(os.environ))")
    assert result.ok and "sk-do-not-leak" not in result.stdout


def test_exception_reports_traceback():
    result = run("def f(x):\n    return 1 / x\n\nprint('before')\nf(0)")
    assert result.error == SandboxError.EXCEPTION and result.stdout == "before\n"
    assert 'File "<code>", line 2, in f' in result.traceback
    assert result.traceback.rstrip().endswith("ZeroDivisionError: division by zero")
    assert "travelgym" not in result.traceback  # the sandbox's own frames are hidden


def test_syntax_error_and_exit_codes():
    assert run("def f(:\n    pass").error == SandboxError.EXCEPTION
    assert run("import sys\nsys.exit(0)").ok
    assert run("import sys\nsys.exit(3)").error == SandboxError.EXCEPTION
    crashed = run("import os\nos._exit(7)")
    assert crashed.error == SandboxError.CRASH and crashed.exit_status == 7


def test_output_flood_is_truncated():
    limits = SandboxLimits(10, 5, output_chars=1000)
    source = "import sys\nprint('x' * 10**7)\nfor i in range(10**5):\n    print(i, file=sys.stderr)"
    result = run(source, limits=limits)
    assert result.ok and result.stdout_truncated and result.stderr_truncated
    assert result.stdout.startswith("x" * 1000) and len(result.stdout) < 1100
    assert len(result.stderr) < 1100 and "truncated" in result.stderr


def _db_hash(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


GRAB_CONNECTION = (
    "import gc, sqlite3\n"
    "conn = next(o for o in gc.get_objects() if isinstance(o, sqlite3.Connection))\n"
)


@pytest.mark.parametrize(
    "template",
    [
        GRAB_CONNECTION + "conn.execute('DELETE FROM hotels')\nconn.commit()",
        GRAB_CONNECTION + "conn.execute('PRAGMA query_only = OFF')",
        GRAB_CONNECTION + "conn.execute(\"ATTACH DATABASE 'side.db' AS side\")",
        GRAB_CONNECTION + 'conn.execute("VACUUM INTO {side!r}")',
        "import sqlite3\nc = sqlite3.connect({db!r})\nc.execute('DELETE FROM hotels')\nc.commit()",
        "import sqlite3\nsqlite3.connect(':memory:')",
        "open({db!r}, 'r+b').write(b'garbage')",
        "import os\nos.remove({db!r})",
        "import os\nos.truncate({db!r}, 0)",
    ],
    ids=[
        "delete",
        "pragma",
        "attach",
        "vacuum-into",
        "connect",
        "connect-memory",
        "open",
        "remove",
        "truncate",
    ],
)
def test_database_cannot_be_written(spec, compass_db, tmp_path, template):
    before = _db_hash(compass_db)
    side = str(tmp_path / "side.db")
    result = run(template.format(db=str(compass_db), side=side), tools_spec=spec)
    assert not result.ok and result.error in (SandboxError.REFUSED, SandboxError.EXCEPTION)
    assert _db_hash(compass_db) == before and not os.path.exists(side)


def test_tools_match_direct_registry_calls(spec, compass_db):
    calls = [
        ("get_weekday", {"date_str": "2025-08-15"}),
        ("get_weekday", {"date_str": "not a date"}),
        ("search_hotel", {"location": "Zion", "start_date": "2025-08-10",
                          "end_date": "2025-08-12", "num_guests": 2}),
        ("search_location_name", {"query": "yosemity"}),
        ("calculate", {"expression": "100 + 200 * 3"}),
    ]  # fmt: skip
    source = "import json\nfrom tools import get_weekday, search_hotel\nimport tools\n" + "".join(
        f"print(json.dumps(tools.{name}(**{args!r})))\n" for name, args in calls
    )
    result = run(source, tools_spec=spec)
    assert result.ok, result
    registry, ctx = compass_registry(), CompassContext.from_path(compass_db)
    try:
        expected = [json.loads(json.dumps(registry.call(n, a, ctx).payload())) for n, a in calls]
    finally:
        ctx.close()
    assert [json.loads(line) for line in result.stdout.splitlines()] == expected
    assert "error" in expected[1] and "error" not in expected[2]


def test_tool_bindings_in_sandbox(spec):
    source = (
        "import inspect, json, tools\n"
        "print(json.dumps({\n"
        "  'names': tools.__all__,\n"
        "  'sig': str(inspect.signature(tools.get_weekday)),\n"
        "  'doc': tools.get_weekday.__doc__,\n"
        "  'positional': tools.get_weekday('2025-08-01'),\n"
        "  'unknown': tools.get_weekday(day='2025-08-01'),\n"
        "  'missing': tools.search_hotel(location='Zion'),\n"
        "}))"
    )
    result = run(source, tools_spec=spec)
    assert result.ok, result
    out = json.loads(result.stdout)
    assert out["names"] == compass_registry().names
    assert out["sig"] == "(date_str: str) -> dict"
    assert out["doc"].startswith("Return the weekday name of a date.")
    assert out["positional"] == {"date": "2025-08-01", "weekday": "Friday"}
    assert out["unknown"]["error"]["category"] == "parameter"
    assert "start_date" in out["missing"]["error"]["message"]


def test_notebook_persists_across_runs(spec, tmp_path):
    work = tmp_path / "episode"
    first = run("from tools import notebook\nprint(notebook(action='write', input_data='Zion'))",
                tools_spec=spec, workdir=work)  # fmt: skip
    assert first.ok and "written" in first.stdout
    second = run("from tools import notebook\nprint(notebook(action='list_all'))",
                 tools_spec=spec, workdir=work)  # fmt: skip
    assert second.ok and "'note': 'Zion'" in second.stdout
    fresh = run("from tools import notebook\nprint(notebook(action='list_all'))", tools_spec=spec)
    assert fresh.stdout.strip() == "{'notes': []}"


def test_episode_goes_on_after_failures(spec, tmp_path):
    work = tmp_path / "episode"
    failures = [
        ("import os\nwhile True:\n    os.fork()", SandboxError.REFUSED),
        ("while True:\n    pass", None),
        ("x = bytearray(10**10)", SandboxError.MEMORY),
        ("raise RuntimeError('boom')", SandboxError.EXCEPTION),
        ("import os\nos.kill(os.getpid(), 11)", SandboxError.REFUSED),
        ("import sys\nsys.setrecursionlimit(10**7)\nf = lambda: f()\nf()", None),
    ]
    for source, error in failures:
        result = run(source, tools_spec=spec, workdir=work)
        assert not result.ok and (error is None or result.error == error)
    result = run("from tools import get_weekday\nprint(get_weekday('2025-08-02'))",
                 tools_spec=spec, workdir=work)  # fmt: skip
    assert result.ok and "Saturday" in result.stdout


def test_describe_tools_and_signatures():
    registry = compass_registry()
    text = describe_tools(registry)
    assert all(f"- {name}(" in text for name in registry.names)
    assert "search_hotel(location: str, start_date: str, end_date: str, num_guests: int" in text
    sig = tool_signature(registry["notebook"])
    assert list(sig.parameters) == ["action", "input_data", "index"]
    assert sig.parameters["index"].default is None


def test_codegen_module_without_sandbox(compass_db):
    registry, ctx = compass_registry(), CompassContext.from_path(compass_db)
    try:
        tools = build_module(registry, registry_caller(registry, ctx))
        assert tools.get_weekday(date_str="2025-08-01")["weekday"] == "Friday"
        assert tools.get_weekday("a", "b")["error"]["category"] == "parameter"
        assert tools.notebook("write", input_data="x") == {"status": "written", "index": 0}
        assert ctx.notebook == ["x"]
    finally:
        ctx.close()


def test_invalid_specs(tmp_path):
    with pytest.raises(ValueError):
        ToolsSpec(suite="nope", db_path=tmp_path)
    with pytest.raises(FileNotFoundError):
        ToolsSpec(suite="compass", db_path=tmp_path / "missing.sqlite")
    with pytest.raises(ValueError):
        SandboxLimits(memory_bytes=1 << 20)
