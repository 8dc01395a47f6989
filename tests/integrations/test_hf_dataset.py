"""``travelgym export dataset`` and ``run --tasks-from``: the COMPASS tasks round-trip through
Parquet and ``datasets.load_dataset`` unchanged, the answer key stays out of the task columns,
a run from the dataset scores as a run on the shipped tasks, and a dataset that is missing,
foreign, tampered with or made from other data is refused with one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.training.support import need_extra
from travelgym.cli import main


def need_datasets():
    """``datasets`` and ``pyarrow`` (the datasets extra): skip on a developer machine without
    them, fail in CI."""
    need_extra("datasets", ("datasets", "pyarrow", "yaml"))


def invoke(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def compass_data(compass_db) -> Path:
    return compass_db.parent.parent


@pytest.fixture(scope="module")
def compass_dataset(compass_data, tmp_path_factory) -> Path:
    """COMPASS's 281 tasks exported with their ground truth."""
    need_datasets()
    out = tmp_path_factory.mktemp("compass-dataset") / "ds"
    result = invoke("export", "dataset", "compass", "--out", out, "--ground-truth",
                    "--data-dir", compass_data)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "test 281" in result.output
    return out


def load(directory: Path, *config: str):
    import datasets

    if config:
        return datasets.load_dataset(str(directory), *config, cache_dir=str(directory / ".cache"))
    return datasets.load_dataset("parquet", data_dir=str(directory),
                                 cache_dir=str(directory.parent / "hf-cache"))  # fmt: skip


def card(directory: Path) -> dict:
    import yaml

    return yaml.safe_load((directory / "README.md").read_text().split("\n---", 1)[0][4:])


def test_compass_tasks_round_trip_through_load_dataset(compass_dataset, compass_data):
    from travelgym.core.registry import get_suite

    suite = get_suite("compass")
    originals = suite.list_tasks(suite.options(), compass_data)
    loaded = load(compass_dataset)
    assert list(loaded) == ["test"] and loaded["test"].num_rows == 281 == len(originals)
    model = type(originals[0])
    # the tasks hold what the agent knows at the start; the ground truth holds the rest
    hidden = load(compass_dataset, "ground_truth")["test"].to_list()
    rebuilt = [model.model_validate({**json.loads(row["task_json"]),
                                     "constraints": json.loads(truth["constraints_json"]),
                                     "revisions": json.loads(truth["revisions_json"])})
               for row, truth in zip(loaded["test"], hidden, strict=True)]  # fmt: skip
    assert rebuilt == originals
    # the browsing columns agree with the records
    rows = loaded["test"].to_list()
    assert [r["task_id"] for r in rows] == [t.task_id for t in originals]
    assert [r["level"] for r in rows] == [t.level for t in originals]
    assert {r["level"] for r in rows} == {1, 2, 3}


def test_compass_ground_truth_stays_out_of_the_tasks(compass_dataset, compass_data):
    from travelgym.core.registry import get_suite

    tasks = load(compass_dataset)["test"]
    assert not any("truth" in c or "optimal" in c for c in tasks.column_names)
    assert "optimal_plan" not in tasks[0]["task_json"]
    _, truths = get_suite("compass").solve([], 0, compass_data)
    truth = load(compass_dataset, "ground_truth")["test"].to_list()
    assert [r["task_id"] for r in truth] == [t.task_id for t in truths]
    assert [json.loads(r["ground_truth_json"]) for r in truth] == [
        t.model_dump(mode="json") for t in truths
    ]


def test_the_card_records_schema_versions_and_hashes(compass_dataset):
    front = card(compass_dataset)
    assert (
        front["license"] == "apache-2.0" and front["pretty_name"] and "travelgym" in front["tags"]
    )
    default, truth = front["configs"]
    assert default["data_files"] == [{"split": "test", "path": "data/test-00000-of-00001.parquet"}]
    assert truth["config_name"] == "ground_truth"
    meta = front["travelgym"]
    split = meta["splits"]["test"]
    assert split["rows"] == 281 and len(split["tasks_sha256"]) == 64
    assert len(split["db_content_hash"]) == 64 and split["data"]["task_seed"] is not None
    # how to make the rows again, without the exporting machine's directories
    assert (
        meta["command"]
        == "travelgym export dataset compass --out DIR --ground-truth --data-dir DIR"
    )
    text = (compass_dataset / "README.md").read_text()
    assert "| `task_json` | string |" in text and meta["content_sha256"] in text


def run_compass(out: Path, data: Path, *extra) -> dict:
    result = invoke("run", "compass", "--agent", "scripted:greedy", "--limit", "2", "--json",
                    "--no-progress", "--out", out, "--data-dir", data, *extra)  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)["scripted:greedy"]
    summary.pop("episodes_wall_s")
    return summary


def test_a_run_from_the_dataset_scores_as_the_shipped_tasks(compass_dataset, compass_data,
                                                            tmp_path):  # fmt: skip
    shipped = run_compass(tmp_path / "shipped", compass_data)
    from_dataset = run_compass(tmp_path / "dataset", compass_data, "--tasks-from",
                               compass_dataset)  # fmt: skip
    assert from_dataset == shipped and from_dataset["overall"]["n"] == 2
    manifest = json.loads((tmp_path / "dataset" / "scripted-greedy" / "manifest.json").read_text())
    content = card(compass_dataset)["travelgym"]["content_sha256"]
    assert manifest["tasks_from"] == {"content_sha256": content, "split": "test"}
    assert manifest["task_ids"] == ["compass-001", "compass-002"]
    scored = invoke("score", tmp_path / "dataset" / "scripted-greedy", "--json", "--data-dir",
                    compass_data)  # fmt: skip
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.stdout)["tasks_from"]["content_sha256"] == content
    # the run's episodes and scores as the dataset's episodes config
    with_run = tmp_path / "with-run"
    result = invoke("export", "dataset", "compass", "--out", with_run, "--level", "3", "--run",
                    tmp_path / "dataset" / "scripted-greedy", "--data-dir", compass_data)  # fmt: skip
    assert result.exit_code == 0, result.output
    stored = [json.loads(line) for line in
              (tmp_path / "dataset" / "scripted-greedy" / "episodes.jsonl").read_text().splitlines()]  # fmt: skip
    rows = load(with_run, "episodes")["run"].to_list()
    assert [r["task_id"] for r in rows] == [e["task_id"] for e in stored]
    assert [json.loads(r["score_json"]) for r in rows] == [e["score"] for e in stored]
    assert [r["score_feasible"] for r in rows] == [e["score"]["feasible"] for e in stored]
    # the card names the run by its directory's name: no path of the exporting machine
    card_text = (with_run / "README.md").read_text()
    assert str(tmp_path) not in card_text and "run: scripted-greedy" in card_text
    # the resumed run must come from the same dataset
    again = invoke("run", "compass", "--agent", "scripted:greedy", "--limit", "2", "--resume",
                   "--no-progress", "--out", tmp_path / "dataset", "--data-dir", compass_data)  # fmt: skip
    assert again.exit_code != 0 and "tasks_from" in again.output


def copy(dataset: Path, tmp_path: Path, name: str = "copy") -> Path:
    import shutil

    out = tmp_path / name
    shutil.copytree(dataset, out, ignore=shutil.ignore_patterns(".cache"))
    return out


def rewrite_row(directory: Path, change) -> None:
    """Change the first task row's record in place (as a person editing the file would)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = directory / "data" / "test-00000-of-00001.parquet"
    rows = pq.read_table(path).to_pylist()
    record = json.loads(rows[0]["task_json"])
    change(record)
    rows[0]["task_json"] = json.dumps(record)
    pq.write_table(pa.Table.from_pylist(rows), path)


def reseal(directory: Path, change=None) -> None:
    """Recompute the card's hashes over the files as they are now (a careful forger)."""
    import pyarrow.parquet as pq
    import yaml

    from travelgym.integrations.hf_dataset import rows_sha256
    from travelgym.integrations.hf_dataset_card import content_sha256

    path = directory / "README.md"
    front, rest = path.read_text().split("\n---", 1)
    data = yaml.safe_load(front[4:])
    meta = data["travelgym"]
    for entry in [*meta["splits"].values(), *meta.get("ground_truth", {}).values()]:
        entry["rows_sha256"] = rows_sha256(pq.read_table(directory / entry["file"]).to_pylist())
    if change is not None:
        change(meta)
    meta["content_sha256"] = content_sha256(meta)
    path.write_text("---\n" + yaml.safe_dump(data, sort_keys=False) + "---" + rest)


def refused(directory: Path, data: Path, tmp_path: Path, *extra) -> str:
    result = invoke("run", "compass", "--agent", "scripted:greedy", "--limit", "1",
                    "--no-progress", "--out", tmp_path / "runs", "--data-dir", data,
                    "--tasks-from", directory, *extra)  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and result.output.startswith("Error: ")
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert not (tmp_path / "runs" / "scripted-greedy" / "episodes.jsonl").exists()
    return result.output


def test_tampered_rows_are_refused(compass_dataset, compass_data, tmp_path):
    forged = copy(compass_dataset, tmp_path)

    def cheaper(record):
        record["story"] = "an easier task"

    rewrite_row(forged, cheaper)
    assert "rows_sha256" in refused(forged, compass_data, tmp_path)
    reseal(forged)  # hashes recomputed: the row still differs from the suite's own task
    assert "differs from compass's task" in refused(forged, compass_data, tmp_path)


def test_a_dataset_of_other_data_or_an_old_version_is_refused(compass_dataset, compass_data,
                                                              tmp_path):  # fmt: skip
    other = copy(compass_dataset, tmp_path)
    reseal(other, lambda m: m["splits"]["test"].update(db_content_hash="0" * 64))
    assert "made from other data or another version" in refused(other, compass_data, tmp_path)
    older = copy(compass_dataset, tmp_path, "older")
    reseal(older, lambda m: m["splits"]["test"]["data"].update(ground_truth_format_version="1"))
    message = refused(older, compass_data, tmp_path)
    assert "another version" in message and "ground_truth_format_version" in message
    # a hand-edited card (hashes left as they were) is refused too
    edited = copy(compass_dataset, tmp_path, "edited")
    text = (edited / "README.md").read_text().replace("task_seed: 2025", "task_seed: 7")
    (edited / "README.md").write_text(text)
    assert "content_sha256" in refused(edited, compass_data, tmp_path)


def test_bad_directories_give_one_line_errors(compass_dataset, compass_data, tmp_path):
    result = invoke("run", "compass", "--agent", "scripted:greedy", "--limit", "1",
                    "--no-progress", "--out", tmp_path / "runs", "--data-dir", compass_data,
                    "--tasks-from", tmp_path / "missing")  # fmt: skip
    assert result.exit_code == 2 and "missing' does not exist" in result.output
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "not a travelgym dataset" in refused(empty, compass_data, tmp_path)
    (empty / "README.md").write_text("---\npretty_name: x\n---\n# some dataset\n")
    assert "not a travelgym dataset" in refused(empty, compass_data, tmp_path)
    gone = copy(compass_dataset, tmp_path)
    (gone / "data" / "test-00000-of-00001.parquet").write_bytes(b"not parquet")
    assert "Parquet" in refused(gone, compass_data, tmp_path)


def test_a_task_outside_the_dataset_is_refused(compass_data, tmp_path):
    from travelgym.core.registry import get_suite

    need_datasets()
    level3 = tmp_path / "level3"
    result = invoke("export", "dataset", "compass", "--out", level3, "--level", "3",
                    "--data-dir", compass_data)  # fmt: skip
    assert result.exit_code == 0, result.output
    suite = get_suite("compass")
    rows = load(level3)["test"]
    assert rows.num_rows == len(suite.list_tasks(suite.options(level=3), compass_data))
    assert set(rows["level"]) == {3}
    level1 = suite.list_tasks(suite.options(level=1), compass_data)[0].task_id
    message = refused(level3, compass_data, tmp_path, "--tasks", level1)
    assert f"{level1} is not in the dataset's test split" in message
    # without --tasks the run takes the dataset's level-3 tasks
    summary = run_compass(tmp_path / "ok", compass_data, "--tasks-from", level3)
    assert set(summary["by_level"]) == {"3"}


def test_export_refuses_a_foreign_directory_and_keeps_it(compass_data, tmp_path):
    need_datasets()
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    result = invoke("export", "dataset", "compass", "--out", out, "--level", "1",
                    "--data-dir", compass_data)  # fmt: skip
    assert result.exit_code == 1 and "no travelgym dataset" in result.output
    assert (out / "notes.txt").read_text() == "keep me"
