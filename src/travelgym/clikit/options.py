"""Options that declare which suite they belong to, which options they need and which they
cannot be combined with, checked in one place before a command runs.

Declare the rule on the option itself::

    @click.option("--max-turns", cls=RuledOption, suite_option=True, ...)
    @click.option("--retry-errors", cls=RuledOption, is_flag=True, requires=["resume"])
    @click.option("--level", cls=RuledOption, suite_option=True, conflicts=["task_ids"])

A ``suite_option`` belongs to the suites whose ``Options`` model has a field of the option's
name (:class:`travelgym.core.SuiteOptions`): the suites say which flags are theirs, the command
line never names a suite.

on a command made with ``cls=RuledCommand``: a rule broken by what the user typed is a usage
error (exit status 2) naming both options, instead of an option silently ignored. Rules only
look at options given on the command line (or by environment), never at defaults.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click
from click.core import ParameterSource

SUITE_PARAM = "suite"


class RuledOption(click.Option):
    """A click option with ``suite_option`` (it belongs to the suites whose options have its
    field; otherwise to every suite) or ``owners`` (the suites it belongs to, named), ``requires`` and ``conflicts`` (names of other parameters
    of the command), and ``counterpart`` (the option doing its job in the other suites, named in
    the error)."""

    def __init__(self, *args: Any, suite_option: bool = False, requires: Sequence[str] = (),
                 conflicts: Sequence[str] = (), counterpart: str | None = None,
                 owners: Sequence[str] | None = None, **kwargs: Any) -> None:  # fmt: skip
        super().__init__(*args, **kwargs)
        self.suite_option = suite_option or owners is not None
        self.owners = None if owners is None else tuple(owners)
        self.counterpart = counterpart
        self.requires = tuple(requires)
        self.conflicts = tuple(conflicts)

    @property
    def suites(self) -> tuple[str, ...]:
        """The suites this option applies to (empty: every suite)."""
        if not self.suite_option:
            return ()
        if self.owners is not None:
            return self.owners
        from travelgym.core.registry import all_suites

        return tuple(s.name for s in all_suites() if self.name in s.Options.model_fields)


def is_used(ctx: click.Context, name: str) -> bool:
    """Whether parameter ``name`` was given (not left at its default) with a value that does
    something (not ``None``, ``False`` or empty)."""
    source = ctx.get_parameter_source(name)
    if source in (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP):
        return False
    value = ctx.params.get(name)
    return not (value is None or value is False or value == () or value == [])


def _flag(ctx: click.Context, name: str) -> str:
    for param in ctx.command.params:
        if param.name == name:
            opts = getattr(param, "opts", None) or [name]
            return max(opts, key=len)
    return name


def broken_rule(ctx: click.Context) -> str | None:
    """The first rule of the command's :class:`RuledOption` parameters that the given options
    break, as a message, or ``None``."""
    suite = ctx.params.get(SUITE_PARAM)
    for param in ctx.command.params:
        if not isinstance(param, RuledOption) or not param.name or not is_used(ctx, param.name):
            continue
        flag = _flag(ctx, param.name)
        if suite is not None and param.suites and suite not in param.suites:
            hint = f" ({suite} takes {_flag(ctx, param.counterpart)})" if param.counterpart else ""
            return f"{flag} applies to {' and '.join(param.suites)} only, not to {suite}{hint}"
        for other in param.requires:
            if not is_used(ctx, other):
                return f"{flag} needs {_flag(ctx, other)}"
        for other in param.conflicts:
            if is_used(ctx, other):
                return f"{flag} cannot be combined with {_flag(ctx, other)}"
    return None


class RuledCommand(click.Command):
    """A command that checks its :class:`RuledOption` rules before running, and lists the
    options that belong to some suites only in one help section per suite."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Common options first, then a section of options per suite (``compass options``)."""
        common: list[tuple[str, str]] = []
        by_suite: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
            if record is None:
                continue
            suites = param.suites if isinstance(param, RuledOption) else ()
            if suites:
                by_suite.setdefault(" and ".join(suites), []).append(record)
            else:
                common.append(record)
        with formatter.section("Options"):
            formatter.write_dl(common)
        for suites, records in by_suite.items():
            with formatter.section(f"{suites} options"):
                formatter.write_dl(records)

    def invoke(self, ctx: click.Context) -> Any:
        """Raise a usage error for a broken rule, else run the command."""
        problem = broken_rule(ctx)
        if problem is not None:
            raise click.UsageError(problem, ctx)
        return super().invoke(ctx)


def comma_separated(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> list[str] | None:
    """Click callback: ``"a, b,c"`` -> ``["a", "b", "c"]``; a value naming nothing (``",,,"``)
    or naming an item twice is a usage error."""
    if value is None:
        return None
    items = [item.strip() for item in value.split(",") if item.strip()]
    if not items:
        raise click.BadParameter(f"{value!r} names nothing", ctx, param)
    repeated = sorted({item for item in items if items.count(item) > 1})
    if repeated:
        raise click.BadParameter(f"{', '.join(repeated)} given more than once", ctx, param)
    return items


def distinct(ctx: click.Context, param: click.Parameter, value: tuple[Any, ...]) -> tuple[Any, ...]:
    """Click callback of a repeatable option: a value given more than once is a usage error
    (a task solved, or a file read, twice)."""
    repeated = sorted({str(v) for v in value if value.count(v) > 1})
    if repeated:
        raise click.BadParameter(f"{', '.join(repeated)} given more than once", ctx, param)
    return value


def repeated_option(
    command: click.Command, parent: click.Context, args: Sequence[str]
) -> str | None:
    """The first option of ``command`` that takes one value and is given more than once in
    ``args``, as a message, or ``None`` (click would keep the last value and drop the others
    silently: ``--tasks a --tasks b`` would run ``b`` alone). Flags and options that take many
    values are left alone; a parse error is left to the command's own parsing."""
    parser = command.make_parser(click.Context(command, parent=parent, resilient_parsing=True))
    try:
        order = parser.parse_args(list(args))[2]
    except click.UsageError:
        return None
    seen: set[str] = set()
    for param in order:
        if not isinstance(param, click.Option) or param.is_flag or param.multiple or param.count:
            continue
        if param.name in seen:
            return f"{max(param.opts, key=len)} is given more than once; give it once"
        seen.add(param.name or "")
    return None
