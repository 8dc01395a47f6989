"""A read-only data directory, for real (a bubblewrap read-only bind mount: the kernel answers
``EROFS``; tests run as root, and ``chmod`` does not stop root).

A data directory only has to be written when something must be built there: a shared one of
built data on a read-only mount serves every command that builds nothing, with the same
episodes as a writable one. A command that would build there stops with one line naming what
it lacks (the data file, not a temporary name), and writes nothing.

Without bubblewrap the tests skip, unless ``CI`` is set: then they fail.
"""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from tests.cli.test_read_only_out import (
    EROFS_TEXT,
    bwrap_read_only_works,
    cli_in_bwrap,
    error_lines,
    require,
)
from tests.runner.faults import normalise, raw_episodes
from travelgym.cli import main
from travelgym.runner.store import EPISODES

RUNS = {
    "compass": ("scripted:greedy", "scripted-greedy"),
    "behavior2trip": ("scripted", "scripted"),
}


@pytest.fixture
def shared(tmp_path, test_data, compass_db, trips_database):
    """The shared test data directory (both suites built), once bubblewrap is known to make a
    read-only bind mount here."""
    require(bwrap_read_only_works(tmp_path / "probe"), "bwrap cannot make a read-only bind mount")
    return test_data.directory


def run_args(suite: str, out, data_dir, *extra: str) -> list[str]:
    return ["run", suite, "--agent", RUNS[suite][0], "--limit", "2", "--out", str(out),
            "--no-progress", "--data-dir", str(data_dir), *extra]  # fmt: skip


@pytest.mark.parametrize("suite", sorted(RUNS))
def test_a_read_only_data_directory_of_built_data_runs_as_a_writable_one(shared, tmp_path, suite):
    done = cli_in_bwrap(shared, *run_args(suite, tmp_path / "ro", shared))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    writable = CliRunner().invoke(main, run_args(suite, tmp_path / "rw", shared))
    assert writable.exit_code == 0, writable.output
    got, want = (raw_episodes(tmp_path / side / RUNS[suite][1] / EPISODES) for side in ("ro", "rw"))
    assert len(got) == 2
    assert [normalise(e) for e in got] == [normalise(e) for e in want]


def test_what_a_read_only_data_directory_lacks_is_named_in_one_line(shared, tmp_path):
    """Instances of a set never built there (a noise level no test builds) and a database of
    another seed: one error line each, naming the directory or the data file."""
    lacking = cli_in_bwrap(shared, *run_args("behavior2trip", tmp_path / "a", shared,
                                             "--noise", "0.07"))  # fmt: skip
    assert lacking.returncode == 1, lacking.stderr
    assert error_lines(lacking.stderr) == [
        f"Error: {shared / 'behavior2trip'} is read-only and 2 of the 2 instance slot(s) asked "
        "for are not built there: build them with this command on a writable --data-dir"
    ]
    seed = cli_in_bwrap(shared, "build", "compass", "--db-seed", "9", "--no-progress",
                        "--data-dir", str(shared))  # fmt: skip
    assert seed.returncode == 1, seed.stderr
    assert error_lines(seed.stderr) == [
        f"Error: {shared / 'compass' / 'compass-seed9.sqlite'}: {EROFS_TEXT}"
    ]
    assert "Traceback" not in lacking.stderr + seed.stderr
    assert not (shared / "compass" / "compass-seed9.sqlite").exists()


def _linked(target, source, keep) -> None:
    """``target`` as a data directory holding hard links to ``source``'s files for which
    ``keep(suite, name)`` is true (never written: the directory is bound read-only)."""
    for suite in ("compass", "behavior2trip"):
        (target / suite).mkdir(parents=True)
        for path in (source / suite).iterdir():
            if path.is_file() and keep(suite, path.name):
                os.link(path, target / suite / path.name)


def test_complete_instance_files_without_their_store_serve_a_selection(shared, tmp_path):
    """A read-only data directory holding the instance files but not the slot store they were
    assembled from (a cache): a ``--limit`` run read its instances from the files, the same
    bytes, instead of refusing to build them."""
    files = tmp_path / "files"
    _linked(files, shared, lambda suite, name: suite == "behavior2trip" and ".slots." not in name)
    done = cli_in_bwrap(files, *run_args("behavior2trip", tmp_path / "ro", files))
    assert done.returncode == 0, done.stderr
    writable = CliRunner().invoke(main, run_args("behavior2trip", tmp_path / "rw", shared))
    assert writable.exit_code == 0, writable.output
    got, want = (raw_episodes(tmp_path / side / "scripted" / EPISODES) for side in ("ro", "rw"))
    assert [normalise(e) for e in got] == [normalise(e) for e in want] and len(got) == 2


def test_a_ground_truth_a_read_only_data_directory_lacks_is_named_not_its_lock(shared, tmp_path):
    only_db = tmp_path / "db-only"
    _linked(only_db, shared, lambda suite, name: suite == "compass" and name.endswith(".sqlite"))
    done = cli_in_bwrap(only_db, "solve", "compass", "--task", "compass-005", "--no-progress",
                        "--data-dir", str(only_db))  # fmt: skip
    assert done.returncode == 1, done.stderr
    partial = only_db / "compass" / "ground_truth-seed0.partial.jsonl"
    assert error_lines(done.stderr) == [f"Error: {partial}: {EROFS_TEXT}"]
