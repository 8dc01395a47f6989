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


def test_a_terminal_without_a_width_gets_whole_bars(monkeypatch):
    """A pseudo-terminal that reports 0 columns (``script`` with no size) drew every bar empty:
    bars then take their own width."""
    from travelgym import progress

    monkeypatch.setattr(progress.os, "get_terminal_size", lambda fd: os.terminal_size((0, 0)))
    assert progress.bar_layout(10)["dynamic_ncols"] is False
    monkeypatch.setattr(progress.os, "get_terminal_size", lambda fd: os.terminal_size((80, 24)))
    assert progress.bar_layout(10)["dynamic_ncols"] is True


@pytest.mark.parametrize(("desc", "total", "unit"), [
    ("behavior2trip: train instances, witness+QC", 9000, "inst"),
    ("behavior2trip: train files (6 passes)", 54000, "reads"),
])  # fmt: skip
def test_a_build_bar_keeps_its_counts_and_times_on_80_columns(desc, total, unit):
    """The instance bar's 59-character description pushed its counts, elapsed and remaining
    time off an 80-column terminal."""
    from tqdm import tqdm

    from travelgym.progress import BAR_FORMAT

    line = tqdm.format_meter(total // 3, total, 95.0, ncols=80, prefix=desc, unit=unit,
                             bar_format=BAR_FORMAT)  # fmt: skip
    assert len(line) <= 80
    assert line.startswith(desc) and f"{total // 3}/{total} {unit} [01:35<03:10]" in line
