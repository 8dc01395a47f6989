"""The command line a published file records: what was asked, never where.

A dataset card says how its rows were made so that anyone can make them again; the directories
of the machine that made them (a home directory, a user name, a scratch disk) say nothing
about the rows and should not leave that machine. :func:`recorded_command` rebuilds the
command from the options click parsed, each path replaced by a placeholder.
"""

from __future__ import annotations

import shlex
from typing import Any

import click
from click.core import ParameterSource

GIVEN = (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


def placeholder(kind: click.Path) -> str:
    """What stands for a path of this click type: ``DIR``, ``FILE`` or ``PATH``."""
    if not kind.file_okay:
        return "DIR"
    return "FILE" if not kind.dir_okay else "PATH"


def _values(param: click.Parameter, value: Any) -> list[str]:
    """The words of one parameter's value (paths as their placeholder)."""
    items = list(value) if param.multiple or param.nargs != 1 else [value]
    if isinstance(param.type, click.Path):
        return [placeholder(param.type) for _ in items]
    return [",".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v) for v in items]


def _words(param: click.Parameter, value: Any) -> list[str]:
    if isinstance(param, click.Argument):
        return _values(param, value)
    assert isinstance(param, click.Option)
    if param.count:
        return param.opts[:1] * int(value or 0)
    if param.is_bool_flag:
        return (param.opts if value else param.secondary_opts)[:1]
    if param.is_flag:  # a flag that gives a value of its own
        return param.opts[:1] if value == param.flag_value else []
    words: list[str] = []
    if param.multiple:
        for item in _values(param, value):
            words += [param.opts[0], item]
        return words
    return [param.opts[0], *_values(param, value)]


def recorded_command(ctx: click.Context, program: str = "travelgym") -> str:
    """``ctx``'s command as a shell line: its command path under ``program``, then every
    parameter the user gave (on the command line or through its environment variable) in the
    command's order, a path's value replaced by ``DIR``, ``FILE`` or ``PATH``."""
    names: list[str] = []
    node: click.Context | None = ctx
    while node is not None and node.parent is not None:
        names.append(node.info_name or "")
        node = node.parent
    words = [program, *reversed(names)]
    for param in ctx.command.params:
        if param.name is None or ctx.get_parameter_source(param.name) not in GIVEN:
            continue
        value = ctx.params.get(param.name)
        if value is None or (param.multiple and not value):
            continue
        words += _words(param, value)
    return shlex.join(words)
