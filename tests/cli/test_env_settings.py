"""Settings read from environment variables: a value that is no setting is one line naming the
variable and what it must be, exit status 1, before any work (no traceback, nothing built)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.core.errors import UserError


@pytest.mark.parametrize(
    ("name", "value", "suite", "requirement"),
    [
        ("TRAVELGYM_PROGRESS_DELAY", "soon", "compass", "a number of seconds, 0 or more"),
        ("TRAVELGYM_PROGRESS_DELAY", "-1", "behavior2trip", "a number of seconds, 0 or more"),
        (
            "TRAVELGYM_BUILD_WORKERS",
            "two",
            "behavior2trip",
            "a number of worker processes, 0 or more",
        ),
        (
            "TRAVELGYM_BUILD_WORKERS",
            "-3",
            "behavior2trip",
            "a number of worker processes, 0 or more",
        ),
    ],
)
def test_a_bad_build_setting_is_one_line(tmp_path, monkeypatch, name, value, suite, requirement):
    monkeypatch.delenv("TRAVELGYM_NO_PROGRESS", raising=False)
    monkeypatch.setenv(name, value)
    data = tmp_path / "data"
    result = CliRunner().invoke(main, ["build", suite, "--data-dir", str(data)])
    assert result.exit_code == 1, result.output
    line = result.output.strip().splitlines()[-1]
    assert line == f"Error: {name} must be {requirement}, got {value!r}", result.output
    assert not any(data.glob("*.sqlite")), sorted(data.iterdir())


def test_a_bad_token_limit_is_refused_before_the_model_loads(monkeypatch):
    from travelgym.llm.hf_client import MAX_NEW_TOKENS_ENV, HFChatClient

    monkeypatch.setenv(MAX_NEW_TOKENS_ENV, "many")
    # no such checkpoint: a load would fail differently (the setting is checked first)
    with pytest.raises(UserError, match=f"^{MAX_NEW_TOKENS_ENV} must be a positive integer"):
        HFChatClient("/nonexistent/checkpoint")


@pytest.mark.parametrize("command", [["generate-tasks", "compass", "--out", "{tmp}/tasks.jsonl"],
                                     ["run", "compass", "--db-seed", "1", "--limit", "1",
                                      "--out", "{tmp}/runs"]])  # fmt: skip
def test_a_bad_worker_count_stops_task_generation_before_any_build(tmp_path, monkeypatch,
                                                                   command):  # fmt: skip
    monkeypatch.setenv("TRAVELGYM_BUILD_WORKERS", "many")
    data = tmp_path / "data"
    args = [a.format(tmp=tmp_path) for a in command]
    result = CliRunner().invoke(main, [*args, "--data-dir", str(data)])
    assert result.exit_code == 1, result.output
    line = result.output.strip().splitlines()[-1]
    assert line == ("Error: TRAVELGYM_BUILD_WORKERS must be a number of worker processes, 0 or "
                    "more, got 'many'")  # fmt: skip
    assert not list(data.rglob("*.sqlite")) and not (tmp_path / "tasks.jsonl").exists()
    assert not list(tmp_path.glob("runs/*/episodes.jsonl"))


@pytest.mark.parametrize("args", [["tasks", "compass"], ["tools", "compass"],
                                  ["build", "compass", "--no-progress"]])  # fmt: skip
def test_a_bad_progress_delay_is_refused_where_no_bar_would_show(tmp_path, monkeypatch, args):
    """A bad ``TRAVELGYM_PROGRESS_DELAY`` was accepted silently by a command whose steps were
    all cached or whose bars were off (docs/data_dir.md says it stops the command at once)."""
    monkeypatch.setenv("TRAVELGYM_PROGRESS_DELAY", "-1")
    result = CliRunner().invoke(main, [*args, "--data-dir", str(tmp_path / "data")]
                                if args[0] == "build" else args)  # fmt: skip
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines()[-1] == (
        "Error: TRAVELGYM_PROGRESS_DELAY must be a number of seconds, 0 or more, got '-1'"
    )


@pytest.mark.parametrize(("args", "command"), [(["run", "--help"], "run"),
                                               (["train", "grpo", "-h"], "train grpo"),
                                               (["run", "compass", "--help"], "run")])  # fmt: skip
def test_a_bad_build_setting_leaves_a_commands_help_readable(monkeypatch, args, command):
    """The check ran before the command could show its help: ``run --help`` was the error."""
    monkeypatch.setenv("TRAVELGYM_PROGRESS_DELAY", "soon")
    monkeypatch.setenv("TRAVELGYM_BUILD_WORKERS", "two")
    result = CliRunner().invoke(main, args, prog_name="travelgym")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Usage: travelgym {command} [OPTIONS]")
    assert "must be" not in result.output
