"""What the command groups share: the suite argument, common options, suite options and JSON
output. Suites come from the registry; no command names one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError

from travelgym.clikit import DataDirPath, FiniteFloat, InputPath, OutputPath
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
        type=DataDirPath(),
        default=None,
        help="Data directory (default: $TRAVELGYM_DATA_DIR or the per-user data directory).",
    )(func)


def int_option(*decls: str, at_least: int, at_most: int | None = None,
               default: int | None = None, help: str | None = None):  # fmt: skip
    """A ``click.option`` taking a whole number from ``at_least`` (to ``at_most``); its default,
    where it has one, is shown in the help."""
    return click.option(*decls, type=click.IntRange(at_least, at_most), default=default,
                        show_default=True, help=help)  # fmt: skip


def json_option(help: str):
    """The ``--json`` flag (``as_json``): print the command's result as JSON."""
    return click.option("--json", "as_json", is_flag=True, help=help)


def plots_option(figures: str):
    """``--plots DIR``: write ``figures`` (the help's words for them) into DIR."""
    return click.option("--plots", type=OutputPath("dir"), default=None,
                        help=f"Write {figures} into this directory.")  # fmt: skip


def db_file_option(verb: str):
    """``--db``: an existing SQLite file the command uses (``verb``: what it does with it)
    instead of the generated database."""
    return click.option("--db", type=InputPath(sqlite=True), default=None,
                        help=f"{verb} this database file instead of the generated one.")  # fmt: skip


def seed_option(func):
    """The ``--db-seed`` option of the generated database (``seed``), named as ``run``,
    ``chains``, ``export`` and ``train`` name it; ``--seed`` is kept as its other name."""
    return int_option("--db-seed", "--seed", "seed", at_least=0, default=0,
                      help="Seed of the generated database.")(func)  # fmt: skip


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


def _usage_error(exc: ValidationError) -> click.UsageError:
    """A model's refusal of a flag's value as a usage error naming the flag."""
    first = exc.errors(include_url=False)[0]
    flag = "--" + "-".join(str(p) for p in first["loc"]).replace("_", "-")
    return click.UsageError(f"{flag}: {first['msg']}")


def suite_options(suite_name: str, **given: Any):
    """``(suite, its options)`` from the flags given: the fields of the suite's ``Options``
    model that were given (``None``: not given); a value it refuses is a usage error."""
    suite = get_suite(suite_name)
    fields = suite.Options.model_fields
    try:
        return suite, suite.options(**{k: v for k, v in given.items() if k in fields})
    except ValidationError as exc:
        raise _usage_error(exc) from None


def command_options(suite_name: str, command: str, **given: Any):
    """``(suite, its options of command)``: the suite flags of ``command`` given (``None``: not
    given; see :func:`suite_flags`) read by the suite's model of that command
    (:func:`~travelgym.core.options.command_model`). A flag the suite does not take (another
    suite's) or a value it refuses is a usage error naming it."""
    from travelgym.core.options import command_model

    suite = get_suite(suite_name)
    model = command_model(suite, command)
    values = {k: v for k, v in given.items() if v is not None}
    for name in values:
        if name not in model.model_fields:
            owners = " and ".join(s for s, _, _ in _declared(command).get(name, []))
            raise click.UsageError(f"--{name.replace('_', '-')} applies to {owners} only, "
                                   f"not to {suite_name}")  # fmt: skip
    try:
        return suite, model(**values)
    except ValidationError as exc:
        raise _usage_error(exc) from None


def declared_names(command: str) -> frozenset[str]:
    """The parameter names of the suite flags of ``command`` (those :func:`suite_flags` adds)."""
    return frozenset(_declared(command))


def settings_option(func):
    """``-T/--set KEY=VALUE`` (repeatable): any option of the chosen suite's ``Options`` by
    name, as inspect_ai's ``-T`` takes task arguments (the flags say the same per suite)."""
    return click.option("-T", "--set", "settings", multiple=True, metavar="KEY=VALUE",
                        help="A suite option by name, as the suite's flags take it "
                        "(max_turns=2, level=1, ...); repeatable.")(func)  # fmt: skip


def parse_settings(suite: Any, settings: tuple[str, ...],
                   flags: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """``--set KEY=VALUE`` pairs as the suite's options (``max-turns`` and ``max_turns`` alike;
    the values are validated by the suite's ``Options`` model later), over the suite ``flags``
    given (``None``: not given). A usage error for a pair without ``=``, a key that is not one
    of the suite's options, or one given twice (by ``--set`` or by its flag too)."""
    fields = suite.Options.model_fields
    out = {k: v for k, v in (flags or {}).items() if v is not None}
    for pair in settings:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise click.UsageError(f"--set {pair!r}: use KEY=VALUE")
        if key not in fields:
            raise click.UsageError(f"--set {key}: {suite.name} has no option {key!r} (its "
                                   f"options: {', '.join(fields) or 'none'})")  # fmt: skip
        if key in out:
            raise click.UsageError(f"--set {key}: given twice")
        out[key] = value
    return out


def _declared(command: str) -> dict[str, list[tuple[str, Any, dict[str, Any]]]]:
    """Flag name -> ``(suite name, field, metadata)`` of each suite declaring it for ``command``
    with :func:`~travelgym.core.suite.suite_flag`, in listing order."""
    from travelgym.core.options import declared_flags, suite_flag_models
    from travelgym.core.registry import all_suites

    found: dict[str, list] = {}
    for suite in all_suites():
        for model in suite_flag_models(suite):
            for name, (info, meta) in declared_flags(model).items():
                if command in meta["commands"]:
                    found.setdefault(name, []).append((suite.name, info, meta))
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


class _PathText(InputPath):
    """An existing path, passed on as text (suite options are stored in JSON manifests)."""

    def __init__(self, kind: str) -> None:
        super().__init__(file_okay=kind != "dir", dir_okay=kind != "file")

    def convert(self, value, param, ctx):
        return str(Path(super().convert(value, param, ctx)).resolve())


def _one_type(info: Any, meta: dict[str, Any]) -> Any:
    """The click type of one suite's flag field."""
    if meta.get("path"):
        return _PathText(meta["path"])
    values = _literals(info.annotation)
    if values is not None:
        return click.Choice([str(v) for v in values])
    base = _base(info.annotation)
    if base is float:
        return FiniteFloat()
    if base is int:
        bounds = {"min": None, "max": None}
        for rule in info.metadata:
            bounds["min"] = getattr(rule, "ge", bounds["min"])
            bounds["max"] = getattr(rule, "le", bounds["max"])
        return click.IntRange(**bounds) if any(v is not None for v in bounds.values()) else int
    return str


def _click_type(fields: list) -> Any:
    """The click type of a flag some suites declare: theirs when they agree (the union of their
    choices when each is a choice); text otherwise, which the chosen suite's model reads."""
    types = [_one_type(info, meta) for _, info, meta in fields]
    if all(isinstance(t, click.Choice) and not isinstance(t, click.Path) for t in types):
        choices: list[str] = []
        for t in types:
            choices += [c for c in t.choices if c not in choices]
        return click.Choice(choices)
    if all(repr(t) == repr(types[0]) for t in types):
        return types[0]
    return click.STRING


def _help(fields: list) -> str:
    """The help of a flag: the one text its suites share, else each suite's, named."""
    texts = []
    for suite, info, _ in fields:
        text = (info.description or "").strip()
        shown = info.default not in (None, False) and not info.is_required()
        text += f" [default: {info.default}]" if shown else ""
        texts.append((suite, text))
    if len({t for _, t in texts}) == 1:
        return texts[0][1]
    return " ".join(f"{suite}: {text}" for suite, text in texts)


def suite_flags(command: str):
    """Decorator, right below ``@click.command`` (above every other option, so that it sees
    them all): a :class:`~travelgym.clikit.RuledOption` for every
    flag the registered suites declare for ``command`` with
    :func:`~travelgym.core.suite.suite_flag`; the command receives them as keyword arguments
    (``None`` when not given). A suite declaring a flag named like one of the command's own
    options is set aside with the clash named (never silently shadowed)."""
    from travelgym.clikit import RuledOption
    from travelgym.core.registry import set_aside

    def decorate(func):
        have = {p.name for p in getattr(func, "__click_params__", [])}
        for name, fields in _declared(command).items():
            for suite, _, _ in fields if name in have else ():
                flag = "--" + name.replace("_", "-")
                set_aside(suite, f"its flag {flag} clashes with travelgym's own {flag} of "
                          f"`{command}`: rename it")  # fmt: skip
        declared = _declared(command)
        for name in sorted(declared, reverse=True):
            fields = declared[name]
            _, info, meta = fields[0]
            extra = ({"is_flag": True} if _base(info.annotation) is bool
                     else {"type": _click_type(fields)})  # fmt: skip
            rules = {key: sorted({x for _, _, m in fields for x in m.get(key) or ()})
                     for key in ("conflicts", "requires")}  # fmt: skip
            counterpart = next((m["counterpart"] for _, _, m in fields if m.get("counterpart")),
                               None)  # fmt: skip
            func = click.option("--" + name.replace("_", "-"), name, cls=RuledOption,
                                owners=[suite for suite, _, _ in fields], default=None,
                                help=_help(fields), metavar=meta.get("metavar"),
                                counterpart=counterpart, **rules, **extra)(func)  # fmt: skip
        return func

    return decorate


def emit_json(obj) -> None:
    click.echo(json.dumps(obj, indent=2, sort_keys=False))
