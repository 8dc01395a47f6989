"""The kill-and-resume property: real ``travelgym run`` processes SIGKILLed at seeded random
points, across both suites, then resumed, end with exactly the episodes of an uninterrupted run:
no duplicate, no lost episode, every saved episode readable at every kill point."""

from __future__ import annotations

import json
import random
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.runner.faults import child_env, cli_command, kill_and_resume, raw_episodes
from travelgym.runner.store import EPISODES
from travelgym.suites.behavior2trip.instances import ensure_instances

SEED = 15
COMPASS_KILLS, TRIPS_KILLS = 20, 10  # 30 kill points across both suites
COMPASS_TASKS, TRIPS_INSTANCES = 24, 40


@pytest.fixture(scope="module")
def trips_data_dir(trips_database):
    directory = trips_database.path.parent.parent
    ensure_instances(trips_database, directory, splits=("test",))
    return directory


def _reference(suite_args: list[str], out) -> tuple[str, list[dict]]:
    """An uninterrupted run's directory name (OUT/<agent>) and episodes."""
    done = subprocess.run(cli_command(*suite_args, "--out", str(out)), capture_output=True,
                          text=True, env=child_env(), timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    return run_dir.name, raw_episodes(run_dir / EPISODES)


def _property(suite_args: list[str], tmp, name: str, kills: int, seed: int):
    leaf, reference = _reference(suite_args, tmp / f"{name}-reference")

    def chain(n):
        out = tmp / f"{name}-{n}"
        return cli_command(*suite_args, "--out", str(out), slow_disk=True), out / leaf

    return kill_and_resume(chain, kills, reference, random.Random(seed)), len(reference)


@pytest.mark.slow  # a chain of CLI runs SIGKILLed at random points, each resumed, per suite
def test_sigkill_at_random_points_then_resume_equals_uninterrupted(tmp_path, compass_db,
                                                                   trips_data_dir):  # fmt: skip
    compass = ["run", "compass", "--agent", "scripted:sampled", "--limit", str(COMPASS_TASKS),
               "--no-progress", "--data-dir", str(compass_db.parent.parent)]  # fmt: skip
    trips = ["run", "behavior2trip", "--limit", str(TRIPS_INSTANCES), "--no-progress",
             "--data-dir", str(trips_data_dir)]  # fmt: skip
    with ThreadPoolExecutor(2) as pool:  # the suites' chains side by side
        jobs = [pool.submit(_property, compass, tmp_path, "compass", COMPASS_KILLS, SEED),
                pool.submit(_property, trips, tmp_path, "trips", TRIPS_KILLS, SEED + 1)]  # fmt: skip
        (compass_figures, compass_n), (trips_figures, trips_n) = [job.result() for job in jobs]
    print("kill-and-resume figures:", json.dumps({"compass": vars(compass_figures),
                                                   "behavior2trip": vars(trips_figures)}))  # fmt: skip
    for figures in (compass_figures, trips_figures):
        assert figures.problems == []
        assert figures.duplicates == 0 and figures.lost == 0 and figures.mismatched == 0
        assert figures.quarantined == figures.torn_lines  # each torn line kept, nothing else
        assert figures.kill_points - figures.idle_kills >= figures.kill_points // 2
    assert (compass_n, trips_n) == (COMPASS_TASKS, TRIPS_INSTANCES)
    assert compass_figures.kill_points + trips_figures.kill_points >= 30
    assert compass_figures.torn_lines + trips_figures.torn_lines >= 3  # kills landed mid-write


def test_resume_refuses_a_different_run(tmp_path, compass_db):
    from click.testing import CliRunner

    from travelgym.cli import main

    data_dir = str(compass_db.parent.parent)
    runner = CliRunner()
    base = ["run", "compass", "--agent", "scripted:greedy", "--out", str(tmp_path), "--no-progress",
            "--data-dir", data_dir]  # fmt: skip
    assert runner.invoke(main, base + ["--limit", "2"]).exit_code == 0
    again = runner.invoke(main, base + ["--limit", "2"])
    assert again.exit_code == 1 and "--resume" in again.output
    first, second = json.loads((tmp_path / "scripted-greedy" / "manifest.json").read_text())[
        "task_ids"
    ]
    other = runner.invoke(main, base + ["--tasks", f"{second},{first}", "--resume"])
    assert other.exit_code == 1 and "different run" in other.output
    bad = runner.invoke(main, ["run", "compass", "--agent", "wizard:x", "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "scripted:greedy" in bad.output
