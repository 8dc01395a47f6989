"""Bars are a courtesy: a stderr that cannot be written (closed, or its reader gone) gives the
bars up, never the build or the command (the first bar stopped it with exit status 1)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.runner.faults import child_env

TASK = "compass-004"


@pytest.fixture
def fresh_dir(compass_db, tmp_path):
    """A data directory holding the shared COMPASS database only: ``solve`` computes the
    task's ground truth there, behind a bar."""
    (tmp_path / "compass").mkdir()
    os.link(compass_db, tmp_path / "compass" / compass_db.name)  # never written: read-only
    return tmp_path


def _command(data_dir) -> list[str]:
    return [sys.executable, "-m", "travelgym.cli", "solve", "compass", "--task", TASK,
            "--data-dir", str(data_dir)]  # fmt: skip


def _env() -> dict[str, str]:
    return {**child_env(), "TRAVELGYM_PROGRESS_DELAY": "0"}  # every bar is drawn


def test_a_closed_stderr_leaves_the_command_its_work(fresh_dir):
    script = 'exec "$@" 2>&-'
    done = subprocess.run(["sh", "-c", script, "sh", *_command(fresh_dir)], capture_output=True,
                          text=True, env=_env(), timeout=120)  # fmt: skip
    assert done.returncode == 0
    assert f"{TASK}: |X_feas| =" in done.stdout


def test_a_stderr_reader_that_goes_away_leaves_the_command_its_work(fresh_dir):
    process = subprocess.Popen(_command(fresh_dir), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=_env())  # fmt: skip
    process.stderr.close()  # every write to stderr now fails (EPIPE)
    stdout, _ = process.communicate(timeout=120)
    assert process.returncode == 0
    assert f"{TASK}: |X_feas| =" in stdout


def test_bars_are_drawn_where_stderr_works(fresh_dir):
    done = subprocess.run(_command(fresh_dir), capture_output=True, text=True, env=_env(),
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "compass: ground truth" in done.stderr and "1/1" in done.stderr
