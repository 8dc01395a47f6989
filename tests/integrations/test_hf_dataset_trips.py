"""Behavior2Trip through ``export dataset``: the 11,400 instances of both instance sets (the
default quality-filtered one and the unfiltered one it is drawn from; 9,000 train + 2,400 test
each) come back from ``datasets.load_dataset`` equal to the originals, one split per file, with
the witness plan (the answer key) only in the ground-truth files; a run from the dataset
scores as a run on the shipped instances.

The instance files are those of the shared test data directory (``trips_database`` and
``trips_instances``, tests/conftest.py: built once per machine)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.integrations.test_hf_dataset import need_datasets
from travelgym.cli import main

COUNTS = {"train": 9000, "test": 2400}  # 3,000 / 800 per difficulty, in both instance sets
# both instance sets' 22,800 instances exported, loaded back and compared: inherently slow
ALL_11400 = pytest.mark.slow


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def trips_data(trips_database, trips_instances) -> Path:
    return trips_database.path.parent.parent


@pytest.fixture(scope="module")
def exported(trips_data, tmp_path_factory) -> dict[str, Path]:
    """Both instance sets exported (both splits each)."""
    need_datasets()
    out = {}
    for instances in ("filtered", "unfiltered"):
        out[instances] = tmp_path_factory.mktemp("trips-dataset") / instances
        result = invoke("export", "dataset", "behavior2trip", "--instances", instances,
                        "--out", out[instances], "--data-dir", trips_data)  # fmt: skip
        assert result.exit_code == 0, result.output
    return out


def load(directory: Path):
    import datasets

    return datasets.load_dataset("parquet", data_dir=str(directory),
                                 cache_dir=str(directory.parent / "hf-cache"))  # fmt: skip


def original_lines(trips_data: Path, split: str, instances: str) -> list[dict]:
    """The instance file's records as JSON, witness and hidden profile left out (what the
    dataset stores)."""
    from travelgym.suites.behavior2trip.instances import instances_path

    path = instances_path(split, trips_data, instances=instances)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for record in records:
        record.pop("witness", None)
        record.pop("profile", None)
    return records


@ALL_11400
def test_the_default_set_round_trips_as_11400_instances(exported, trips_data):
    from travelgym.suites.behavior2trip.instance_sets import load_split
    from travelgym.suites.behavior2trip.instances import Instance

    loaded = load(exported["filtered"])
    assert {s: loaded[s].num_rows for s in loaded} == COUNTS
    assert sum(COUNTS.values()) == 11400
    # the test split rebuilt as pydantic models; the train split's 9,000 records compared as
    # JSON with the instance file's lines (cheaper, and Instance round-trips its JSON exactly)
    _, originals, _ = load_split("test", data_dir=trips_data)
    rebuilt = [json.loads(text) for text in loaded["test"]["task_json"]]
    hidden = {"witness", "profile"}
    assert rebuilt == [x.model_dump(mode="json", exclude=hidden) for x in originals]
    assert all(x.witness and x.profile for x in originals)  # the originals have them, rows not
    # with the ground truth's parts the rows make the instances again
    assert Instance.model_validate({**rebuilt[0], "profile": originals[0].profile}) == originals[
        0
    ].model_copy(update={"witness": None})
    assert loaded["test"]["difficulty"] == [x.difficulty for x in originals]
    assert loaded["test"]["days"] == [x.instruction.days for x in originals]
    train = [json.loads(text) for text in loaded["train"]["task_json"]]
    assert train == original_lines(trips_data, "train", "filtered")
    assert loaded["train"]["difficulty"] == [x["difficulty"] for x in train]


@ALL_11400
def test_the_unfiltered_set_round_trips_as_11400_instances(exported, trips_data):
    loaded = load(exported["unfiltered"])
    assert {s: loaded[s].num_rows for s in loaded} == COUNTS
    for split in COUNTS:
        rows = [json.loads(text) for text in loaded[split]["task_json"]]
        assert rows == original_lines(trips_data, split, "unfiltered")
    # a different set from the filtered one: the quality control replaced some instances (a
    # replaced slot keeps its id)
    filtered = load(exported["filtered"])
    assert loaded["test"]["task_id"] == filtered["test"]["task_id"]
    assert loaded["test"]["task_json"] != filtered["test"]["task_json"]


@ALL_11400
def test_the_card_names_the_instance_set_and_its_versions(exported):
    import yaml

    text = (exported["unfiltered"] / "README.md").read_text(encoding="utf-8")
    meta = yaml.safe_load(text.split("\n---", 1)[0][4:])["travelgym"]
    assert set(meta["splits"]) == set(COUNTS)
    for name, split in meta["splits"].items():
        assert split["options"] == {"instances": "unfiltered", "split": name, "scale": "small",
                                    "difficulty": None}  # fmt: skip
        assert split["data"]["instances"] == "unfiltered" and split["data"]["checks_version"]
        assert split["rows"] == COUNTS[name] and len(split["tasks_sha256"]) == 64


@ALL_11400
def test_the_witness_is_only_in_the_ground_truth_files(exported, trips_data, tmp_path):
    from travelgym.suites.behavior2trip.instance_sets import load_split

    for directory in exported.values():
        tasks = load(directory)
        assert not any('"witness"' in t for s in COUNTS for t in tasks[s]["task_json"])
        assert not (directory / "ground_truth").exists()
    out = tmp_path / "hard"
    result = invoke("export", "dataset", "behavior2trip", "--split", "test", "--difficulty",
                    "hard", "--ground-truth", "--out", out, "--data-dir", trips_data)  # fmt: skip
    assert result.exit_code == 0, result.output
    import pyarrow.parquet as pq

    truth = pq.read_table(out / "ground_truth" / "test-00000-of-00001.parquet").to_pylist()
    _, originals, _ = load_split("test", data_dir=trips_data)
    hard = [x for x in originals if x.difficulty == "hard"]
    assert [r["task_id"] for r in truth] == [x.instance_id for x in hard]
    assert [json.loads(r["witness_json"]) for r in truth] == [x.witness for x in hard]


def run_trips(out: Path, data: Path, *extra) -> dict:
    result = invoke("run", "behavior2trip", "--limit", "2", "--json", "--no-progress", "--out",
                    out, "--data-dir", data, *extra)  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)["scripted"]
    summary.pop("episodes_wall_s")
    return summary


@ALL_11400
def test_a_run_from_the_dataset_scores_as_the_shipped_instances(exported, trips_data, tmp_path):
    shipped = run_trips(tmp_path / "shipped", trips_data)
    from_dataset = run_trips(tmp_path / "dataset", trips_data, "--tasks-from",
                             exported["filtered"])  # fmt: skip
    assert from_dataset == shipped
    manifest = json.loads((tmp_path / "dataset" / "scripted" / "manifest.json").read_text())
    assert manifest["tasks_from"]["split"] == "test" and manifest["split"] == "test"
    # the unfiltered dataset's options come with it: its train split, unfiltered instances
    run_trips(tmp_path / "unfiltered", trips_data, "--tasks-from", exported["unfiltered"],
              "--split", "train")  # fmt: skip
    manifest = json.loads((tmp_path / "unfiltered" / "scripted" / "manifest.json").read_text())
    assert manifest["instances"] == "unfiltered" and manifest["split"] == "train"
    assert manifest["tasks_from"]["split"] == "train"
    # a Behavior2Trip run is no COMPASS dataset's episodes (refused before any data is built)
    other = invoke("export", "dataset", "compass", "--run", tmp_path / "dataset" / "scripted",
                   "--out", tmp_path / "x", "--data-dir", tmp_path / "empty")  # fmt: skip
    assert other.exit_code == 1 and "a behavior2trip run, not compass" in other.output
    assert not (tmp_path / "empty" / "compass").exists()
    # a COMPASS command on a Behavior2Trip dataset
    wrong = invoke("run", "compass", "--limit", "1", "--out", tmp_path / "c", "--tasks-from",
                   exported["filtered"], "--data-dir", trips_data)  # fmt: skip
    assert wrong.exit_code == 1 and "a behavior2trip dataset, not compass" in wrong.output


# ---------------------------------------------------------------- TravelPlanner (data supplied)


def test_travelplanner_queries_round_trip_without_their_annotated_plans(tmp_path):
    from tests.suites.travelplanner.conftest import write_dataset
    from travelgym.core.registry import get_suite

    need_datasets()
    source, data = write_dataset(tmp_path / "tp"), tmp_path / "data"
    out = tmp_path / "tp-ds"
    result = invoke("export", "dataset", "travelplanner", "--data", source, "--ground-truth",
                    "--out", out, "--data-dir", data)  # fmt: skip
    assert result.exit_code == 0, result.output
    loaded = load(out)
    suite = get_suite("travelplanner")
    assert set(loaded) == {"train", "validation", "test"}
    for split in loaded:
        run = suite.open_run(suite.options(data=str(source), split=split), None, None, 0, data)
        originals = list(run.tasks)
        run.data.close()
        model = type(originals[0])
        rebuilt = [model.model_validate_json(t) for t in loaded[split]["task_json"]]
        assert rebuilt == [q.model_copy(update={"annotated_plan": None}) for q in originals]
        assert not any('"annotated_plan"' in t for t in loaded[split]["task_json"])
    import pyarrow.parquet as pq

    truth = pq.read_table(out / "ground_truth" / "train-00000-of-00001.parquet").to_pylist()
    run = suite.open_run(suite.options(data=str(source), split="train"), None, None, 0, data)
    plans = [q.annotated_plan for q in run.tasks]
    run.data.close()
    assert any(plans) and [json.loads(r["annotated_plan_json"]) for r in truth] == plans
    # a run from the dataset (the data named again: paths are not carried) scores the same
    summaries = []
    for extra in ([], ["--tasks-from", out]):
        result = invoke("run", "travelplanner", "--data", source, "--split", "validation",
                        "--limit", "2", "--json", "--no-progress", "--out",
                        tmp_path / f"runs{len(extra)}", "--data-dir", data, *extra)  # fmt: skip
        assert result.exit_code == 0, result.output
        summary = json.loads(result.output)["scripted"]
        summary.pop("episodes_wall_s")
        summaries.append(summary)
    assert summaries[0] == summaries[1]
