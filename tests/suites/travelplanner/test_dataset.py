"""Reading the dataset: every export format gives the same queries; malformed input is a
one-line error naming the file, the row and the field."""

from __future__ import annotations

import json
import sys

import pytest

from tests.suites.travelplanner.conftest import as_exported, query_rows, write_csv
from travelgym.core.errors import UserError
from travelgym.suites.travelplanner.dataset import DatasetError, read_dataset

HAS_PYARROW = True
try:
    import pyarrow  # noqa: F401
except ImportError:
    HAS_PYARROW = False


def _content(query):
    return query.model_dump(exclude={"task_id", "split", "annotated_plan"})


def test_a_directory_gives_every_split(tp_dataset_dir):
    splits = read_dataset(tp_dataset_dir)
    assert set(splits) == {"validation", "test"} | ({"train"} if HAS_PYARROW else set())
    easy, medium, hard = splits["validation"]
    assert [q.task_id for q in splits["validation"]] == ["validation-1", "validation-2",
                                                         "validation-3"]  # fmt: skip
    assert [q.idx for q in splits["test"]] == [1, 2, 3]
    assert (easy.level, medium.level, hard.level) == ("easy", "medium", "hard")
    assert easy.date == ["2022-03-16", "2022-03-17", "2022-03-18"]
    assert (easy.days, easy.people_number, easy.budget) == (3, 1, 1700.0)
    assert medium.local_constraint.house_rule == "pets"
    assert hard.local_constraint.cuisine == ["Chinese"]
    assert hard.local_constraint.room_type == "entire room"
    assert hard.local_constraint.transportation == "no self-driving"
    assert easy.reference_information[0]["Description"] == "Attractions in Rockford"
    assert easy.annotated_plan[1]["dinner"] == "Coco Bambu, Rockford"
    assert all(q.annotated_plan is None for q in splits["test"])


def test_every_format_reads_the_same_queries(tp_dataset_dir):
    splits = read_dataset(tp_dataset_dir)
    expected = [_content(q) for q in splits["validation"]]
    assert [_content(q) for q in splits["test"]] == expected
    if HAS_PYARROW:
        assert [_content(q) for q in splits["train"]] == expected
        assert splits["train"][0].annotated_plan == splits["validation"][0].annotated_plan


def test_a_file_takes_its_split_from_the_flag_or_its_name(tp_dataset_dir, tmp_path):
    assert list(read_dataset(tp_dataset_dir / "validation.csv")) == ["validation"]
    only = read_dataset(tp_dataset_dir, split="test")
    assert list(only) == ["test"]
    other = tmp_path / "mine.csv"
    other.write_bytes((tp_dataset_dir / "validation.csv").read_bytes())
    assert read_dataset(other, split="train")["train"][2].task_id == "train-3"
    with pytest.raises(DatasetError, match="cannot tell the split"):
        read_dataset(other)
    with pytest.raises(DatasetError, match="unknown split"):
        read_dataset(other, split="dev")


def _one_line(exc: pytest.ExceptionInfo, *parts: str) -> str:
    message = str(exc.value)
    assert "\n" not in message
    assert isinstance(exc.value, UserError)
    for part in parts:
        assert part in message
    return message


def _broken_csv(tmp_path, row: int, **changes) -> object:
    rows = [as_exported(r) for r in query_rows()]
    rows[row - 1].update(changes)
    return write_csv(tmp_path / "validation.csv", rows)


def test_a_missing_column_names_the_file_and_the_column(tmp_path):
    rows = [as_exported(r) for r in query_rows()]
    for r in rows:
        del r["budget"]
    path = write_csv(tmp_path / "validation.csv", rows)
    with pytest.raises(DatasetError) as exc:
        read_dataset(path)
    _one_line(exc, str(path), "missing column 'budget'")


def test_the_test_split_needs_no_annotated_plan_but_the_rest_is_required(tmp_path):
    rows = [as_exported(r, test=True) for r in query_rows()]
    assert len(read_dataset(write_csv(tmp_path / "test.csv", rows))["test"]) == 3
    for r in rows:
        del r["reference_information"]
    with pytest.raises(DatasetError, match="missing column 'reference_information'"):
        read_dataset(write_csv(tmp_path / "test.csv", rows))


@pytest.mark.parametrize(("field", "value", "problem"), [
    ("date", "['2022-03-16', '2022-03-17'", "not a Python or JSON literal"),
    ("date", "['2022-02-30']", "YYYY-MM-DD"),
    ("date", "'2022-03-16'", "list of dates"),
    ("days", "three", "expected a number"),
    ("days", "2.5", "whole number"),
    ("budget", "lots", "expected a number"),
    ("people_number", "", "expected a number"),
    ("level", "extreme", "is not one of easy, medium, hard"),
    ("local_constraint", "{'house rule': 'pets', 'mood': 'happy'}", "mood"),
    ("local_constraint", "__import__('os')", "not a Python or JSON literal"),
    ("local_constraint", "{['house rule']: 'pets'}", "not a Python or JSON literal"),
    ("date", "{{'2022-03-16'}}", "not a Python or JSON literal"),
    ("reference_information", "[{'Content': 'x'}]", "Description"),
    ("annotated_plan", "[1, 2]", "list of dicts"),
    ("org", "", "expected text"),
])  # fmt: skip
def test_a_bad_value_names_the_file_the_row_and_the_field(tmp_path, field, value, problem):
    path = _broken_csv(tmp_path, 2, **{field: value})
    with pytest.raises(DatasetError) as exc:
        read_dataset(path)
    _one_line(exc, str(path), "row 2", f"field {field!r}", problem)


def test_jsonl_errors_name_the_row(tmp_path):
    rows = [json.dumps(r) for r in query_rows()]
    path = tmp_path / "test.jsonl"
    path.write_text(rows[0] + "\n\n" + "{not json\n")
    with pytest.raises(DatasetError) as exc:
        read_dataset(path)
    _one_line(exc, str(path), "row 2", "not a JSON object")
    bad = query_rows()[0] | {"days": True}
    path.write_text(json.dumps(bad) + "\n")
    with pytest.raises(DatasetError) as exc:
        read_dataset(path)
    _one_line(exc, "row 1", "field 'days'")


def test_parquet_without_pyarrow_says_which_extra_to_install(tmp_path, monkeypatch):
    path = tmp_path / "validation.parquet"
    path.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(DatasetError) as exc:
        read_dataset(path)
    _one_line(exc, str(path), "pyarrow", "travelgym[travelplanner]")


@pytest.mark.skipif(not HAS_PYARROW, reason="needs pyarrow")
def test_an_unreadable_parquet_file_is_a_clear_error(tmp_path):
    path = tmp_path / "validation.parquet"
    path.write_bytes(b"not parquet at all")
    with pytest.raises(DatasetError) as exc:
        read_dataset(path)
    _one_line(exc, str(path), "not a readable Parquet file")


def test_nothing_to_read(tmp_path):
    with pytest.raises(DatasetError, match="not found"):
        read_dataset(tmp_path / "absent")
    with pytest.raises(DatasetError, match="no dataset file"):
        read_dataset(tmp_path)
