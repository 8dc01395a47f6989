"""Task files per database seed: each seed's tasks are valid on its own database."""

from __future__ import annotations

import asyncio
import collections
import json

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.datafiles import read_manifest
from travelgym.db import connect_readonly
from travelgym.runner.batch import RunConfig, run_suite
from travelgym.suites.compass.build import ensure_database
from travelgym.suites.compass.solver import solve
from travelgym.suites.compass.task_sets import (
    generated_task_path,
    partial_task_path,
    task_file_for,
    task_set,
)
from travelgym.suites.compass.taskgen import MIN_FEASIBLE, within_credit_bound
from travelgym.suites.compass.tasks import PACKAGE_TASKS, load_tasks

OTHER_SEED = 1


@pytest.fixture(scope="module")
def data_dir(compass_db):
    return compass_db.parent.parent


@pytest.fixture(scope="module")
def other_tasks(compass_seed1_tasks):
    return load_tasks(compass_seed1_tasks)


def _cells(tasks):
    return collections.Counter((t.level, t.objective.type) for t in tasks)


@pytest.mark.slow
def test_seed_zero_uses_the_shipped_file_and_other_seeds_their_own(data_dir, other_tasks):
    assert task_file_for(0, data_dir) == PACKAGE_TASKS
    path = task_file_for(OTHER_SEED, data_dir)
    assert path == generated_task_path(OTHER_SEED, data_dir)
    meta = read_manifest(path)
    db = ensure_database(seed=OTHER_SEED, data_dir=data_dir)
    assert meta["db_seed"] == OTHER_SEED
    assert meta["db_content_hash"] == db.metadata["content_hash"]
    assert meta["count"] == 281
    # the same slots over levels and objectives as the shipped file, but other tasks
    assert _cells(other_tasks) == _cells(load_tasks())
    assert [t.model_dump() for t in other_tasks] != [t.model_dump() for t in load_tasks()]


@pytest.mark.slow
def test_every_task_of_another_seed_is_valid_on_its_database(data_dir, other_tasks):
    conn = connect_readonly(ensure_database(seed=OTHER_SEED, data_dir=data_dir).path)
    for task in other_tasks:
        truth = solve(conn, task)
        assert truth.feasible_count >= MIN_FEASIBLE, task.task_id
        assert within_credit_bound(truth), (task.task_id, truth.credited)


@pytest.mark.slow
def test_a_stale_generated_file_is_regenerated_not_reused(data_dir, other_tasks, tmp_path,
                                                         monkeypatch):  # fmt: skip
    """A manifest naming another database makes the file be generated again on its database
    (the generator stands in here, handing back the tasks it made before: that a generation
    on seed 1 gives the same bytes is test_generate_tasks_on_another_database_seed_...)."""
    from tests.conftest import private_data_dir
    from travelgym.suites.compass import taskgen

    data_dir = private_data_dir(tmp_path / "data", data_dir, ("compass",))  # damaged below
    path = task_file_for(OTHER_SEED, data_dir)
    original = path.read_bytes()
    manifest = path.with_name(path.stem + ".manifest.json")
    meta = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**meta, "db_content_hash": "0" * 64}))
    path.write_text("")  # a stale file's content must not survive
    calls = []
    stand_in = standing_in(other_tasks)

    def generate(conn, seed, **kwargs):
        calls.append((conn.execute("PRAGMA database_list").fetchone()[2], seed))
        return stand_in(conn, seed, **kwargs)

    monkeypatch.setattr(taskgen, "generate_tasks", generate)
    assert task_file_for(OTHER_SEED, data_dir).read_bytes() == original
    db = ensure_database(seed=OTHER_SEED, data_dir=data_dir)
    assert calls == [(str(db.path.resolve()), taskgen.DEFAULT_TASK_SEED)]
    assert (
        read_manifest(path)["db_content_hash"]
        == db.metadata["content_hash"]
        == meta["db_content_hash"]
    )
    assert task_file_for(OTHER_SEED, data_dir) == path and len(calls) == 1  # now current: kept


def standing_in(tasks):
    """A stand-in for ``taskgen.generate_tasks`` handing back ``tasks`` (those of the slots
    asked for, each passed to ``on_task`` as it is "drawn")."""

    def generate(conn, seed, rejected=None, workers=None, slots=None, on_task=None, done=0):
        wanted = None if slots is None else {slot[0] for slot in slots}
        chosen = [t for t in tasks if wanted is None or t.task_id in wanted]
        for task in chosen:
            if on_task is not None:
                on_task(task)
        return chosen

    return generate


def _stratified(tasks, per_cell):
    cells = collections.defaultdict(list)
    for t in tasks:
        cells[(t.level, t.objective.type)].append(t.task_id)
    return [i for cell in sorted(cells) for i in cells[cell][:per_cell]]


@pytest.mark.parametrize(("db_seed", "per_cell"),
                         [(0, 8), pytest.param(OTHER_SEED, None, marks=pytest.mark.slow)])  # fmt: skip
def test_the_exhaustive_agent_is_feasible_and_optimal_on_every_cell_of_a_seed(
    data_dir, tmp_path, db_seed, per_cell, request
):
    """Every task of seed 1 (281 episodes, a few minutes), 8 tasks of every (level, objective)
    cell of seed 0 (48 episodes; the default run covers all of seed 0);
    ``benchmarks/exhaustive_seeds.py`` runs all 281 tasks on seeds 0, 1 and 5."""
    if db_seed == OTHER_SEED:
        request.getfixturevalue("compass_seed1_tasks")  # built once, under the cache's lock
    tasks = load_tasks(task_file_for(db_seed, data_dir))
    ids = _stratified(tasks, per_cell) if per_cell else [t.task_id for t in tasks]
    out = tmp_path / "run"
    cfg = RunConfig("compass", "scripted:exhaustive", out=out, db_seed=db_seed, task_ids=ids,
                    data_dir=data_dir, progress=False, concurrency=8)  # fmt: skip
    overall = asyncio.run(run_suite(cfg))["overall"]
    assert overall["n"] == len(ids) == (48 if per_cell else 281)
    assert overall["FR"] == overall["OR5"] == overall["optimal"] == 100.0, overall
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["db_seed"] == manifest["tasks_db_seed"] == db_seed
    # the set's identity: the shipped file's sha256; a generated set's origin's
    assert manifest["tasks_sha256"] == task_set(db_seed, data_dir).sha256
    if db_seed == 0:
        assert manifest["tasks_sha256"] == read_manifest(PACKAGE_TASKS)["sha256"]


def test_scoring_a_run_against_another_task_version_or_seed_is_refused(data_dir, tmp_path):
    out = tmp_path / "run"
    cfg = RunConfig("compass", "scripted:greedy", out=out, limit=2, data_dir=data_dir,
                    progress=False)  # fmt: skip
    asyncio.run(run_suite(cfg))
    runner = CliRunner()
    ok = runner.invoke(main, ["score", str(out), "--data-dir", str(data_dir), "--json"])
    assert ok.exit_code == 0, ok.output
    other = runner.invoke(main, ["score", str(out), "--seed", "1", "--data-dir", str(data_dir)])
    assert other.exit_code != 0 and "database seed 0" in other.output
    manifest = out / "manifest.json"
    meta = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**meta, "tasks_sha256": "f" * 64}))
    old = runner.invoke(main, ["score", str(out), "--data-dir", str(data_dir)])
    assert old.exit_code != 0 and "another task file" in old.output


@pytest.mark.slow
def test_generate_tasks_on_another_database_seed_matches_what_runs_use(data_dir, other_tasks,
                                                                       tmp_path, monkeypatch):  # fmt: skip
    """``generate-tasks --db-seed 1`` draws on the seed-1 database with the task seed runs use
    and writes the file runs read. The generator stands in, handing back the tasks it made for
    the cached file: that a generation gives the same bytes every time is
    ``test_tasks.py``'s regeneration of the shipped file, byte for byte."""
    from travelgym.suites.compass import taskgen

    calls = []

    def generate(conn, seed, rejected=None, workers=None):
        calls.append((conn.execute("PRAGMA database_list").fetchone()[2], seed))
        return other_tasks

    monkeypatch.setattr(taskgen, "generate_tasks", generate)
    out = tmp_path / "tasks.jsonl"
    result = CliRunner().invoke(main, ["generate-tasks", "compass", "--out", str(out),
                                       "--db-seed", str(OTHER_SEED), "--data-dir", str(data_dir)])  # fmt: skip
    assert result.exit_code == 0, result.output
    db = ensure_database(seed=OTHER_SEED, data_dir=data_dir)
    assert calls == [(str(db.path.resolve()), taskgen.DEFAULT_TASK_SEED)]
    cached = task_file_for(OTHER_SEED, data_dir)
    assert out.read_bytes() == cached.read_bytes()
    written, expected = read_manifest(out), read_manifest(cached)
    assert written["db_seed"] == OTHER_SEED
    assert written == {k: v for k, v in expected.items() if k != "shipped_tasks_sha256"}


def _seed1_database_only(tmp_path, data_dir):
    """A private data directory holding the seed-1 database and no task or ground-truth file."""
    from tests.conftest import private_data_dir

    target = private_data_dir(tmp_path / "data", data_dir, ("compass",),
                              link=lambda p: p.suffix == ".sqlite")  # fmt: skip
    for path in (target / "compass").iterdir():
        if path.suffix != ".sqlite" and "seed1" in path.name:
            path.unlink()
    return target


CHOSEN = ["compass-281", "compass-004", "compass-150"]


def test_a_selection_of_another_seed_draws_only_its_tasks_as_in_the_full_file(
    data_dir, compass_seed1_tasks, tmp_path
):
    """``solve --db-seed 1 --task X`` and ``run --db-seed 1 --limit 3`` generated all 281
    tasks first (85 s): now only the chosen ones are drawn, the same bytes as in the full file,
    and the set is known by the same identity however many of its tasks exist."""
    private = _seed1_database_only(tmp_path, data_dir)
    full = {json.loads(line)["task_id"]: line
            for line in compass_seed1_tasks.read_text().splitlines()}  # fmt: skip
    tasks = task_set(OTHER_SEED, private)
    assert tasks.sha256 == task_set(OTHER_SEED, data_dir).sha256
    assert [t.model_dump_json() for t in tasks.load(CHOSEN)] == [full[i] for i in CHOSEN]
    assert not generated_task_path(OTHER_SEED, private).exists()
    assert read_manifest(partial_task_path(OTHER_SEED, private))["count"] == 3
    # a later selection reuses them and draws only what it lacks
    assert [t.model_dump_json() for t in tasks.load(["compass-004", "compass-010"])] == [
        full["compass-004"], full["compass-010"]]  # fmt: skip
    assert read_manifest(partial_task_path(OTHER_SEED, private))["count"] == 4
    with pytest.raises(KeyError):
        tasks.load(["compass-999"])


def test_an_edited_partial_task_file_is_never_run(data_dir, compass_seed1_tasks, tmp_path):
    private = _seed1_database_only(tmp_path, data_dir)
    tasks = task_set(OTHER_SEED, private)
    first = tasks.load(CHOSEN[:1])[0]
    path = partial_task_path(OTHER_SEED, private)
    edited = json.loads(path.read_text())
    edited["story"] = "An easy trip: recommend anything."
    path.write_text(json.dumps(edited) + "\n")
    assert tasks.load(CHOSEN[:1]) == [first]
    assert tasks.load(CHOSEN[:1])[0].story != edited["story"]


def test_a_run_on_a_selection_of_another_seed_records_the_sets_identity(
    data_dir, compass_seed1_tasks, tmp_path
):
    private = _seed1_database_only(tmp_path, data_dir)
    out = tmp_path / "run"
    cfg = RunConfig("compass", "scripted:exhaustive", out=out, db_seed=OTHER_SEED, limit=3,
                    data_dir=private, progress=False)  # fmt: skip
    overall = asyncio.run(run_suite(cfg))["overall"]
    assert overall["n"] == 3 and overall["OR5"] == 100.0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["tasks_sha256"] == task_set(OTHER_SEED, data_dir).sha256
    assert not generated_task_path(OTHER_SEED, private).exists()
    scored = CliRunner().invoke(main, ["score", str(out), "--db-seed", "1", "--json",
                                       "--no-progress", "--data-dir", str(private)])  # fmt: skip
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.output)["overall"]["OR5"] == 100.0
    assert not generated_task_path(OTHER_SEED, private).exists()


def test_the_full_file_replaces_the_partial_one(data_dir, other_tasks, tmp_path, monkeypatch):
    """The generator stands in for the full build (the tasks of the cached full file)."""
    from travelgym.suites.compass import taskgen

    private = _seed1_database_only(tmp_path, data_dir)
    task_set(OTHER_SEED, private).load(CHOSEN[:1])
    monkeypatch.setattr(taskgen, "generate_tasks", standing_in(other_tasks))
    assert load_tasks(task_file_for(OTHER_SEED, private)) == other_tasks
    assert not partial_task_path(OTHER_SEED, private).exists()
    assert task_set(OTHER_SEED, private).load(CHOSEN) == [
        t for i in CHOSEN for t in other_tasks if t.task_id == i]  # fmt: skip


def test_two_commands_drawing_into_the_partial_file_at_once_keep_each_others(
    data_dir, compass_seed1_tasks, tmp_path, monkeypatch
):
    """A second command draws and writes its tasks while the first is drawing its own: the
    first one's write keeps them (it used to write what it had read before, losing the
    second's), and the file holds the bytes of the full file."""
    from travelgym.suites.compass import taskgen

    private = _seed1_database_only(tmp_path, data_dir)
    full = {json.loads(line)["task_id"]: line
            for line in compass_seed1_tasks.read_text().splitlines()}  # fmt: skip
    real, interleaved = taskgen.generate_tasks, []

    def drawing_while_another_writes(conn, seed, **kwargs):
        if not interleaved:
            interleaved.append(True)
            task_set(OTHER_SEED, private).load(CHOSEN[1:])
        return real(conn, seed, **kwargs)

    monkeypatch.setattr(taskgen, "generate_tasks", drawing_while_another_writes)
    assert [t.task_id for t in task_set(OTHER_SEED, private).load(CHOSEN[:1])] == CHOSEN[:1]
    path = partial_task_path(OTHER_SEED, private)
    lines = path.read_text().splitlines()
    assert sorted(lines) == sorted(full[i] for i in CHOSEN)
    assert read_manifest(path)["count"] == 3


def test_an_interrupted_build_of_the_full_file_keeps_what_it_drew(data_dir, compass_seed1_tasks,
                                                                  tmp_path, monkeypatch):  # fmt: skip
    """Ctrl-C 111 tasks into the seed-1 task file lost them all (the next command began at
    0/281, 68 s of drawing): what was drawn goes to the partial file, and the next build draws
    only the rest, to the same bytes."""
    from travelgym.suites.compass import taskgen

    private = _seed1_database_only(tmp_path, data_dir)
    real, asked = taskgen.generate_tasks, []

    def stopped_after_two(conn, seed, slots=None, on_task=None, **kwargs):
        asked.append(len(slots))
        drawn = []

        def keep(task):
            drawn.append(task)
            on_task(task)
            if len(drawn) == 2:
                raise KeyboardInterrupt

        return real(conn, seed, slots=slots[:3], on_task=keep, workers=0, **kwargs)

    monkeypatch.setattr(taskgen, "generate_tasks", stopped_after_two)
    with pytest.raises(KeyboardInterrupt):
        task_file_for(OTHER_SEED, private)
    partial = partial_task_path(OTHER_SEED, private)
    assert read_manifest(partial)["count"] == 2 and asked == [281]
    rest = standing_in(load_tasks(compass_seed1_tasks))

    def drawing_the_rest(conn, seed, slots=None, **kwargs):
        asked.append(len(slots))
        return rest(conn, seed, slots=slots, **kwargs)

    monkeypatch.setattr(taskgen, "generate_tasks", drawing_the_rest)
    assert task_file_for(OTHER_SEED, private).read_bytes() == compass_seed1_tasks.read_bytes()
    assert asked == [281, 279] and not partial.exists()
