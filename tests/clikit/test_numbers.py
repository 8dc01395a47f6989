"""Float ranges refuse nan and inf, which click's own ranges let through (a nan threshold makes
every later comparison false: a --max-error-rate of nan would never fail a run)."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from travelgym.clikit import FiniteFloat, FiniteFloatRange


@click.command()
@click.option("--rate", type=FiniteFloatRange(0, 1), default=0.0)
def command(rate: float) -> None:
    click.echo(f"rate={rate}")


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e999"])
def test_non_finite_values_are_usage_errors(value):
    result = CliRunner().invoke(command, ["--rate", value])
    assert result.exit_code == 2
    assert "is not a finite number" in result.output or "not in the range" in result.output


@pytest.mark.parametrize(("value", "shown"), [("0", "rate=0.0"), ("0.25", "rate=0.25"),
                                              ("1", "rate=1.0")])  # fmt: skip
def test_finite_values_in_range_pass(value, shown):
    result = CliRunner().invoke(command, ["--rate", value])
    assert result.exit_code == 0 and result.output.strip() == shown


def test_out_of_range_is_still_refused():
    assert CliRunner().invoke(command, ["--rate", "1.5"]).exit_code == 2


@click.command()
@click.option("--beta", type=FiniteFloat(), default=0.0)
def unbounded(beta: float) -> None:
    click.echo(f"beta={beta}")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999"])
def test_an_unbounded_float_refuses_non_finite_values(value):
    result = CliRunner().invoke(unbounded, ["--beta", value])
    assert result.exit_code == 2 and "is not a finite number" in result.output


def test_an_unbounded_float_takes_any_finite_value_and_shows_as_float():
    assert CliRunner().invoke(unbounded, ["--beta", "-1e300"]).output.strip() == "beta=-1e+300"
    assert "--beta FLOAT" in CliRunner().invoke(unbounded, ["--help"]).output
