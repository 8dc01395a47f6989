"""What the command groups share: the suite argument, common options, suite options and JSON
output. Suites come from the registry; no command names one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError

from travelgym.clikit import FiniteFloat, OutputPath
from travelgym.core.registry import broken_suites, capable, get_suite, suite_names


class SuiteChoice(click.Choice):
    """A choice of the installed suites that have ``capability`` (all of them for ``None``);
    an installed suite without it is refused by name."""

    def __init__(self, capability: str | None = None) -> None:
        super().__init__(suite_names() if capability is None else capable(capability))
        self.capability = capability

    def convert(self, value, param, ctx):
        broken = broken_suites()
        if value in broken:
            self.fail(f"suite {value!r} is installed but did not load: {broken[value]}", param, ctx)
        if self.capability is not None and value in suite_names() and value not in self.choices:
            self.fail(f"{value} does not support {self.capability} (suites that do: "
                      f"{', '.join(self.choices) or 'none'})", param, ctx)  # fmt: skip
        return super().convert(value, param, ctx)


def suite_argument(capability: str | None = None):
    """The ``SUITE`` argument: a choice of the installed suites (those with ``capability``)."""
    return click.argument("suite", type=SuiteChoice(capability))


def data_dir_option(func):
    """The ``--data-dir`` option every data-touching subcommand shares."""
    return click.option(
        "--data-dir",
        type=OutputPath("dir"),
        default=None,
        help="Data directory (default: $TRAVELGYM_DATA_DIR or the per-user data directory).",
    )(func)


def seed_option(func):
    return click.option(
        "--seed",
        type=click.IntRange(min=0),
        default=0,
        show_default=True,
        help="Seed of the generated database.",
    )(func)


def scale_option(func):
    from travelgym.clikit import RuledOption

    return click.option(
        "--scale",
        cls=RuledOption,
        suite_option=True,
        type=click.Choice(["small", "full"]),
        default="small",
        show_default=True,
        help="database scale (small: ~80-120 POIs per category and city; full: the paper's "
        "Table 6 counts).",
    )(func)


def unsafe_sandbox_option(func):
    return click.option(
        "--unsafe-sandbox",
        is_flag=True,
        help="Where bubblewrap cannot run, run model-written code WITHOUT an operating-system "
        "sandbox (unsafe: the code can read the answer key; recorded in the run).",
    )(func)


def _base_urls(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]):
    """``--base-url`` given 0, 1 or more times -> ``None``, the URL, or a tuple of URLs; an empty
    URL, one that is not http(s) or one given twice is a usage error."""
    from travelgym.llm.endpoints import base_url_value

    try:
        return base_url_value(list(value)) if value else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


def base_url_option(help: str = "OpenAI-compatible endpoint (default: env)."):
    """The ``--base-url`` option: repeatable, for several servers of one model (the client
    balances its requests over them by requests in flight); the command receives ``None``, one
    URL, or a tuple of URLs."""
    return click.option("--base-url", multiple=True, callback=_base_urls, metavar="URL",
                        help=help + " Repeat it for several servers of one model (balanced by "
                        "requests in flight).")  # fmt: skip


def allow_unsafe_sandbox(flag: bool) -> None:
    """Apply ``--unsafe-sandbox`` (with its warning)."""
    from travelgym import sandbox

    sandbox.allow_unsafe(flag)
    if flag:
        click.echo("warning: --unsafe-sandbox: where bubblewrap is unavailable, model-written "
                   "code runs without an operating-system boundary", err=True)  # fmt: skip


def suite_options(suite_name: str, **given: Any):
    """``(suite, its options)`` from the flags given: the fields of the suite's ``Options``
    model that were given (``None``: not given); a value it refuses is a usage error."""
    suite = get_suite(suite_name)
    fields = suite.Options.model_fields
    try:
        return suite, suite.options(**{k: v for k, v in given.items() if k in fields})
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        flag = "--" + "-".join(str(p) for p in first["loc"]).replace("_", "-")
        raise click.UsageError(f"{flag}: {first['msg']}") from None


def _declared(command: str) -> dict[str, list]:
    """Flag name -> the suites' :func:`~travelgym.core.suite.suite_flag` fields declaring it
    for ``command``."""
    from travelgym.core.registry import all_suites
    from travelgym.core.suite import FLAG_KEY

    found: dict[str, list] = {}
    for suite in all_suites():
        for name, info in suite.Options.model_fields.items():
            meta = (info.json_schema_extra or {}).get(FLAG_KEY) if isinstance(
                info.json_schema_extra, dict) else None  # fmt: skip
            if meta and command in meta["commands"]:
                found.setdefault(name, []).append((info, meta))
    return found


def _literals(annotation: Any) -> list[Any] | None:
    """The values of a ``Literal`` annotation (inside ``X | None`` too), else ``None``."""
    import typing

    if typing.get_origin(annotation) is typing.Literal:
        return list(typing.get_args(annotation))
    inner = [a for a in typing.get_args(annotation) if a is not type(None)]
    return _literals(inner[0]) if len(inner) == 1 else None


def _base(annotation: Any) -> Any:
    import typing

    inner = [a for a in typing.get_args(annotation) if a is not type(None)]
    return inner[0] if typing.get_args(annotation) and len(inner) == 1 else annotation


class _PathText(click.Path):
    """An existing path, passed on as text (suite options are stored in JSON manifests)."""

    def __init__(self, kind: str) -> None:
        super().__init__(exists=True, file_okay=kind != "dir", dir_okay=kind != "file",
                         readable=True)  # fmt: skip

    def convert(self, value, param, ctx):
        return str(Path(super().convert(value, param, ctx)).resolve())


def _click_type(fields: list) -> Any:
    info, meta = fields[0]
    if meta.get("path"):
        return _PathText(meta["path"])
    choices: list[str] = []
    for field_info, _ in fields:
        for value in _literals(field_info.annotation) or []:
            if str(value) not in choices:
                choices.append(str(value))
    if choices:
        return click.Choice(choices)
    base = _base(info.annotation)
    if base is float:
        return FiniteFloat()
    return base if base is int else str


def option_choices(name: str) -> list[str]:
    """The values the registered suites accept for their option ``name`` (a ``Literal``
    field), in the order they declare them: the choices of a flag that several suites share."""
    from travelgym.core.registry import all_suites

    choices: list[str] = []
    for suite in all_suites():
        info = suite.Options.model_fields.get(name)
        for value in (_literals(info.annotation) or []) if info is not None else []:
            if str(value) not in choices:
                choices.append(str(value))
    return choices


def suite_flags(command: str):
    """Decorator (below ``@click.command``): a :class:`~travelgym.clikit.RuledOption` for every
    flag a registered suite declares for ``command`` with
    :func:`~travelgym.core.suite.suite_flag` and the command does not already have; the
    command receives them as keyword arguments (``None`` when not given)."""
    from travelgym.clikit import RuledOption

    def decorate(func):
        have = {p.name for p in getattr(func, "__click_params__", [])}
        for name, fields in sorted(_declared(command).items(), reverse=True):
            if name in have:
                continue
            info, meta = fields[0]
            is_flag = _base(info.annotation) is bool
            extra = {"is_flag": True} if is_flag else {"type": _click_type(fields)}
            func = click.option("--" + name.replace("_", "-"), name, cls=RuledOption,
                                suite_option=True, default=None, help=info.description,
                                metavar=meta.get("metavar"), **extra)(func)  # fmt: skip
        return func

    return decorate


def emit_json(obj) -> None:
    click.echo(json.dumps(obj, indent=2, sort_keys=False))
