"""Ground truth built only for the tasks asked for: the same as the full build's, kept apart
from the full file, reused by later requests and by the full build; progress on stderr."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from travelgym.datafiles import manifest_path, read_manifest
from travelgym.suites.compass import ground_truth as gt
from travelgym.suites.compass.options import CompassOptions
from travelgym.suites.compass.suite import CompassSuite
from travelgym.suites.compass.tasks import load_ground_truth, load_tasks

CHOSEN = ["compass-004", "compass-150", "compass-260"]  # one of each level


@pytest.fixture
def fresh_dir(compass_db, tmp_path) -> Path:
    """A data directory holding the shared database only (no ground truth yet)."""
    (tmp_path / "compass").mkdir()
    os.link(compass_db, tmp_path / "compass" / compass_db.name)  # never written: read-only
    return tmp_path


@pytest.fixture
def full(compass_db) -> dict:
    """The full build's ground truths (the shared data directory's file)."""
    return load_ground_truth(compass_db.parent / "ground_truth-seed0.jsonl")


@pytest.fixture
def solved(monkeypatch) -> list[str]:
    """The ids of the tasks the solver is run on from now on."""
    seen: list[str] = []
    real = gt.solve

    def counting(conn, task):
        seen.append(task.task_id)
        return real(conn, task)

    monkeypatch.setattr(gt, "solve", counting)
    return seen


def test_chosen_tasks_are_solved_alone_and_equal_the_full_build(fresh_dir, full, solved):
    levels = {t.task_id: t.level for t in load_tasks()}
    assert sorted(levels[i] for i in CHOSEN) == [1, 2, 3]
    path, truths = gt.ensure_ground_truth(seed=0, data_dir=fresh_dir, task_ids=CHOSEN)
    assert solved == CHOSEN
    assert list(truths) == CHOSEN
    assert {i: t.model_dump() for i, t in truths.items()} == {
        i: full[i].model_dump() for i in CHOSEN
    }
    # kept apart, marked partial, never where the full file lives
    assert path == gt.partial_ground_truth_path(0, fresh_dir)
    assert not gt.ground_truth_path(0, fresh_dir).exists()
    meta = read_manifest(path)
    assert meta["partial"] is True and meta["task_ids"] == CHOSEN and meta["count"] == 3


def test_a_later_request_solves_only_what_is_missing(fresh_dir, full, solved):
    gt.ensure_ground_truth(seed=0, data_dir=fresh_dir, task_ids=CHOSEN[:2])
    _, truths = gt.ensure_ground_truth(seed=0, data_dir=fresh_dir, task_ids=CHOSEN[1:])
    assert solved == CHOSEN  # the middle task once
    assert truths["compass-260"].model_dump() == full["compass-260"].model_dump()
    assert read_manifest(gt.partial_ground_truth_path(0, fresh_dir))["task_ids"] == CHOSEN


def test_the_full_build_reuses_the_partial_file_and_equals_a_full_build(
    fresh_dir, compass_db, full, solved, monkeypatch
):
    gt.ensure_ground_truth(seed=0, data_dir=fresh_dir, task_ids=CHOSEN)
    solved.clear()
    # the rest as the full build computed them (solving all 281 again is the slow part)
    monkeypatch.setattr(
        gt, "solve", lambda conn, task: (solved.append(task.task_id), full[task.task_id])[1]
    )
    path, truths = gt.ensure_ground_truth(seed=0, data_dir=fresh_dir)
    assert path == gt.ground_truth_path(0, fresh_dir)
    assert len(solved) == len(full) - len(CHOSEN) and not set(solved) & set(CHOSEN)
    # byte for byte the shared full file, the lazily solved tasks included
    assert path.read_bytes() == (compass_db.parent / "ground_truth-seed0.jsonl").read_bytes()
    assert read_manifest(path).get("partial") is None and read_manifest(path)["count"] == len(full)
    assert not gt.partial_ground_truth_path(0, fresh_dir).exists()
    # every task asked for by id is the full build too
    solved.clear()
    again, _ = gt.ensure_ground_truth(seed=0, data_dir=fresh_dir, task_ids=list(truths))
    assert again == path and solved == []


def test_a_partial_file_is_never_taken_for_the_full_one(fresh_dir, monkeypatch):
    path, _ = gt.ensure_ground_truth(seed=0, data_dir=fresh_dir, task_ids=CHOSEN[:1])
    # even copied where the full file lives, its manifest says partial: the full build runs
    full_path = gt.ground_truth_path(0, fresh_dir)
    full_path.write_bytes(path.read_bytes())
    manifest_path(full_path).write_bytes(manifest_path(path).read_bytes())

    def stop(conn, task):
        raise RuntimeError("full build started")

    monkeypatch.setattr(gt, "solve", stop)
    with pytest.raises(RuntimeError, match="full build started"):
        gt.ensure_ground_truth(seed=0, data_dir=fresh_dir)


def test_a_stale_partial_file_is_not_reused(fresh_dir, solved):
    path, _ = gt.ensure_ground_truth(seed=0, data_dir=fresh_dir, task_ids=CHOSEN[:1])
    text = manifest_path(path).read_text().replace(read_manifest(path)["db_content_hash"], "0" * 64)
    manifest_path(path).write_text(text)
    gt.ensure_ground_truth(seed=0, data_dir=fresh_dir, task_ids=CHOSEN[:1])
    assert solved == CHOSEN[:1] * 2


def test_a_limited_run_builds_only_its_tasks_ground_truth(fresh_dir, full, solved):
    run = CompassSuite().open_run(CompassOptions(), None, 2, 0, fresh_dir)
    try:
        assert [t.task_id for t in run.tasks] == solved == list(run.truths)
        assert len(solved) == 2
        assert all(run.truths[i].model_dump() == full[i].model_dump() for i in solved)
        assert not gt.ground_truth_path(0, fresh_dir).exists()
    finally:
        run.conn.close()


def _solve_fresh(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "TRAVELGYM_NO_PROGRESS"}
    env["TRAVELGYM_PROGRESS_DELAY"] = "0"  # show every bar however fast the build
    return subprocess.run(
        [sys.executable, "-m", "travelgym.cli", "solve", "compass", "--task", "compass-004",
         "--data-dir", str(tmp_path / "data"), *extra],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip


def test_a_first_use_build_shows_progress_on_stderr(tmp_path):
    done = _solve_fresh(tmp_path)
    assert "compass: database" in done.stderr
    assert "compass: ground truth" in done.stderr
    assert "compass-004: |X_feas|" in done.stdout


def test_no_progress_hides_it(tmp_path):
    done = _solve_fresh(tmp_path, "--no-progress")
    assert "compass:" not in done.stderr
    assert done.stderr.strip() == ""


def test_scoring_and_a_training_environment_solve_only_their_tasks(fresh_dir, full, solved,
                                                                  tmp_path):  # fmt: skip
    """``score`` of a few answers and an environment over a few tasks computed all 281 ground
    truths on a data directory without the full file."""
    from travelgym.suites.compass.environment import CompassTrainingEnv

    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(f'{{"task_id": "{i}", "recommendation": null}}\n'
                               for i in CHOSEN[:2]))  # fmt: skip
    result = CompassSuite().score(answers, 0, fresh_dir, [])
    assert sorted(solved) == sorted(CHOSEN[:2]) and result["overall"]["n"] == 2
    env = CompassTrainingEnv.from_data(data_dir=fresh_dir, task_ids=[CHOSEN[2]])
    assert sorted(solved) == sorted(CHOSEN) and list(env.truths) == [CHOSEN[2]]
    assert env.truths[CHOSEN[2]].model_dump() == full[CHOSEN[2]].model_dump()


@pytest.mark.parametrize("damage", ["edited", "manifest"])
def test_a_damaged_full_file_is_never_scored_against(fresh_dir, compass_db, full, solved, damage):
    """An edited line of the full file (compass-005's optimum) was read as is, and scores came
    out wrong; a manifest that is no object crashed. Either way the task is solved again."""
    import shutil

    source = compass_db.parent / "ground_truth-seed0.jsonl"
    target = gt.ground_truth_path(0, fresh_dir)
    shutil.copyfile(source, target)
    shutil.copyfile(manifest_path(source), manifest_path(target))
    assert gt.ensure_ground_truth(seed=0, data_dir=fresh_dir, task_ids=["compass-005"])[0] == target
    assert solved == []  # intact: read, not solved
    if damage == "edited":
        lines = target.read_text().splitlines(keepends=True)
        edited = lines[4].replace("4707.0", "1.0")
        assert edited != lines[4] and '"compass-005"' in edited
        target.write_text("".join(lines[:4] + [edited] + lines[5:]))
    else:
        manifest_path(target).write_text("[]")
    path, truths = gt.ensure_ground_truth(seed=0, data_dir=fresh_dir, task_ids=["compass-005"])
    assert path != target and solved == ["compass-005"]
    assert truths["compass-005"].model_dump() == full["compass-005"].model_dump()


def test_two_commands_adding_to_the_partial_file_at_once_keep_each_others(fresh_dir, full,
                                                                          monkeypatch):  # fmt: skip
    """A second command solves and writes its tasks while the first is solving its own: the
    first one's write keeps them (it used to write what it had read before, losing the
    second's)."""
    real, interleaved = gt.solve, []

    def solving_while_another_writes(conn, task):
        if not interleaved:
            interleaved.append(task.task_id)
            gt.ensure_ground_truth(seed=0, data_dir=fresh_dir, task_ids=CHOSEN[1:])
        return real(conn, task)

    monkeypatch.setattr(gt, "solve", solving_while_another_writes)
    _, first = gt.ensure_ground_truth(seed=0, data_dir=fresh_dir, task_ids=CHOSEN[:1])
    assert interleaved == CHOSEN[:1] and list(first) == CHOSEN[:1]
    path = gt.partial_ground_truth_path(0, fresh_dir)
    assert read_manifest(path)["task_ids"] == CHOSEN  # both commands' tasks, in file order
    kept = load_ground_truth(path)
    assert {i: t.model_dump() for i, t in kept.items()} == {i: full[i].model_dump() for i in CHOSEN}


def test_an_interrupted_full_build_keeps_what_it_solved(fresh_dir, full, monkeypatch):
    """Ctrl-C during the full ground truth lost every task solved (the next command began at
    0/281): they go to the partial file, and the next build solves only the rest, to the full
    build's ground truths."""
    real, solved = gt.solve, []

    def stopped_after_three(conn, task):
        if len(solved) == 3:
            raise KeyboardInterrupt
        solved.append(task.task_id)
        return real(conn, task)

    monkeypatch.setattr(gt, "solve", stopped_after_three)
    with pytest.raises(KeyboardInterrupt):
        gt.ensure_ground_truth(seed=0, data_dir=fresh_dir)
    kept = read_manifest(gt.partial_ground_truth_path(0, fresh_dir))
    assert kept["task_ids"] == solved and kept["count"] == 3
    assert not gt.ground_truth_path(0, fresh_dir).exists()
    again: list[str] = []
    monkeypatch.setattr(
        gt, "solve", lambda conn, task: again.append(task.task_id) or full[task.task_id]
    )
    path, truths = gt.ensure_ground_truth(seed=0, data_dir=fresh_dir)
    assert len(again) == len(full) - 3 and not set(again) & set(solved)
    assert {i: t.model_dump() for i, t in truths.items()} == {
        i: t.model_dump() for i, t in full.items()
    }


def test_a_killed_build_keeps_what_it_had_saved(fresh_dir, full, solved):
    """SIGKILL (or a power cut) runs no ``finally``: the solved ground truths went nowhere. A
    build saves them as it goes (every ``SAVE_EVERY_S`` seconds; 0 here: after each task)."""
    import signal
    import time

    from tests.runner.faults import child_env

    code = (
        "import time\n"
        "from travelgym import atomic\n"
        "atomic.SAVE_EVERY_S = 0\n"
        "from travelgym.suites.compass import ground_truth as gt\n"
        "real, n = gt.solve, [0]\n"
        "def solve(conn, task):\n"
        "    n[0] += 1\n"
        "    if n[0] == 3:\n"
        "        time.sleep(600)  # killed here\n"
        "    return real(conn, task)\n"
        "gt.solve = solve\n"
        f"gt.ensure_ground_truth(seed=0, data_dir={str(fresh_dir)!r}, task_ids={CHOSEN!r})\n"
    )
    partial = gt.partial_ground_truth_path(0, fresh_dir)
    process = subprocess.Popen([sys.executable, "-c", code], env=child_env())
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            if manifest_path(partial).is_file() and read_manifest(partial)["count"] == 2:
                break
            time.sleep(0.1)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    assert read_manifest(partial)["task_ids"] == CHOSEN[:2]
    _, truths = gt.ensure_ground_truth(seed=0, data_dir=fresh_dir, task_ids=CHOSEN[:2])
    assert solved == []  # intact, reused
    assert {i: t.model_dump() for i, t in truths.items()} == {
        i: full[i].model_dump() for i in CHOSEN[:2]
    }
