"""Every command takes ``--no-progress``, and it and ``--json`` (unless stderr is a terminal)
hide the progress of the data builds the command starts (a first use of ``stats``, ``tasks``,
``score``, ... showed bars that no flag of theirs could hide)."""

from __future__ import annotations

import os
import subprocess
import sys

import click
import pytest

from travelgym import progress
from travelgym.cli import main


def _leaf_commands(group: click.Group, path: str = "") -> dict[str, click.Command]:
    out: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            out.update(_leaf_commands(command, f"{path}{name} "))
        else:
            out[f"{path}{name}"] = command
    return out


def test_every_command_takes_no_progress_and_its_json_flag_hides_progress(monkeypatch):
    from travelgym.clikit import progress_switches

    monkeypatch.setattr(progress_switches, "_stderr_is_a_terminal", lambda: False)
    commands = _leaf_commands(main)
    assert {"run", "stats", "tasks", "score", "serve-mcp", "export dataset"} <= set(commands)
    for name, command in commands.items():
        params = {opt: p for p in command.params for opt in getattr(p, "opts", ())}
        assert "--no-progress" in params, name
        for flag in ("--no-progress", "--json"):
            if flag in params:
                progress.set_enabled(True)
                ctx = click.Context(command)
                params[flag].process_value(ctx, True)
                assert not progress.enabled(), f"{name} {flag}"
    progress.set_enabled(True)


def test_json_leaves_the_bars_to_a_person_at_a_terminal(monkeypatch):
    """A first ``tasks behavior2trip --json`` sat silent for 38 s: with stderr on a terminal
    the bars show there (the JSON on stdout is untouched); ``--no-progress`` still hides them."""
    from travelgym.clikit import progress_switches

    monkeypatch.setattr(progress_switches, "_stderr_is_a_terminal", lambda: True)
    command = _leaf_commands(main)["tasks"]
    params = {opt: p for p in command.params for opt in getattr(p, "opts", ())}
    for flag, shown in (("--json", True), ("--no-progress", False)):
        progress.set_enabled(True)
        params[flag].process_value(click.Context(command), True)
        assert progress.enabled() is shown, flag
    progress.set_enabled(True)


def test_a_new_command_line_shows_progress_again(monkeypatch):
    """One process running several command lines (as tests do) starts each with progress on."""
    from click.testing import CliRunner

    monkeypatch.delenv("TRAVELGYM_NO_PROGRESS", raising=False)
    seen = []
    monkeypatch.setattr(
        main.commands["suites"], "callback", lambda **_: seen.append(progress.enabled())
    )
    runner = CliRunner()
    assert runner.invoke(main, ["suites", "--no-progress"], prog_name="travelgym").exit_code == 0
    assert runner.invoke(main, ["suites"], prog_name="travelgym").exit_code == 0
    assert seen == [False, True]


@pytest.mark.slow  # three database builds in child processes
@pytest.mark.parametrize("flag", [None, "--no-progress", "--json"])
def test_a_first_use_build_of_stats_shows_progress_unless_hidden(tmp_path, flag):
    env = dict(os.environ, TRAVELGYM_PROGRESS_DELAY="0")
    env.pop("TRAVELGYM_NO_PROGRESS", None)
    done = subprocess.run([sys.executable, "-m", "travelgym.cli", "stats", "compass",
                           "--data-dir", str(tmp_path), *([flag] if flag else [])],
                          capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert ("compass: database" in done.stderr) == (flag is None), done.stderr
