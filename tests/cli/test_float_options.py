"""Every float option of the command line, fixed or declared by a suite, refuses nan and inf: a
nan threshold passes any range check and makes every later comparison false (``--min-score nan``
would export nothing, ``--max-error-rate nan`` would never fail a run)."""

from __future__ import annotations

import click
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.clikit import FiniteFloat, FiniteFloatRange


def _commands(group: click.Group, ctx: click.Context, path: tuple[str, ...] = ()):
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from _commands(command, ctx, (*path, name))
        elif command is not None:
            yield (*path, name), command


def test_every_float_option_is_finite():
    ctx = click.Context(main)
    floats = [(" ".join(path), p.name, p.type)
              for path, command in _commands(main, ctx) for p in command.params
              if isinstance(p.type, click.types.FloatParamType)]  # fmt: skip
    assert floats, "the walk found no float option at all"
    loose = [f for f in floats if type(f[2]) not in (FiniteFloat, FiniteFloatRange)]
    assert loose == []


def test_a_nan_min_score_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(main, ["export", "sft", str(tmp_path), "--out",
                                       str(tmp_path / "o.jsonl"), "--min-score", "nan"])  # fmt: skip
    assert result.exit_code == 2
    assert "is not a finite number" in result.output
    assert not (tmp_path / "o.jsonl").exists()
