"""What the command groups share: the suite argument, common options, suite options and JSON
output. Suites come from the registry; no command names one."""

from __future__ import annotations

import json
from typing import Any

import click
from pydantic import ValidationError

from travelgym.clikit import OutputPath
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


def emit_json(obj) -> None:
    click.echo(json.dumps(obj, indent=2, sort_keys=False))
