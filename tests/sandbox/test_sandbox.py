"""The code sandbox: limits, results, the working directory and the tools by message."""

from __future__ import annotations

import json

import pytest

from tests.sandbox.support import run
from travelgym.sandbox import SandboxError, SandboxLimits, ToolBridge, Workspace
from travelgym.suites.compass.env import CompassToolSession
from travelgym.suites.compass.tools import CompassContext, compass_registry
from travelgym.toolkit.codegen import build_module, describe_tools, registry_caller, tool_signature


def test_normal_run():
    result = run("import sys\nprint('hello', 6 * 7)\nprint('warn', file=sys.stderr)")
    assert result.ok and result.error is None and result.exit_status == 0
    assert result.stdout == "hello 42\n" and result.stderr == "warn\n"
    assert result.boundary == "bubblewrap" and result.wall_seconds < 5


def test_busy_loop_hits_cpu_limit():
    result = run("while True:\n    pass", limits=SandboxLimits(10, 1))
    assert not result.ok and result.error in (SandboxError.CPU_LIMIT, SandboxError.TIMEOUT)
    assert result.wall_seconds < 8


def test_sleep_hits_wall_timeout():
    result = run("import time\nprint('start')\ntime.sleep(60)", limits=SandboxLimits(1.0))
    assert result.error == SandboxError.TIMEOUT
    assert result.stdout == "start\n" and result.wall_seconds < 5


@pytest.mark.parametrize(
    "source",
    ["x = bytearray(10**10)", "x = []\nwhile True:\n    x.append(bytearray(10**7))"],
    ids=["huge", "growing"],
)
def test_memory_bomb(source):
    result = run(source, limits=SandboxLimits(10, 5, memory_bytes=256 << 20))
    assert result.error == SandboxError.MEMORY and "MemoryError" in result.traceback


def test_exception_reports_traceback():
    result = run("def f(x):\n    return 1 / x\n\nprint('before')\nf(0)")
    assert result.error == SandboxError.EXCEPTION and result.stdout == "before\n"
    assert 'File "<code>", line 2, in f' in result.traceback
    assert result.traceback.rstrip().endswith("ZeroDivisionError: division by zero")
    assert "boot.py" not in result.traceback and "/sandbox" not in result.traceback


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
    assert len(result.stderr) < 1100 and "...[cut: " in result.stderr


def test_workspace_files_last_for_the_episode():
    workspace = Workspace()
    first = run("import os\nos.makedirs('sub/dir')\nopen('sub/dir/a.txt', 'w').write('kept')\n"
                "print(os.getcwd())", workspace=workspace)  # fmt: skip
    assert first.ok and first.stdout.strip() == "/work"
    assert workspace.files() == {"sub/dir/a.txt": b"kept"}
    second = run("print(open('sub/dir/a.txt').read())\nopen('b', 'w').write('2')",
                 workspace=workspace)  # fmt: skip
    assert second.ok and second.stdout == "kept\n"
    assert set(workspace.files()) == {"sub/dir/a.txt", "b"}
    fresh = run("import os\nprint(os.listdir('.'))")
    assert fresh.stdout.strip() == "[]"


def test_a_timed_out_call_keeps_the_previous_files():
    workspace = Workspace()
    run("open('a', 'w').write('1')", workspace=workspace)
    killed = run("open('b', 'w').write('2')\nwhile True:\n    pass",
                 limits=SandboxLimits(1.0, 5), workspace=workspace)  # fmt: skip
    assert killed.error == SandboxError.TIMEOUT and not killed.workspace_saved
    assert workspace.files() == {"a": b"1"}


def _bridge(compass_db, calls=None):
    registry, context = compass_registry(), CompassContext.from_path(compass_db)

    def record(name, arguments, result, ms, repairs):
        if calls is not None:
            calls.append((name, arguments, result.ok))

    return ToolBridge(registry, context, record), context


def test_tools_match_direct_registry_calls(compass_db):
    calls = [
        ("get_weekday", {"date_str": "2025-08-15"}),
        ("get_weekday", {"date_str": "not a date"}),
        ("search_hotel", {"location": "Zion", "start_date": "2025-08-10",
                          "end_date": "2025-08-12", "num_guests": 2}),
        ("search_location_name", {"query": "yosemity"}),
        ("calculate", {"expression": "100 + 200 * 3"}),
    ]  # fmt: skip
    source = "import json\nimport tools\n" + "".join(
        f"print(json.dumps(tools.{name}(**{args!r})))\n" for name, args in calls
    )
    recorded: list = []
    bridge, ctx = _bridge(compass_db, recorded)
    result = run(source, tools=bridge)
    assert result.ok, result
    registry, direct = compass_registry(), CompassContext.from_path(compass_db)
    expected = [json.loads(json.dumps(registry.call(n, a, direct).payload())) for n, a in calls]
    assert [json.loads(line) for line in result.stdout.splitlines()] == expected
    assert recorded == [(n, a, "error" not in e) for (n, a), e in zip(calls, expected, strict=True)]
    assert result.tool_calls == len(calls)


def test_tool_bindings_in_sandbox(compass_db):
    source = (
        "import inspect, json, tools\n"
        "print(json.dumps({\n"
        "  'names': tools.__all__,\n"
        "  'sig': str(inspect.signature(tools.get_weekday)),\n"
        "  'doc': tools.get_weekday.__doc__,\n"
        "  'positional': tools.get_weekday('2025-08-01'),\n"
        "  'unknown': tools.get_weekday(day='2025-08-01'),\n"
        "  'too_many': tools.get_weekday('a', 'b'),\n"
        "  'missing': tools.search_hotel(location='Zion'),\n"
        "  'odd': tools.get_weekday({1, 2}),\n"
        "}))"
    )
    bridge, _ = _bridge(compass_db)
    result = run(source, tools=bridge)
    assert result.ok, result
    out = json.loads(result.stdout)
    assert out["names"] == compass_registry().names
    assert out["sig"] == "(date_str: str) -> dict"
    assert out["doc"].startswith("Return the weekday name of a date.")
    assert out["positional"] == {"date": "2025-08-01", "weekday": "Friday"}
    for key in ("unknown", "too_many", "missing", "odd"):
        assert out[key]["error"]["category"] == "parameter", key
    assert "signature: get_weekday(date_str: str)" in out["too_many"]["error"]["message"]


def test_forged_and_excess_tool_requests_are_answered_not_fatal(compass_db):
    source = (
        "import json, os, struct\nfrom tools import get_weekday\n"
        "fd = int(__import__('sys').argv[-1]) if False else None\n"
        "for i in range(5):\n"
        "    print(get_weekday('2025-08-01').get('weekday', 'limited'))\n"
    )
    bridge, _ = _bridge(compass_db)
    result = run(source, tools=bridge, limits=SandboxLimits(10, 2, tool_calls=3))
    assert result.ok and result.stdout.split() == ["Friday"] * 3 + ["limited"] * 2
    assert bridge.calls == 3


def test_notebook_lives_in_the_parent_context(compass_db):
    env = CompassToolSession(CompassContext.from_path(compass_db).conn)
    first = run("from tools import notebook\nprint(notebook(action='write', input_data='Zion'))",
                tools=env.tool_bridge("call_1"))  # fmt: skip
    assert first.ok and "written" in first.stdout and env.context.notebook == ["Zion"]
    second = run("from tools import notebook\nprint(notebook(action='list_all'))",
                 tools=env.tool_bridge("call_2"))  # fmt: skip
    assert second.ok and "'note': 'Zion'" in second.stdout
    assert [c.parent for c in env.calls] == ["call_1", "call_2"]


def test_invalid_unicode_from_code_is_repaired_and_recorded(compass_db):
    """A lone surrogate in an argument from code must not abort writing the episode."""
    env = CompassToolSession(CompassContext.from_path(compass_db).conn)
    source = (
        "from tools import notebook\nprint(notebook(action='write', input_data='Zion \\ud83d'))"
    )
    result = run(source, tools=env.tool_bridge("call_1"))
    (call,) = env.calls
    assert result.ok and call.ok and env.context.notebook == ["Zion \ufffd"]
    assert call.arguments["input_data"] == "Zion \ufffd"
    assert [(r.kind, r.where, r.count) for r in call.repairs] == [
        ("invalid_unicode", "arguments", 1)
    ]
    call.model_dump_json().encode("utf-8")  # writable as UTF-8


@pytest.mark.slow
def test_episode_goes_on_after_failures(compass_db):
    bridge, _ = _bridge(compass_db)
    workspace = Workspace()
    failures = [
        "import os\nwhile True:\n    os.fork()",
        "while True:\n    pass",
        "x = bytearray(10**10)",
        "raise RuntimeError('boom')",
        "import os\nos.kill(os.getpid(), 11)",
        "import sys\nsys.setrecursionlimit(10**7)\nf = lambda: f()\nf()",
    ]
    for source in failures:
        result = run(source, tools=bridge, workspace=workspace, limits=SandboxLimits(5, 1))
        assert not result.ok
    result = run("from tools import get_weekday\nprint(get_weekday('2025-08-02'))", tools=bridge)
    assert result.ok and "Saturday" in result.stdout


def test_describe_tools_and_signatures():
    registry = compass_registry()
    text = describe_tools(registry)
    assert all(f"- {name}(" in text for name in registry.names)
    assert "search_hotel(location: str, start_date: str, end_date: str, num_guests: int" in text
    sig = tool_signature(registry["notebook"])
    assert list(sig.parameters) == ["action", "input_data", "index", "page"]
    assert sig.parameters["index"].default is None
    assert sig.parameters["page"].default == 1  # list_all's page (issue 35: never cut)


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


def test_invalid_limits():
    for bad in ({"memory_bytes": 1 << 20}, {"disk_bytes": 10}, {"processes": 1}):
        with pytest.raises(ValueError):
            SandboxLimits(**bad)
