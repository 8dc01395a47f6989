"""Option rules: suite ownership, needed companions and conflicts, judged on what was typed.
Which suite owns a ``suite_option`` comes from the suites' ``Options`` models (two toy suites
here, through a stand-in registry)."""

from __future__ import annotations

from types import SimpleNamespace

import click
import pytest
from click.testing import CliRunner

from travelgym.clikit import RuledCommand, RuledOption, comma_separated
from travelgym.core import SuiteOptions


class AlphaOptions(SuiteOptions):
    tier: int | None = None
    turns: int = 30


class BetaOptions(SuiteOptions):
    grade: str | None = None


@pytest.fixture(autouse=True)
def toy_suites(monkeypatch):
    suites = [SimpleNamespace(name="alpha", Options=AlphaOptions),
              SimpleNamespace(name="beta", Options=BetaOptions)]  # fmt: skip
    monkeypatch.setattr("travelgym.core.registry.all_suites", lambda: suites)


@click.command(cls=RuledCommand)
@click.argument("suite", type=click.Choice(["alpha", "beta"]))
@click.option("--ids", default=None, callback=comma_separated)
@click.option("--tier", cls=RuledOption, suite_option=True, conflicts=["ids"], counterpart="grade",
              type=int, default=None)  # fmt: skip
@click.option("--grade", cls=RuledOption, suite_option=True, default=None)
@click.option("--turns", cls=RuledOption, suite_option=True, type=int, default=30)
@click.option("--resume", is_flag=True)
@click.option("--retry", cls=RuledOption, requires=["resume"], is_flag=True)
def toy(suite, ids, tier, grade, turns, resume, retry) -> None:
    click.echo(f"ok {ids} {tier} {turns}")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["beta", "--tier", "2"], "--tier applies to alpha only, not to beta (beta takes --grade)"),
        (["beta", "--turns", "30"], "--turns applies to alpha only, not to beta"),  # the default
        (["alpha", "--grade", "x"], "--grade applies to beta only, not to alpha"),
        (["alpha", "--tier", "2", "--ids", "a"], "--tier cannot be combined with --ids"),
        (["alpha", "--retry"], "--retry needs --resume"),
        (["alpha", "--ids", ",,,"], "',,,' names nothing"),
        (["alpha", "--ids", " , "], "names nothing"),
        (["alpha", "--ids", "a,b,a"], "a given more than once"),
    ],
)  # fmt: skip
def test_broken_rules_are_usage_errors(args, message):
    result = CliRunner().invoke(toy, args)
    assert result.exit_code == 2 and message in result.output, result.output


@pytest.mark.parametrize(
    ("args", "printed"),
    [
        (["beta"], "ok None None 30"),  # defaults of alpha options never count
        (["alpha", "--tier", "1"], "ok None 1 30"),
        (["alpha", "--ids", " a, b ,,c"], "ok ['a', 'b', 'c'] None 30"),
        (["beta", "--resume", "--retry"], "ok None None 30"),
    ],
)  # fmt: skip
def test_rules_kept_run_the_command(args, printed):
    result = CliRunner().invoke(toy, args)
    assert result.exit_code == 0 and result.output.strip() == printed, result.output


def test_suite_options_are_listed_in_a_section_per_suite():
    help_text = CliRunner().invoke(toy, ["--help"]).output
    common, rest = help_text.split("alpha options:")
    alpha, beta = rest.split("beta options:")
    assert "--ids" in common and "--resume" in common and "--tier" not in common
    assert "--tier" in alpha and "--turns" in alpha and "--grade" not in alpha
    assert "--grade" in beta and "--tier" not in beta
