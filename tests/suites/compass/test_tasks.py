"""The shipped task set: distribution, structure, reproducibility."""

from __future__ import annotations

import collections
import hashlib
import json

import pytest

from travelgym.datafiles import dump_jsonl, read_manifest
from travelgym.db import connect_readonly, read_metadata
from travelgym.suites.compass.constraints import CONSTRAINT_ADAPTER
from travelgym.suites.compass.taskgen import DEFAULT_TASK_SEED, generate_tasks
from travelgym.suites.compass.tasks import PACKAGE_TASKS, Task, load_tasks


@pytest.fixture(scope="module")
def tasks():
    return load_tasks()


def test_exact_paper_distribution(tasks):
    assert len(tasks) == 281
    assert len({t.task_id for t in tasks}) == 281
    levels = collections.Counter(t.level for t in tasks)
    assert levels == {1: 142, 2: 69, 3: 70}
    kinds = collections.Counter(t.objective.type for t in tasks)
    assert kinds == {"single_metric": 154, "feature_count": 127}


def test_constraint_counts_mostly_seven_or_eight(tasks):
    counts = collections.Counter(len(t.constraints) for t in tasks)
    assert (counts[7] + counts[8]) / len(tasks) > 0.5
    assert max(counts, key=counts.get) in (7, 8)


def test_every_task_has_the_five_fundamentals_and_level_structure(tasks):
    for t in tasks:
        kinds = {c.kind for c in t.constraints}
        assert {"park", "travellers", "rooms", "budget"} <= kinds, t.task_id
        assert kinds & {"stay_dates", "weekend_stay", "date_window"}, t.task_id
        assert ("trip_coherence" in kinds) == (t.level >= 2)
        assert ("origin_city" in kinds) == (t.level >= 2)
        assert ("permit_required" in kinds) == (t.level == 3)
        assert {c.revelation for c in t.constraints} <= {"initial", "progressive"}
        assert t.initial_constraints(), t.task_id
        assert t.story and t.task_id in {x.task_id for x in tasks}


def test_feature_count_wish_lists(tasks):
    sizes = collections.Counter(
        len(t.objective.features) for t in tasks if t.objective.type == "feature_count"
    )
    assert set(sizes) <= set(range(6, 11))
    assert sizes.most_common(1)[0][0] in (8, 10)


def test_some_tasks_span_two_parks_and_some_revise_a_constraint(tasks):
    """Algorithm 1's multi-location constraints and Section 3.1's revisions occur in the
    shipped file, across levels; a revision changes a constraint of the same kind."""
    two_parks = [
        t for t in tasks if any(len(getattr(c, "park_ids", [])) == 2 for c in t.constraints)
    ]
    revised = [t for t in tasks if t.revisions]
    assert 0.05 * len(tasks) <= len(two_parks) <= 0.25 * len(tasks), len(two_parks)
    assert 0.15 * len(tasks) <= len(revised) <= 0.5 * len(tasks), len(revised)
    assert {t.level for t in revised} == {1, 2, 3}
    assert len({t.level for t in two_parks}) >= 2  # Levels I and II (docs/compass/tasks.md)
    for task in revised:
        for revision in task.revisions:
            final = task.constraints[revision.constraint_index]
            assert type(revision.initial) is type(final) and revision.initial != final


def test_tasks_round_trip_exactly(tasks):
    for t in tasks[:60]:
        text = t.model_dump_json()
        again = Task.model_validate_json(text)
        assert again == t and again.model_dump_json() == text
        constraints = CONSTRAINT_ADAPTER.validate_python(json.loads(text)["constraints"])
        assert constraints == list(t.constraints)


def test_manifest_matches_file(compass_db):
    meta = read_manifest(PACKAGE_TASKS)
    assert meta["count"] == 281
    assert meta["sha256"] == hashlib.sha256(PACKAGE_TASKS.read_bytes()).hexdigest()
    assert meta["db_content_hash"] == read_metadata(compass_db)["content_hash"]


@pytest.mark.slow
def test_generator_reproduces_the_shipped_file_byte_for_byte(compass_db, tmp_path):
    conn = connect_readonly(compass_db)
    regenerated = generate_tasks(conn, DEFAULT_TASK_SEED)
    sha = dump_jsonl(regenerated, tmp_path / "tasks.jsonl")
    assert (tmp_path / "tasks.jsonl").read_bytes() == PACKAGE_TASKS.read_bytes()
    assert sha == read_manifest(PACKAGE_TASKS)["sha256"]


@pytest.mark.parametrize("workers", [0, 2])
def test_slots_drawn_in_workers_are_the_shipped_tasks_with_a_progress_bar(
    compass_db, workers, monkeypatch, capfd
):
    """The first slots of the shipped file, drawn in this process or over 2 worker processes:
    the same lines, the same rejection counts, and a progress bar on stderr."""
    from travelgym import progress
    from travelgym.suites.compass import taskgen

    first = taskgen.task_slots(DEFAULT_TASK_SEED)[:4]
    monkeypatch.setattr(taskgen, "task_slots", lambda seed: first)
    monkeypatch.setenv("TRAVELGYM_PROGRESS_DELAY", "0")
    monkeypatch.delenv("TRAVELGYM_NO_PROGRESS", raising=False)
    monkeypatch.setattr(progress, "_ENABLED", [True])
    conn = connect_readonly(compass_db)
    rejected = collections.Counter()
    drawn = generate_tasks(conn, DEFAULT_TASK_SEED, rejected, workers=workers)
    shipped = PACKAGE_TASKS.read_text().splitlines()[: len(first)]
    assert [t.model_dump_json() for t in drawn] == shipped
    alone = collections.Counter()
    for task_id, level, otype in first:
        taskgen._draw_slot(conn, DEFAULT_TASK_SEED, task_id, level, otype, alone)
    assert rejected == alone and sum(alone.values()) > 0
    assert "compass: tasks" in capfd.readouterr().err


def test_tampered_task_file_is_refused(tmp_path):
    copy = tmp_path / "tasks.jsonl"
    copy.write_bytes(PACKAGE_TASKS.read_bytes().replace(b'"count":2', b'"count":3', 1))
    (tmp_path / "tasks.manifest.json").write_text(
        (PACKAGE_TASKS.parent / "tasks.manifest.json").read_text()
    )
    with pytest.raises(ValueError, match="sha256"):
        load_tasks(copy)
