"""An option that takes one value, given twice, is a usage error on every command: click would
keep the last value and drop the others without a word (``run --tasks a --tasks b`` ran ``b``
alone). Options that take many values and flags may repeat."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.clikit import GuardedGroup


def _commands(group: click.Group, path: tuple[str, ...] = ()):
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield path + (name,), command
            yield from _commands(command, path + (name,))
        else:
            yield path + (name,), command


def _single_value_options():
    for path, command in _commands(main):
        if isinstance(command, click.Group):
            continue
        for param in command.params:
            if isinstance(param, click.Option) and not (
                param.is_flag or param.multiple or param.count
            ):
                yield pytest.param(
                    path, max(param.opts, key=len), id=" ".join(path) + param.opts[0]
                )


def test_every_group_is_guarded():
    groups = [" ".join(p) for p, c in _commands(main) if isinstance(c, click.Group)]
    assert groups, "the command line has nested groups"
    assert all(isinstance(c, GuardedGroup) for p, c in _commands(main) if p and
               isinstance(c, click.Group)), groups  # fmt: skip


@pytest.mark.parametrize(("path", "flag"), list(_single_value_options()))
def test_a_single_value_option_given_twice_is_refused(path, flag):
    result = CliRunner().invoke(main, [*path, flag, "one", flag, "two"], prog_name="travelgym")
    assert result.exit_code == 2, result.output
    assert f"Error: {flag} is given more than once; give it once" in result.output
    assert f"Usage: travelgym {' '.join(path)} " in result.output  # the command's own usage


def test_the_equals_form_counts_too():
    result = CliRunner().invoke(main, ["run", "compass", "--tasks=compass-001",
                                       "--tasks", "compass-002"])  # fmt: skip
    assert result.exit_code == 2
    assert "--tasks is given more than once" in result.output


def test_repeatable_options_and_flags_still_repeat(tmp_path):
    # --set is repeatable and a flag given twice says the same thing twice: the run goes on
    # to its own checks (here: an unknown option of the suite, named by its key)
    result = CliRunner().invoke(main, ["run", "compass", "--set", "a=1", "--set", "b=2",
                                       "--no-progress", "--no-progress",
                                       "--out", str(tmp_path / "o")])  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "--set a: compass has no option 'a'" in result.output


@pytest.mark.parametrize(
    ("agents", "message"),
    [
        (["--agent", "scripted:greedy", "--agent", "scripted:greedy"],
         "agent scripted:greedy is given more than once; give each agent once"),
        (["--agent", "llm:m", "--model", "m"],
         "agent llm:m is given more than once; give each agent once"),
        (["--agent", "llm:org/m", "--agent", "llm:org_m"],
         "agent llm:org_m and llm:org/m name the same run directory; give each agent once"),
    ],
)  # fmt: skip
def test_agents_that_share_a_run_directory_are_refused_before_any_episode(tmp_path, agents,
                                                                         message):  # fmt: skip
    out = tmp_path / "runs"
    result = CliRunner().invoke(main, ["run", "compass", *agents, "--limit", "1", "--out",
                                       str(out), "--no-progress"], prog_name="travelgym")  # fmt: skip
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines()[-1] == f"Error: {message}"
    assert not out.exists()


def test_a_repeatable_option_naming_one_thing_twice_is_refused(tmp_path):
    """``solve --task X --task X`` printed X twice, ``export sft --chains F --chains F`` would
    export F's examples twice: naming one task or file twice is a usage error."""
    chains = tmp_path / "c.jsonl"
    chains.write_text("")
    for args, option in (
        (["solve", "compass", "--task", "compass-004", "--task", "compass-004"], "--task"),
        (["export", "sft", "--chains", str(chains), "--chains", str(chains), "--out",
          str(tmp_path / "o.jsonl")], "--chains"),
    ):  # fmt: skip
        result = CliRunner().invoke(main, args, prog_name="travelgym")
        assert result.exit_code == 2, result.output
        assert f"Invalid value for '{option}'" in result.output
        assert "given more than once" in result.output
