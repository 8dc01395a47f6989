"""``ingest travelplanner`` reads bounded input: numbers finite and in range (one line naming
the file, the row and the field), and Parquet files refused, before their rows are built, when
they would decode to far more than their size."""

from __future__ import annotations

import csv
import json

import pytest

from tests.suites.travelplanner.conftest import as_exported, query_rows, write_csv
from travelgym.suites.travelplanner.database import DatabaseError
from travelgym.suites.travelplanner.dataset import DatasetError
from travelgym.suites.travelplanner.ingest import ingest


def _rows_with(field: str, value) -> list[dict]:
    rows = [as_exported(r) for r in query_rows()]
    rows[0][field] = value
    return rows


@pytest.mark.parametrize(("field", "value", "shown"), [
    ("days", "1e300", "'1e300'"),  # the issue's
    ("people_number", "1" + "0" * 30, repr("1" + "0" * 30)),  # variant
    ("budget", "1e300", "'1e300'"),  # variant: a budget stored as 1e300 before
])  # fmt: skip
def test_a_number_out_of_range_in_a_csv_names_the_row_and_field(tmp_path, field, value, shown):
    path = write_csv(tmp_path / "validation.csv", _rows_with(field, value))
    with pytest.raises(DatasetError) as caught:
        ingest(path, None, tmp_path, out=tmp_path / "tp.sqlite")
    message = str(caught.value)
    assert message.startswith(f"{path}: row 1: field {field!r}: {shown}"), message
    assert "out of range" in message and "\n" not in message
    assert not (tmp_path / "tp.sqlite").exists()


def test_a_huge_number_in_jsonl_is_refused(tmp_path):
    # variant: a JSON number (not text), the integer of 20 digits that SQLite cannot hold
    row = {k: v for k, v in query_rows()[0].items() if k != "annotated_plan"}
    row["reference_information"] = repr(row["reference_information"])
    row["days"] = 10**20
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(
        DatasetError,
        match=r"row 1: field 'days': 100000000000000000000 is out of range \(at most 366\)",
    ):
        ingest(path, None, tmp_path, out=tmp_path / "tp.sqlite")


@pytest.mark.parametrize("cell", ["inf", "nan", "1e400"])
def test_a_database_cell_that_is_no_finite_number_is_refused(tp_dataset_dir, tp_database_dir,
                                                             tmp_path, cell):  # fmt: skip
    # variant: the database's files, whose whole numbers were int(float(cell)) before
    path = tp_database_dir / "accommodations/clean_accommodations_2022.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    rows[0]["minimum nights"] = cell
    write_csv(path, rows)
    with pytest.raises(DatabaseError) as caught:
        ingest(tp_dataset_dir, tp_database_dir, tmp_path)
    message = str(caught.value)
    assert message == (f"{path}: row 1: column 'minimum nights': expected a finite number of at "
                       f"most 1e+12, got {cell!r}")  # fmt: skip


def _bomb(path, rows: int, value_size: int, dictionary: bool) -> None:
    """A Parquet file of TravelPlanner's columns whose ``reference_information`` holds one value
    of ``value_size`` bytes in each of ``rows`` rows: written as a dictionary (one copy, every
    row pointing at it), or plainly and compressed (so the file stays small either way)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    first = as_exported(query_rows()[0])
    columns = {k: pa.array([v] * rows) for k, v in first.items() if k != "reference_information"}
    big = "x" * value_size
    if dictionary:
        indices = pa.array([0] * rows, pa.int32())
        columns["reference_information"] = pa.DictionaryArray.from_arrays(indices, pa.array([big]))
    else:
        columns["reference_information"] = pa.array([big] * rows)
    pq.write_table(pa.table(columns), path, compression="zstd", use_dictionary=dictionary)


def test_a_parquet_dictionary_bomb_is_refused_before_decoding(tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "train.parquet"
    _bomb(path, rows=1100, value_size=64 << 10, dictionary=True)  # 72 MB from a few KB
    assert path.stat().st_size < 100_000
    with pytest.raises(DatasetError) as caught:
        ingest(path, None, tmp_path, out=tmp_path / "tp.sqlite")
    message = str(caught.value)
    assert message.startswith(f"{path}: refused: more than 67108864 bytes once decoded"), message


def test_a_parquet_compression_bomb_is_refused_from_its_metadata(tmp_path):
    # variant: no dictionary, one long run of a byte that compresses a thousandfold
    pytest.importorskip("pyarrow")
    path = tmp_path / "train.parquet"
    _bomb(path, rows=70, value_size=1 << 20, dictionary=False)  # 70 MiB in a page
    assert path.stat().st_size < 100_000
    with pytest.raises(DatasetError) as caught:
        ingest(path, None, tmp_path, out=tmp_path / "tp.sqlite")
    message = str(caught.value)
    assert message.startswith(f"{path}: refused: ") and "bytes uncompressed" in message, message
