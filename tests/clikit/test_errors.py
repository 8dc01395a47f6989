"""The error boundary: a user's or the machine's error is one line and exit status 1, a bug
keeps its traceback."""

from __future__ import annotations

import builtins
import errno
import importlib
import json
import signal
import sqlite3
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from travelgym.clikit.errors import DEBUG_ENV, GuardedGroup, user_error_message
from travelgym.jsonl import JsonLinesError

# Python 3.11's built-in, or on 3.10 the backport anyio depends on
ExceptionGroup = (
    getattr(builtins, "ExceptionGroup", None)
    or importlib.import_module("exceptiongroup").ExceptionGroup
)


def _toy(raise_it) -> click.Group:
    @click.group(cls=GuardedGroup)
    def toy() -> None:
        """A group."""

    @toy.group()
    def nested() -> None:
        """A nested group: the boundary covers it too."""

    @nested.command()
    def act() -> None:
        raise_it()

    return toy


def _raise(exc: BaseException):
    def raise_it():
        raise exc

    return raise_it


def _deep_json():
    json.loads("[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize(
    ("raise_it", "expected"),
    [
        (_raise(OSError(errno.ENOSPC, "No space left on device", "/runs/x/episodes.jsonl")),
         "/runs/x/episodes.jsonl: No space left on device"),
        (_raise(PermissionError(errno.EACCES, "Permission denied", "/ro/out.html")),
         "/ro/out.html: Permission denied"),
        (_raise(OSError(errno.EROFS, "Read-only file system")), "Read-only file system"),
        (_raise(OSError(errno.EXDEV, "Invalid cross-device link", "/a", None, "/b")),
         "/a -> /b: Invalid cross-device link"),
        (_deep_json, "input nested too deeply"),
        (lambda: json.loads("{oops"), "not valid JSON: Expecting property name"),
        (lambda: b"\xff".decode("utf-8"), "invalid text: 'utf-8' codec can't decode"),
        (_raise(MemoryError()), "out of memory"),
        (_raise(sqlite3.DatabaseError("database disk image is malformed")),
         "a damaged database: database disk image is malformed"),
        (_raise(JsonLinesError("a.jsonl:3: not valid JSON\n(second line)")),
         "a.jsonl:3: not valid JSON (second line)"),
    ],
)  # fmt: skip
def test_user_and_machine_errors_are_one_line_and_exit_1(raise_it, expected, monkeypatch):
    monkeypatch.delenv(DEBUG_ENV, raising=False)
    result = CliRunner().invoke(_toy(raise_it), ["nested", "act"])
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and expected in lines[0], lines


@pytest.mark.parametrize(
    "exc",
    [TypeError("bug"), KeyError("bug"), AttributeError("bug"),
     sqlite3.OperationalError("no such column: prize")],  # a query's mistake is a bug
)  # fmt: skip
def test_a_bug_keeps_its_traceback(exc):
    result = CliRunner().invoke(_toy(_raise(exc)), ["nested", "act"])
    assert result.exception is exc  # not turned into a message: the runner sees the bug itself


def test_debug_shows_the_traceback_of_a_user_error(monkeypatch):
    monkeypatch.setenv(DEBUG_ENV, "1")
    exc = OSError(errno.ENOSPC, "No space left on device")
    result = CliRunner().invoke(_toy(_raise(exc)), ["nested", "act"])
    assert result.exception is exc


def test_broken_pipe_is_left_to_click_and_groups_are_judged_by_their_members():
    assert user_error_message(BrokenPipeError(errno.EPIPE, "Broken pipe")) is None
    group = ExceptionGroup("run", [OSError(errno.EIO, "Input/output error", "f"), MemoryError()])
    assert user_error_message(group) == "f: Input/output error; out of memory"
    assert user_error_message(ExceptionGroup("run", [OSError(5, "x"), TypeError("bug")])) is None
    assert len(user_error_message(OSError(errno.EIO, "x" * 5000))) <= 1000


def test_click_exception_messages_are_one_line():
    def raise_it():
        raise click.ClickException("1 validation error for Task\n  Invalid JSON\n    see docs")

    result = CliRunner().invoke(_toy(raise_it), ["nested", "act"])
    assert result.exit_code == 1
    assert result.output == "Error: 1 validation error for Task Invalid JSON see docs\n"


def test_another_suites_database_is_one_line(tmp_path):
    """``stats behavior2trip --db <a COMPASS database>`` ended in a traceback ("no such table:
    cities")."""
    import sqlite3

    from click.testing import CliRunner

    from travelgym.cli import main

    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE parks (park_id TEXT)")
    result = CliRunner().invoke(main, ["stats", "behavior2trip", "--db", str(other)])
    assert result.exit_code == 1, result.output
    line = result.output.strip()
    assert line.startswith("Error: not a database of this suite (no such table: ")
    assert line.endswith("): give its own --db file") and len(line.splitlines()) == 1


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_whose_exception_a_library_wraps_is_still_a_stop(sig):
    """SIGTERM (or Ctrl-C) while pydantic-core serialised JSON: the handler's exception was
    wrapped in a ``PydanticSerializationError`` and shown as a bug's traceback. A signal this
    command line received ends it as the signal does, whatever wraps its exception."""
    from tests.runner.faults import child_env

    code = (
        "import os, signal, click\n"
        "from pydantic import BaseModel, field_serializer\n"
        "from travelgym.cli import main\n"
        "class Slow(BaseModel):\n"
        "    x: int\n"
        "    @field_serializer('x')\n"
        "    def s(self, v):\n"
        f"        os.kill(os.getpid(), signal.{sig})\n"
        "        for _ in range(10**7): pass\n"
        "        return v\n"
        "@main.command('probe')\n"
        "def probe():\n"
        "    click.echo(Slow(x=1).model_dump_json())\n"
        "main(['probe'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=child_env(), timeout=60)  # fmt: skip
    assert done.returncode == 128 + signal.Signals[sig], done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"interrupted ({sig}): stopped before finishing; what was built is kept"
    ]
