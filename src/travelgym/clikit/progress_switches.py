"""One rule for build progress on the whole command line: every command takes
``--no-progress``, which hides the progress bars of the builds the command starts
(:mod:`travelgym.progress`); ``--json`` hides them too unless stderr is a terminal (a script
reading the JSON gets no bars on its stderr; a person waiting on a first build sees it, the
JSON on stdout untouched). :class:`~travelgym.clikit.errors.GuardedGroup` applies it to each
command as it joins a group, so no command can miss it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from travelgym import progress

HIDING = ("--no-progress", "--json")


def add_progress_switches(command: click.Command) -> None:
    """Give ``command`` a ``--no-progress`` flag when it has none, and make that flag and its
    ``--json`` flag hide build progress as soon as they are read."""
    given = {opt for param in command.params for opt in getattr(param, "opts", ())}
    if "--no-progress" not in given:
        command.params.append(click.Option(["--no-progress"], is_flag=True, expose_value=False,
                                           help="No progress bars of data builds."))  # fmt: skip
    for param in command.params:
        hides = isinstance(param, click.Option) and param.is_flag and set(param.opts) & set(HIDING)
        if hides and not getattr(param.callback, "hides_progress", False):
            param.callback = _hiding(param.callback)


def _hiding(callback: Callable[..., Any] | None) -> Callable[..., Any]:
    def hide(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value and ("--no-progress" in param.opts or not _stderr_is_a_terminal()):
            progress.set_enabled(False)
        return callback(ctx, param, value) if callback is not None else value

    hide.hides_progress = True  # type: ignore[attr-defined]
    return hide


def _stderr_is_a_terminal() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (OSError, ValueError):
        return False
