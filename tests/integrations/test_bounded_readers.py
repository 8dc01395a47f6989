"""``run --tasks-from`` reads a dataset directory within bounds: the card's YAML with no
aliases (a few kilobytes of nested aliases stand for gigabytes) and no more than a card's size,
and each Parquet file within a row and byte budget checked before its rows are built."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import yaml

from travelgym.core.errors import UserError
from travelgym.integrations.hf_dataset import rows_sha256
from travelgym.integrations.hf_dataset_card import CARD, content_sha256, read_card, render_card
from travelgym.integrations.hf_dataset_read import read_rows


def _meta(**extra) -> dict:
    meta = {"format": "1", "suite": "compass", "db_seed": 0, "command": "travelgym export",
            "splits": {"test": {"file": "data/test.parquet", "rows": 1, "rows_sha256": "0",
                                "options": {}, "data": {"v": "1"}, "db_content_hash": "d",
                                "tasks_sha256": "t"}}, **extra}  # fmt: skip
    meta["content_sha256"] = content_sha256(meta)
    return meta


def _card(directory, front: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / CARD).write_text(f"---\n{front}\n---\n# a dataset\n", encoding="utf-8")


def _travelgym_block(meta: dict, extra_yaml: str) -> str:
    """The ``travelgym`` block as YAML (JSON is YAML) with ``extra_yaml`` lines added to it."""
    body = json.dumps(meta)
    return f"travelgym:\n  {extra_yaml}\n  " + "\n  ".join(
        f"{json.dumps(k)}: {json.dumps(v)}" for k, v in json.loads(body).items()
    )


def _alias_bomb(levels: int, width: int) -> tuple[str, dict[str, object]]:
    """YAML lines of nested aliases (each level ``width`` aliases of the level below) and the
    values they stand for, by key."""
    lines = [f"l0: &l0 {json.dumps(['lol'] * width)}"]
    values: dict[str, object] = {"l0": ["lol"] * width}
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
        values[f"l{i}"] = [values[f"l{i - 1}"]] * width
    return "\n  ".join(lines), values


def test_a_card_of_nested_aliases_is_refused_before_it_is_expanded(tmp_path):
    # the attack, kept small enough (about 3 MB expanded) that the old reader survives
    lines, values = _alias_bomb(levels=6, width=9)
    meta = _meta()
    meta.pop("content_sha256")
    sealed = content_sha256({**meta, **values})  # a sealed card: its hash holds
    _card(tmp_path / "ds", _travelgym_block({**meta, "content_sha256": sealed}, lines))
    assert (tmp_path / "ds" / CARD).stat().st_size < 8_000
    with pytest.raises(UserError) as caught:
        read_card(tmp_path / "ds")
    message = str(caught.value)
    assert "alias *l0 refused" in message and "\n" not in message, message


def test_a_merge_key_is_an_alias_too(tmp_path):
    # variant: one `<<: *anchor`, as a hand-written card might share a split's entry
    meta = _meta()
    split = meta["splits"]["test"]
    meta["splits"]["test"] = {}
    meta.pop("content_sha256")
    front = _travelgym_block(meta, f"base: &base {json.dumps(split)}")
    front = front.replace('"splits": {"test": {}}', '"splits": {"test": {<<: *base}}')
    sealed = {**meta, "base": split, "splits": {"test": split}}
    front = front.replace("travelgym:\n", "travelgym:\n  content_sha256: "
                          f"{content_sha256(sealed)}\n", 1)  # fmt: skip
    _card(tmp_path / "ds", front)
    with pytest.raises(UserError, match=r"alias \*base refused .* at line 8, column 27"):
        read_card(tmp_path / "ds")


def test_deep_nesting_and_an_oversized_card_are_one_line_errors(tmp_path):
    # variants: brackets nested past what the parser follows, and a card of megabytes
    _card(tmp_path / "deep", "travelgym: " + "[" * 50_000 + "]" * 50_000)
    with pytest.raises(UserError, match="front matter is not valid YAML \\(nested too deeply\\)"):
        read_card(tmp_path / "deep")
    _card(tmp_path / "big", "pretty_name: x\n# " + "x" * (5 << 20))
    with pytest.raises(UserError, match="larger than the 4194304 bytes a card may have"):
        read_card(tmp_path / "big")


def test_a_card_with_a_value_met_twice_is_written_without_aliases_and_reads_back(tmp_path):
    shared = {"v": "1"}
    meta = _meta()
    meta["splits"]["validation"] = {**meta["splits"]["test"], "file": "data/v.parquet"}
    for split in meta["splits"].values():
        split["data"] = shared  # the same object twice: a plain dumper writes an alias
    meta["content_sha256"] = content_sha256(meta)
    suite = SimpleNamespace(name="compass", title="COMPASS", description="the suite",
                            answer_key_fields=(), dataset_column_help={})  # fmt: skip
    text = render_card(suite, meta, [])
    assert "&" not in text.split("\n---", 1)[0] and "*id" not in text
    (tmp_path / CARD).write_text(text, encoding="utf-8")
    assert read_card(tmp_path) == meta
    assert yaml.safe_load(text.split("\n---", 1)[0][4:])["travelgym"] == meta


def _parquet(directory, table) -> dict:
    import pyarrow.parquet as pq

    (directory / "data").mkdir(parents=True, exist_ok=True)
    pq.write_table(table, directory / "data" / "test.parquet", compression="zstd")
    return {"file": "data/test.parquet", "rows": table.num_rows, "rows_sha256": "0"}


def test_a_parquet_dictionary_bomb_is_refused_before_its_rows_are_built(tmp_path):
    pa = pytest.importorskip("pyarrow")
    rows = 1100  # each pointing at one 64 KiB value: 72 MB from a few KB
    big = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()),
                                         pa.array(["x" * (64 << 10)]))  # fmt: skip
    entry = _parquet(tmp_path, pa.table({"task_id": [str(i) for i in range(rows)],
                                         "task_json": big}))  # fmt: skip
    assert (tmp_path / entry["file"]).stat().st_size < 100_000
    with pytest.raises(UserError) as caught:
        read_rows(tmp_path, entry)
    message = str(caught.value)
    assert "refused: more than 67108864 bytes once decoded" in message, message


def test_a_bomb_inside_a_list_column_is_refused(tmp_path):
    # variant: the repeated value is an element of a list column (a nested leaf)
    pa = pytest.importorskip("pyarrow")
    rows = 1100
    values = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()),
                                            pa.array(["y" * (64 << 10)]))  # fmt: skip
    offsets = pa.array(range(rows + 1), pa.int32())
    entry = _parquet(tmp_path, pa.table({"tags": pa.ListArray.from_arrays(offsets, values)}))
    with pytest.raises(UserError, match="refused: more than 67108864 bytes once decoded"):
        read_rows(tmp_path, entry)


def test_more_rows_than_the_card_gives_are_refused_from_the_metadata(tmp_path):
    # variant: rows beyond the card's count, refused before any is read
    pa = pytest.importorskip("pyarrow")
    entry = _parquet(tmp_path, pa.table({"task_id": [str(i) for i in range(5000)]}))
    entry["rows"] = 3
    with pytest.raises(UserError, match="refused: 5000 rows, more than the 3 allowed"):
        read_rows(tmp_path, entry)


def test_an_ordinary_file_reads_as_before(tmp_path):
    pa = pytest.importorskip("pyarrow")
    rows = [{"task_id": "a", "task_json": '{"x": 1}', "tags": ["p", "q"]},
            {"task_id": "b", "task_json": '{"x": 2}', "tags": []}]  # fmt: skip
    entry = _parquet(tmp_path, pa.Table.from_pylist(rows))
    entry["rows_sha256"] = rows_sha256(rows)
    assert read_rows(tmp_path, entry) == rows
