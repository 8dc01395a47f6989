"""``--resume`` with a larger ``--limit`` extends a run (the shared runner, both suites): the
episodes already saved stay byte for byte, only the added tasks run, and the manifest records
the longer selection; a shorter or different selection is refused."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.runner.store import EPISODES, MANIFEST
from travelgym.suites.behavior2trip.instances import ensure_instances


@pytest.fixture(scope="module")
def trips_data_dir(trips_database):
    directory = trips_database.path.parent.parent
    ensure_instances(trips_database, directory, splits=("test",))
    return directory


def _cases(compass_db, trips_data_dir):
    return {
        "compass": (["run", "compass", "--agent", "scripted:greedy", "--data-dir",
                     str(compass_db.parent.parent)], "scripted-greedy"),
        "behavior2trip": (["run", "behavior2trip", "--agent", "scripted", "--data-dir",
                           str(trips_data_dir)], "scripted"),
    }  # fmt: skip


@pytest.mark.parametrize("suite", ["compass", "behavior2trip"])
def test_a_larger_limit_on_resume_extends_the_run(suite, tmp_path, compass_db, trips_data_dir):
    args, leaf = _cases(compass_db, trips_data_dir)[suite]
    base = [*args, "--out", str(tmp_path), "--no-progress"]
    runner = CliRunner()
    first = runner.invoke(main, [*base, "--limit", "2"])
    assert first.exit_code == 0, first.output
    run_dir = tmp_path / leaf
    before = (run_dir / EPISODES).read_bytes()
    old_ids = json.loads((run_dir / MANIFEST).read_text())["task_ids"]
    assert len(old_ids) == 2

    more = runner.invoke(main, [*base, "--limit", "4", "--resume"])
    assert more.exit_code == 0, more.output
    assert "extending the run from 2 to 4 tasks" in more.output
    after = (run_dir / EPISODES).read_bytes()
    assert after.startswith(before)  # the saved episodes are untouched, not rerun
    lines = [json.loads(line) for line in after.decode().splitlines()]
    ids = json.loads((run_dir / MANIFEST).read_text())["task_ids"]
    assert ids[:2] == old_ids and len(ids) == 4
    assert sorted(e["task_id"] for e in lines) == sorted(ids)  # each task once

    # the same selection again: nothing to run; a shorter one is refused, naming the fix
    assert runner.invoke(main, [*base, "--limit", "4", "--resume"]).exit_code == 0
    assert (run_dir / EPISODES).read_bytes() == after
    shorter = runner.invoke(main, [*base, "--limit", "3", "--resume"])
    assert shorter.exit_code == 1 and "--limit 4" in shorter.output
    # a selection whose start differs is another run
    swapped = ",".join([ids[1], ids[0], *ids[2:]])
    other = runner.invoke(main, [*base, "--tasks", swapped, "--resume"])
    assert other.exit_code == 1 and "different run" in other.output
    assert json.loads((run_dir / MANIFEST).read_text())["task_ids"] == ids


def test_a_larger_selection_without_resume_is_still_refused(tmp_path, compass_db):
    base = ["run", "compass", "--agent", "scripted:greedy", "--out", str(tmp_path),
            "--no-progress", "--data-dir", str(compass_db.parent.parent)]  # fmt: skip
    runner = CliRunner()
    assert runner.invoke(main, [*base, "--limit", "2"]).exit_code == 0
    again = runner.invoke(main, [*base, "--limit", "3"])
    assert again.exit_code == 1 and "different run" in again.output
