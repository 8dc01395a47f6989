"""Fixtures the runner's tests share: the COMPASS test data directory and a finished run of the
scripted greedy agent to copy and edit (made once per module that asks for it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from travelgym.cli import main

GREEDY = "scripted-greedy"  # the run directory the greedy agent writes under --out


@pytest.fixture(scope="module")
def data_dir(compass_db) -> Path:
    """The data directory holding the COMPASS test database (and its ground truth)."""
    return compass_db.parent.parent


@pytest.fixture(scope="module")
def greedy_run(tmp_path_factory, data_dir) -> Path:
    """A finished three-episode COMPASS run of the scripted greedy agent, made once."""
    out = tmp_path_factory.mktemp("greedy") / "runs"
    args = ["run", "compass", "--agent", "scripted:greedy", "--limit", "3", "--out", str(out),
            "--data-dir", str(data_dir), "--no-progress"]  # fmt: skip
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    return out / GREEDY


def copy_run(run: Path, tmp_path: Path) -> Path:
    """A private copy of ``run`` under ``tmp_path`` (a fresh directory each call), same name."""
    target = tmp_path / f"copy-{len(list(tmp_path.iterdir()))}" / run.name
    shutil.copytree(run, target)
    return target
