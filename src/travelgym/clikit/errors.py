"""The command line's error boundary.

A user's mistake (a bad file, a conflicting flag) or the machine's state (a full disk, a
read-only directory, a device where a file belongs) ends a command with one line and exit
status 1; a genuine bug still shows its traceback, so it can be reported and fixed. Which
errors count as the user's or the machine's is decided by :func:`user_error_message`: every
``OSError`` (but a broken pipe, which click handles), input nested beyond the recursion limit,
memory exhaustion, undecodable text or JSON, a damaged SQLite file, and travelgym's own error types whose messages are
written for users. Set ``TRAVELGYM_DEBUG=1`` to see the traceback of any of them.
"""

from __future__ import annotations

import builtins
import errno
import json
import os
import signal
import sqlite3
import sys
from typing import Any

import click

DEBUG_ENV = "TRAVELGYM_DEBUG"
# SQLite's errors about the file itself (not about a query): the machine's state
DAMAGED_DATABASE = ("file is not a database", "database disk image is malformed")
# a query of a table the database lacks: travelgym's own databases have every table, so the
# database given is another one (another suite's --db FILE, a file of another program)
FOREIGN_DATABASE = ("no such table",)
MAX_MESSAGE_CHARS = 1000
ASKS_FOR_HELP = "travelgym.asks_for_help"  # ctx.meta: the command line asks a command's help


class Terminated(SystemExit):
    """SIGTERM (or SIGHUP: the terminal closed, the ssh session dropped), raised in the main
    thread (:func:`exit_on_sigterm`) so that ``finally``
    blocks and exit handlers run: temporary build files are removed, a local model server this
    process started is stopped. Its code is the shell's, 128 + the signal's number."""


# the signals this command line turned into exceptions: a library that calls back into Python
# may wrap the exception in one of its own (pydantic-core's serializer turns it into a
# PydanticSerializationError), and the boundary must still see a stop, not a bug
_RECEIVED: list[int] = []


def exit_on_sigterm(signum: int, frame: object) -> None:
    """The SIGTERM and SIGHUP handler of a command: raise :class:`Terminated`."""
    _RECEIVED.append(signum)
    raise Terminated(128 + signum)


def interrupt_on_sigint(signum: int, frame: object) -> None:
    """The SIGINT handler of a command: raise ``KeyboardInterrupt``, as Python's own does."""
    _RECEIVED.append(signum)
    raise KeyboardInterrupt


def _stopped_line(signame: str) -> str:
    return f"\ninterrupted ({signame}): stopped before finishing; what was built is kept"


# travelgym's error types whose messages are written for users, by module, so that checking an
# exception against them imports nothing (an exception of a module never imported is none of
# them). A new user-facing error type belongs here.
USER_ERROR_TYPES = (
    "travelgym.core.errors:UserError",  # every suite's user-facing errors derive from it
    "travelgym.jsonl:JsonLinesError",
    "travelgym.llm.protocol:LLMError",
    "travelgym.runner.store:RunDirError",
    "travelgym.sandbox.config:SandboxUnavailable",
    "travelgym.training.extras:MissingExtraError",
    "travelgym.training.grpo_config:SettingsError",
    "travelgym.training.sft:ExportError",
    "travelgym.training.sft_train:SFTDataError",
)


def _exception_group_types() -> tuple[type[BaseException], ...]:
    builtin = getattr(builtins, "BaseExceptionGroup", None)  # Python 3.11+
    if builtin is not None:
        return (builtin,)
    try:  # Python 3.10: anyio's backport
        from exceptiongroup import BaseExceptionGroup
    except ImportError:
        return ()
    return (BaseExceptionGroup,)


_EXCEPTION_GROUPS = _exception_group_types()


def _user_error_types() -> tuple[type[BaseException], ...]:
    found = []
    for spec in USER_ERROR_TYPES:
        module_name, _, name = spec.partition(":")
        module = sys.modules.get(module_name)
        kind = getattr(module, name, None) if module is not None else None
        if isinstance(kind, type) and issubclass(kind, BaseException):
            found.append(kind)
    return tuple(found)


def _os_error_text(exc: OSError) -> str:
    reason = exc.strerror or str(exc) or type(exc).__name__
    names = [os.fsdecode(f) for f in (exc.filename, exc.filename2) if f is not None]
    return f"{' -> '.join(names)}: {reason}" if names else reason


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_MESSAGE_CHARS else line[: MAX_MESSAGE_CHARS - 3] + "..."


def user_error_message(exc: BaseException) -> str | None:
    """The one-line message for an error that is the user's or the machine's, or ``None`` for
    one that is a bug (to be shown with its traceback)."""
    if isinstance(exc, _EXCEPTION_GROUPS):
        messages = [user_error_message(e) for e in exc.exceptions]  # type: ignore[attr-defined]
        if not messages or any(m is None for m in messages):
            return None
        return _one_line("; ".join(dict.fromkeys(m for m in messages if m)))
    if isinstance(exc, OSError):
        return None if exc.errno == errno.EPIPE else _one_line(_os_error_text(exc))
    if isinstance(exc, RecursionError):
        return "input nested too deeply to process (the recursion limit was reached)"
    if isinstance(exc, MemoryError):
        return "out of memory"
    if isinstance(exc, json.JSONDecodeError):
        return _one_line(f"not valid JSON: {exc}")
    if isinstance(exc, UnicodeError):
        return _one_line(f"invalid text: {exc}")
    if isinstance(exc, sqlite3.DatabaseError) and str(exc).startswith(DAMAGED_DATABASE):
        return _one_line(f"a damaged database: {exc}")
    if isinstance(exc, sqlite3.OperationalError) and str(exc).startswith(FOREIGN_DATABASE):
        return _one_line(f"not a database of this suite ({exc}): give its own --db file")
    if isinstance(exc, _user_error_types()):
        return _one_line(str(exc) or type(exc).__name__)
    return None


class GuardedGroup(click.Group):
    """A click group whose commands (and nested groups) end on a user's or the machine's error
    with ``Error: <one line>`` and exit status 1 instead of a traceback, and refuse an option
    that takes one value given twice (a usage error) instead of keeping the last one."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        """Add ``cmd`` with the command line's progress switches (``--no-progress``, and
        ``--json`` hiding build progress too: :mod:`.progress_switches`)."""
        from travelgym.clikit.progress_switches import add_progress_switches

        if not isinstance(cmd, click.Group):
            add_progress_switches(cmd)
        super().add_command(cmd, name)

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:  # fmt: skip
        """The subcommand and its arguments, refused when they repeat an option of it."""
        from travelgym.clikit.options import repeated_option

        name, command, rest = super().resolve_command(ctx, args)
        given = rest[: rest.index("--")] if "--" in rest else rest
        if any(arg in ctx.help_option_names for arg in given):
            ctx.meta[ASKS_FOR_HELP] = True  # the group's callback leaves checks to the command
        if command is not None and not isinstance(command, click.Group):
            problem = repeated_option(command, ctx, rest)
            if problem is not None:
                raise click.UsageError(problem, click.Context(command, info_name=name, parent=ctx))
        return name, command, rest

    def invoke(self, ctx: click.Context) -> Any:
        """Invoke the chosen command, turning the errors :func:`user_error_message` knows into
        a :class:`click.ClickException`."""
        if ctx.parent is None:  # a new command line (tests run many in one process)
            from travelgym import progress

            progress.set_enabled(True)
            _RECEIVED.clear()
        try:
            return super().invoke(ctx)
        except click.exceptions.ClickException as exc:
            exc.message = _one_line(exc.message)  # e.g. a validation error's report
            raise
        except (click.exceptions.Abort, click.exceptions.Exit):
            raise
        except KeyboardInterrupt:
            if ctx.parent is not None:
                raise
            # the shell's convention for SIGINT (click says "Aborted!" with status 1)
            click.echo(_stopped_line("SIGINT"), err=True)
            raise click.exceptions.Exit(128 + signal.SIGINT) from None
        except Terminated as exc:
            if ctx.parent is None:  # said once, by the outermost group
                signum = (exc.code if isinstance(exc.code, int) else 128 + signal.SIGTERM) - 128
                click.echo(_stopped_line(signal.Signals(signum).name), err=True)
            raise
        except Exception as exc:
            if _RECEIVED:  # a signal's exception, wrapped by a library on its way here
                if ctx.parent is not None:
                    raise
                signum = _RECEIVED[0]
                click.echo(_stopped_line(signal.Signals(signum).name), err=True)
                raise click.exceptions.Exit(128 + signum) from None
            message = user_error_message(exc)
            if message is None or os.environ.get(DEBUG_ENV):
                raise
            raise click.ClickException(message) from exc
