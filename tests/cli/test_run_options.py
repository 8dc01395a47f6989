"""``travelgym run``: conflicting, misplaced or empty options are usage errors before anything
runs, and bad output places are refused up front."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from travelgym.cli import main, run
from travelgym.clikit import RuledOption

SUITES = ("compass", "behavior2trip", "travelplanner")
# The audit of run's options: these belong to some suites, every other option to all.
SUITE_ONLY = {"user": ("compass",), "level": ("compass",), "trials": ("compass",),
              "max_turns": ("compass",), "personas": ("compass",), "prompt": ("compass",),
              "split": ("behavior2trip", "travelplanner"),
              "difficulty": ("behavior2trip", "travelplanner"),
              "max_steps": ("behavior2trip", "travelplanner"), "scale": ("behavior2trip",),
              "judge": ("behavior2trip",), "data": ("travelplanner",),
              "database": ("travelplanner",), "mode": ("travelplanner",),
              "instances": ("behavior2trip",), "no_trajectory": ("behavior2trip",),
              "clarify": ("behavior2trip",), "clarify_turns": ("behavior2trip",),
              "noise": ("behavior2trip",)}  # fmt: skip


def _invoke(args: list[str], tmp_path):
    return CliRunner().invoke(main, ["run", *args, "--out", str(tmp_path / "runs"),
                                     "--data-dir", str(tmp_path / "data"), "--no-progress"])  # fmt: skip


def _valid_value(param: click.Option, tmp_path) -> str:
    if isinstance(param.type, click.Path):  # an existing path, so only the suite rule can refuse
        if param.type.dir_okay:
            return str(tmp_path)
        (tmp_path / "a-file").write_text("x")
        return str(tmp_path / "a-file")
    if isinstance(param.type, click.Choice):
        return str(param.type.choices[0])
    if isinstance(param.type, click.IntRange):
        return str(param.type.min if param.type.min is not None else 1)
    if isinstance(param.type, (click.types.IntParamType, click.types.FloatParamType)):
        return "1"
    return "llm:some-model"


def test_every_suite_only_option_is_declared_and_refused_on_the_other_suite(tmp_path):
    declared = {p.name: p.suites for p in run.params if isinstance(p, RuledOption) and p.suites}
    assert declared == SUITE_ONLY
    for param in run.params:
        if not isinstance(param, RuledOption) or not param.suites:
            continue
        for suite in set(SUITES) - set(param.suites):
            flag = max(param.opts, key=len)
            value = [] if param.is_flag else [_valid_value(param, tmp_path)]
            result = _invoke([suite, flag, *value], tmp_path)
            assert result.exit_code == 2, (flag, suite, result.output)
            owners = " and ".join(param.suites)
            assert f"{flag} applies to {owners} only, not to {suite}" in result.output
            assert not (tmp_path / "runs").exists()  # refused before anything ran


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["behavior2trip", "--max-turns", "5"],
         "--max-turns applies to compass only, not to behavior2trip (behavior2trip takes "
         "--max-steps)"),
        (["compass", "--max-steps", "5"],
         "--max-steps applies to behavior2trip and travelplanner only"),
        (["compass", "--tasks", "L1-001", "--level", "2"], "--level cannot be combined with --tasks"),
        (["behavior2trip", "--tasks", "b2t-test-easy-0000", "--difficulty", "hard"],
         "--difficulty cannot be combined with --tasks"),
        (["compass", "--retry-errors"], "--retry-errors needs --resume"),
        (["behavior2trip", "--retry-errors"], "--retry-errors needs --resume"),
        (["compass", "--tasks", ",,,"], "',,,' names nothing"),
        (["compass", "--tasks", ""], "'' names nothing"),
        (["behavior2trip", "--tasks", " , ,"], "names nothing"),
        (["compass", "--tasks", "L1-001,L1-002,L1-001"], "L1-001 given more than once"),
        (["compass", "--agent", "scripted:greedy", "--base-url", "http://127.0.0.1:9"],
         "--base-url applies to LLM agents and users only"),
        (["behavior2trip", "--max-calls", "10"], "--max-calls applies to LLM agents and users only"),
        (["compass", "--cache-dir", "/dev/null"], "/dev/null is a character device, not a directory"),
    ],
)  # fmt: skip
def test_conflicts_are_one_line_usage_errors(args, message, tmp_path):
    result = _invoke(args, tmp_path)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("suite", SUITES)
def test_unusable_out_directories_are_refused_before_running(suite, tmp_path):
    (tmp_path / "a-file").write_text("x")
    runner = CliRunner()
    for out, reason in [("/dev/null", "/dev/null is a character device, not a directory"),
                        (str(tmp_path / "a-file"), "a-file is a file, not a directory"),
                        (str(tmp_path / "a-file" / "runs"), "a-file is a file, not a directory")]:  # fmt: skip
        result = runner.invoke(main, ["run", suite, "--out", out, "--no-progress"])
        assert result.exit_code == 2 and reason in result.output, result.output
        assert "Invalid value for '--out'" in result.output
    result = runner.invoke(main, ["run", suite, "--data-dir", "/dev/null"])
    assert result.exit_code == 2 and "Invalid value for '--data-dir'" in result.output
