"""What a task hides from the agent (a Behavior2Trip instance's profile and witness, a COMPASS
task's progressive constraints, revised constraints' final versions and its revisions, a
TravelPlanner query's annotated plan) is declared once by the suite (``answer_key_fields``,
``public_task`` / ``hidden_task``) and stays out of everything handed out without
``--ground-truth``: the exported Parquet files (every cell searched) and, a variant the issue
does not list, the Gymnasium ``info`` and the inspect samples."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.training.support import need_extra
from travelgym.core.registry import get_suite
from travelgym.integrations.hf_dataset import export_dataset


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def compass_hidden(task: Any) -> list[Any]:
    """A COMPASS task's hidden values: each progressive constraint and each revised
    constraint's final version (what the user says only later), as JSON."""
    initial = {r.constraint_index: r.initial for r in task.revisions}
    hidden = []
    for index, constraint in enumerate(task.constraints):
        if constraint.revelation == "progressive" or index in initial:
            hidden.append(constraint.model_dump(mode="json"))
    return hidden


def trips_hidden(instance: Any) -> list[Any]:
    """A Behavior2Trip instance's hidden values: its profile (and its witness plan)."""
    return [instance.profile.model_dump(mode="json"), instance.witness]


def contains(value: Any, secret: Any) -> bool:
    """Whether ``secret`` occurs in ``value``: as an equal object anywhere inside it, or as
    text (its JSON, or itself for a string) inside any string of it (JSON columns included)."""
    if value == secret:
        return True
    if isinstance(value, str):
        texts = [canonical(secret), json.dumps(secret, ensure_ascii=False)]
        texts += [secret] if isinstance(secret, str) else []
        if any(t in value for t in texts):
            return True
        try:
            parsed = json.loads(value)
        except ValueError:
            return False
        return not isinstance(parsed, str) and contains(parsed, secret)
    if isinstance(value, dict):
        return any(contains(v, secret) for v in value.values())
    if isinstance(value, list | tuple):
        return any(contains(v, secret) for v in value)
    return False


def parquet_rows(directory: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    files = sorted(directory.rglob("*.parquet"))
    assert files
    return [row for f in files for row in pq.read_table(f).to_pylist()]


@pytest.fixture(scope="module")
def compass_tasks(compass_db) -> tuple[Path, list]:
    suite = get_suite("compass")
    data = Path(compass_db).parent.parent
    return data, suite.list_tasks(suite.options(), data)


@pytest.fixture(scope="module")
def trips_tasks(trips_database) -> tuple[Path, list]:
    from travelgym.suites.behavior2trip.instance_sets import load_split

    data = trips_database.path.parent.parent
    _, instances, _ = load_split("test", data_dir=data)
    return data, instances


def export(suite_name: str, data: Path, out: Path, **options: Any) -> list[dict[str, Any]]:
    need_extra("datasets", ("pyarrow",))
    suite = get_suite(suite_name)
    export_dataset(suite, suite.options(**options), out, data_dir=data)
    return parquet_rows(out)


def test_a_compass_export_holds_no_constraint_revealed_later(compass_tasks, tmp_path):
    data, tasks = compass_tasks
    assert sum(bool(compass_hidden(t)) for t in tasks) > 200  # most tasks hide something
    rows = {r["task_id"]: r for r in export("compass", data, tmp_path / "out")}
    assert set(rows) == {t.task_id for t in tasks}
    for task in tasks:
        row = rows[task.task_id]
        record = json.loads(row["task_json"])
        assert "revisions" not in record
        for secret in compass_hidden(task):
            assert not contains(row, secret), (task.task_id, secret)
        # what the user states from the start stays: the park, the travellers...
        assert {"kind": "park", "park_ids": list(task.park.park_ids),
                "revelation": "initial"} in record["constraints"]  # fmt: skip


def test_a_compass_export_holds_no_revision(compass_tasks, tmp_path):
    """Variant the issue does not list: a constraint stated from the start and changed later;
    the row holds neither the revision nor the changed (final) version."""
    data, tasks = compass_tasks
    revised = [t for t in tasks if t.revisions]
    assert len(revised) > 10
    rows = {r["task_id"]: r for r in export("compass", data, tmp_path / "out")}
    for task in revised:
        row = rows[task.task_id]
        assert "revisions" not in json.loads(row["task_json"]), task.task_id
        for revision in task.revisions:
            final = task.constraints[revision.constraint_index].model_dump(mode="json")
            assert not contains(row, final), (task.task_id, final)


@pytest.mark.slow
def test_a_trips_export_holds_no_hidden_profile(trips_tasks, tmp_path):
    data, instances = trips_tasks
    rows = {r["task_id"]: r for r in export("behavior2trip", data, tmp_path / "out", split="test")}
    assert set(rows) == {x.instance_id for x in instances}
    for instance in instances:
        assert "profile" not in json.loads(rows[instance.instance_id]["task_json"])
    for instance in instances[::40]:  # every cell searched for 60 instances' hidden values
        row = rows[instance.instance_id]
        for secret in trips_hidden(instance):
            assert not contains(row, secret), instance.instance_id


def test_the_ground_truth_export_holds_what_the_tasks_hide(compass_tasks, tmp_path):
    """With ``--ground-truth`` the hidden parts are written, apart from the tasks."""
    need_extra("datasets", ("pyarrow",))
    data, tasks = compass_tasks
    suite = get_suite("compass")
    export_dataset(suite, suite.options(), tmp_path / "out", data_dir=data, ground_truth=True)
    truth = {r["task_id"]: r for r in parquet_rows(tmp_path / "out" / "ground_truth")}
    task = next(t for t in tasks if t.revisions)
    assert json.loads(truth[task.task_id]["constraints_json"]) == [
        c.model_dump(mode="json") for c in task.constraints
    ]
    assert json.loads(truth[task.task_id]["revisions_json"])


# --- the variant: the other integrations use the same declaration ----------------------------


@pytest.mark.parametrize("suite_name", ["compass", "behavior2trip"])
def test_gymnasium_info_holds_nothing_hidden(suite_name, compass_tasks, trips_tasks):
    need_extra("gym", ("gymnasium",))
    import gymnasium

    from travelgym.integrations.gym_env import env_id, register_envs

    register_envs()
    data, tasks = compass_tasks if suite_name == "compass" else trips_tasks
    options = {"split": "test"} if suite_name == "behavior2trip" else {}
    env = gymnasium.make(env_id(get_suite(suite_name)), data_dir=str(data), limit=2, **options)
    hidden = compass_hidden if suite_name == "compass" else trips_hidden
    by_id = {getattr(t, "task_id", None) or t.instance_id: t for t in tasks}
    try:
        for index in range(2):
            _, info = env.reset(seed=index, options={"index": index})
            secrets = hidden(by_id[info["task_id"]])
            infos = [info]
            _, _, done, cut, info = env.step("I cannot help with that.")
            infos.append(info)
            for found in infos:
                for secret in secrets:
                    assert not contains(found, secret), (info["task_id"], secret)
    finally:
        env.close()


def test_inspect_samples_hold_nothing_hidden(compass_db, compass_tasks):
    need_extra("inspect", ("inspect_ai",))
    from travelgym.integrations.inspect_tasks import build_task

    data, tasks = compass_tasks
    task = build_task(get_suite("compass"), {"limit": 3, "data_dir": str(data)})
    by_id = {t.task_id: t for t in tasks}
    for sample in task.dataset:
        for secret in compass_hidden(by_id[sample.id]):
            assert not contains({"input": sample.input, "metadata": sample.metadata}, secret)


def test_a_travelplanner_export_holds_no_annotated_plan(tmp_path):
    from tests.suites.travelplanner.conftest import write_database, write_dataset
    from travelgym.suites.travelplanner.ingest import ingest

    data = tmp_path / "data"
    ingest(write_dataset(tmp_path / "dataset"), write_database(tmp_path / "database"), data)
    suite = get_suite("travelplanner")
    run = suite.open_run(suite.options(split="validation"), None, None, 0, data)
    tasks = run.tasks
    asyncio.run(run.aclose())
    plans = [t.annotated_plan for t in tasks if t.annotated_plan]
    assert plans
    rows = export("travelplanner", data, tmp_path / "out", split="validation")
    assert len(rows) == len(tasks)
    for row in rows:
        assert "annotated_plan" not in json.loads(row["task_json"])
        for plan in plans:
            assert not contains(row, plan)


def test_the_tasks_listing_holds_nothing_hidden_without_ground_truth(compass_tasks):
    """``tasks --json`` lists what an agent is told at the start; ``--ground-truth`` adds what
    the tasks hide (the one declaration, Suite.public_task)."""
    from click.testing import CliRunner

    from travelgym.cli import main

    data, tasks = compass_tasks
    argv = ["tasks", "compass", "--json", "--data-dir", str(data)]
    listed = CliRunner().invoke(main, argv)
    assert listed.exit_code == 0, listed.output
    records = {r["task_id"]: r for r in json.loads(listed.stdout)}
    for task in tasks:
        for secret in compass_hidden(task):
            assert not contains(records[task.task_id], secret), (task.task_id, secret)
    full = CliRunner().invoke(main, [*argv, "--ground-truth"])
    assert full.exit_code == 0, full.output
    assert json.loads(full.stdout) == [t.model_dump(mode="json") for t in tasks]
    alone = CliRunner().invoke(main, ["tasks", "compass", "--ground-truth"])
    assert alone.exit_code == 2 and "--ground-truth needs --json" in alone.output
