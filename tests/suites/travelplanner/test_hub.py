"""``ingest travelplanner --dataset OWNER/NAME[:SPLIT]``: read through ``datasets`` from the local
Hugging Face cache, offline; without ``datasets`` or without the data, one line saying how to
get it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.suites.travelplanner.conftest import as_exported, query_rows
from travelgym.cli import main
from travelgym.suites.travelplanner.dataset import DatasetError
from travelgym.suites.travelplanner.hub import parse_hub_name, read_hub_dataset
from travelgym.suites.travelplanner.ingest import ingest

NAME = "travelgym-test/TinyPlanner"  # no such dataset on the Hub: only the cache can answer


def cache_dataset(cache: Path, name: str, splits: dict[str, list[dict]], tmp: Path) -> None:
    """Put ``splits`` (rows as the Hub's export holds them) into the ``datasets`` cache at
    ``cache`` as a download of ``name`` would leave them: one configuration per split, named
    after it, as osunlp/TravelPlanner has."""
    pytest.importorskip("datasets")
    import pyarrow as pa
    import pyarrow.parquet as pq
    from datasets.naming import camelcase_to_snakecase
    from datasets.packaged_modules.parquet.parquet import Parquet

    owner, dataset = name.split("/")
    snake = camelcase_to_snakecase(dataset)
    for split, rows in splits.items():
        source = tmp / f"{split}.parquet"
        pq.write_table(pa.Table.from_pylist(rows), source)
        builder = Parquet(cache_dir=str(cache), dataset_name=snake, config_name=split,
                          data_files={split: str(source)}, hash="0" * 16)  # fmt: skip
        builder.download_and_prepare()
        # the builder names the configuration after its data files; a Hub download after the
        # configuration, under the owner's name
        config_dir = Path(builder.cache_dir).parents[1]
        target = cache / f"{owner}___{snake}" / split
        target.parent.mkdir(parents=True, exist_ok=True)
        config_dir.rename(target)


def offline_env(home: Path) -> dict[str, str]:
    """The environment of a machine without network whose Hugging Face cache is ``home``."""
    return {**os.environ, "HF_HOME": str(home), "HF_DATASETS_CACHE": str(home / "datasets"),
            "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}  # fmt: skip


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """``travelgym ARGS`` in a fresh interpreter (``datasets`` reads its cache settings once)."""
    return subprocess.run([sys.executable, "-m", "travelgym.cli", *args], capture_output=True,
                          text=True, timeout=300, env=env)  # fmt: skip


@pytest.fixture
def hub_cache(tmp_path) -> Path:
    """A Hugging Face home whose datasets cache holds NAME's validation split (the three
    queries of the tiny dataset)."""
    home = tmp_path / "hf"
    cache_dataset(home / "datasets", NAME, {"validation": [as_exported(r) for r in query_rows()]},
                  tmp_path)  # fmt: skip
    return home


def test_a_dataset_name_ingests_offline_from_the_local_cache(hub_cache, tp_dataset_dir, tmp_path):
    data_dir = tmp_path / "data"
    proc = run_cli("ingest", "travelplanner", "--dataset", f"{NAME}:validation", "--data-dir",
                   str(data_dir), "--json", env=offline_env(hub_cache))  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    meta = json.loads(proc.stdout)
    assert meta["splits"] == {"validation": 3} and meta["dataset"] == f"{NAME}:validation"
    # the same rows from the exported file give the same queries, hence the same hash
    local = ingest(tp_dataset_dir / "validation.csv", None, None, out=tmp_path / "local.sqlite")
    assert meta["content_hash"] == local["content_hash"]


def test_a_split_not_in_the_cache_is_one_line_saying_how_to_get_it(hub_cache, tmp_path):
    # no split named: every split, and only validation was ever fetched
    proc = run_cli("ingest", "travelplanner", "--dataset", NAME, "--data-dir",
                   str(tmp_path / "data"), env=offline_env(hub_cache))  # fmt: skip
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr
    assert lines[-1].startswith(f"Error: {NAME}:train: cannot load it through `datasets`")
    assert "once with network access" in lines[-1] and "--dataset PATH" in lines[-1]
    assert not (tmp_path / "data" / "travelplanner").exists()


def test_without_datasets_one_line_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)  # import datasets -> ImportError
    with pytest.raises(DatasetError, match=r"pip install 'travelgym\[datasets\]'"):
        read_hub_dataset("osunlp/TravelPlanner:validation")
    result = CliRunner().invoke(main, ["ingest", "travelplanner", "--dataset",
                                       "osunlp/TravelPlanner", "--data-dir",
                                       str(tmp_path / "data")])  # fmt: skip
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "needs the `datasets` library" in lines[0]


@pytest.mark.parametrize(
    ("text", "split", "problem"),
    [("osunlp/TravelPlanner:dev", None, "unknown split 'dev'"),
     ("osunlp/TravelPlanner:test", "validation", "names split 'test' but --split is "
                                                 "'validation'")],
)  # fmt: skip
def test_a_bad_split_is_refused_before_loading(text, split, problem):
    with pytest.raises(DatasetError, match=problem):
        read_hub_dataset(text, split)


def test_a_missing_path_that_is_no_dataset_name_is_named(tmp_path):
    missing = tmp_path / "nowhere" / "validation.csv"
    result = CliRunner().invoke(main, ["ingest", "travelplanner", "--dataset", str(missing),
                                       "--data-dir", str(tmp_path / "data")])  # fmt: skip
    assert result.exit_code == 1
    assert f"--dataset {missing}: no such file or directory" in result.output


def test_names_and_paths_are_told_apart():
    assert parse_hub_name("osunlp/TravelPlanner") == ("osunlp/TravelPlanner", None)
    assert parse_hub_name("osunlp/TravelPlanner:test") == ("osunlp/TravelPlanner", "test")
    for path in (
        "/data/validation.csv",
        "./data/x",
        "data",
        "a/b/c",
        "~/tp/validation.csv",
        "data/validation.csv",
        "exports/test.parquet",
    ):
        assert parse_hub_name(path) is None
