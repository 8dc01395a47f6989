"""Commands that take a selection build only the instances it names, like ``run`` does:
``tasks --difficulty hard`` built all 2,400 test instances, ``chains --limit 3`` all 9,000
train instances."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.suites.behavior2trip import instance_sets


@pytest.fixture
def asked(monkeypatch):
    """The slots the command asks for (the whole-split build refused)."""
    keys: list[tuple[str, str, int]] = []
    selected = instance_sets.ensure_selected

    def spy(db, data_dir, split, wanted, *args, **kwargs):
        keys.extend(wanted)
        return selected(db, data_dir, split, wanted, *args, **kwargs)

    def whole(*args, **kwargs):
        raise AssertionError("the whole split was built")

    monkeypatch.setattr(instance_sets, "ensure_selected", spy)
    monkeypatch.setattr(instance_sets, "ensure_instances", whole)
    return keys


def _cli(*args: str):
    return CliRunner().invoke(main, list(args), prog_name="travelgym")


def test_tasks_of_one_difficulty_build_only_that_level(trips_database, asked):
    data_dir = str(trips_database.path.parents[1])
    done = _cli("tasks", "behavior2trip", "--difficulty", "hard", "--json", "--data-dir", data_dir)
    assert done.exit_code == 0, done.output
    listed = [t["instance_id"] for t in json.loads(done.output)]
    assert len(listed) == 800 and all("-hard-" in t for t in listed)
    assert {d for _, d, _ in asked} == {"hard"} and len(asked) == 800


def test_chains_of_a_limit_build_only_those_instances(trips_database, asked, tmp_path):
    data_dir = str(trips_database.path.parents[1])
    out = tmp_path / "chains.jsonl"
    done = _cli("chains", "--annotator", "scripted", "--split", "test", "--limit", "2",
                "--out", str(out), "--data-dir", data_dir, "--json")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert asked == [("test", "easy", 0), ("test", "medium", 0)]
    assert len(out.read_text().splitlines()) == 2
    one = _cli("chains", "--annotator", "scripted", "--split", "test", "--ids",
               "b2t-test-hard-0007", "--out", str(tmp_path / "one.jsonl"), "--data-dir",
               data_dir, "--json")  # fmt: skip
    assert one.exit_code == 0, one.output
    assert asked[2:] == [("test", "hard", 7)]
