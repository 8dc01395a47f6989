"""Option rules: suite ownership, needed companions and conflicts, judged on what was typed."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from travelgym.clikit import RuledCommand, RuledOption, comma_separated


@click.command(cls=RuledCommand)
@click.argument("suite", type=click.Choice(["alpha", "beta"]))
@click.option("--ids", default=None, callback=comma_separated)
@click.option("--tier", cls=RuledOption, suites=["alpha"], conflicts=["ids"], counterpart="grade",
              type=int, default=None)  # fmt: skip
@click.option("--grade", cls=RuledOption, suites=["beta"], default=None)
@click.option("--turns", cls=RuledOption, suites=["alpha"], type=int, default=30)
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


def test_suite_only_options_say_so_in_their_help():
    help_text = CliRunner().invoke(toy, ["--help"]).output
    assert "alpha only." in help_text and "beta only." in help_text
