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
    assert not {"profile", "witness", "trajectory"} & set(json.loads(done.output)[0])
    # --ground-truth: the whole instances, hidden profile and witness included
    full = _cli("tasks", "behavior2trip", "--difficulty", "hard", "--json", "--ground-truth",
                "--data-dir", data_dir)  # fmt: skip
    records = json.loads(full.output)
    assert [r["instance_id"] for r in records] == listed
    assert {"profile", "witness", "trajectory"} <= set(records[0]) and records[0]["witness"]


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


def test_quality_assess_and_apply_of_a_limit_build_only_those_instances(trips_database,
                                                                         tmp_path,
                                                                         monkeypatch):  # fmt: skip
    """``quality assess --limit 3`` built all 2,400 test instances, ``apply`` of its file all
    2,400 again: the QC file names the unfiltered set by its identity, so both build only the
    instances judged."""
    from travelgym.datafiles import read_manifest
    from travelgym.suites.behavior2trip import instances, quality_run

    keys: list = []
    selected = instances.ensure_selected
    monkeypatch.setattr(instances, "ensure_selected",
                        lambda db, d, split, wanted, *a, **k: (keys.append(list(wanted)),
                                                               selected(db, d, split, wanted, *a,
                                                                        **k))[1])  # fmt: skip

    def whole(*args, **kwargs):
        raise AssertionError("the whole split was built")

    monkeypatch.setattr(instances, "ensure_instances", whole)
    data_dir = str(trips_database.path.parents[1])
    qc = tmp_path / "qc.jsonl"
    done = _cli("quality", "assess", "--backend", "rules", "--split", "test", "--limit", "3",
                "--out", str(qc), "--data-dir", data_dir, "--json")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert keys == [[("test", "easy", 0), ("test", "medium", 0), ("test", "hard", 0)]]
    meta = read_manifest(qc)
    assert meta["unfiltered_set_sha256"] == {"test": quality_run._set_sha(trips_database, "test")}
    applied = _cli("quality", "apply", str(qc), "--out", str(tmp_path / "out"), "--data-dir",
                   data_dir, "--json")  # fmt: skip
    assert applied.exit_code == 0, applied.output
    assert keys[1] == keys[0] and json.loads(applied.output)["splits"]["test"]["input"] == 3
    # a QC file of another instance set is refused by apply
    meta["unfiltered_set_sha256"]["test"] = "0" * 64
    from travelgym.datafiles import write_manifest

    write_manifest(qc, meta)
    refused = _cli("quality", "apply", str(qc), "--out", str(tmp_path / "o2"), "--data-dir",
                   data_dir)  # fmt: skip
    assert refused.exit_code == 1 and "judged other test instances" in refused.output
