"""Reading a Parquet file given from outside (a dataset directory, TravelPlanner's files) within
a budget, so that a small file cannot unpack into gigabytes.

Parquet compresses pages and dictionary-encodes values, so a file of kilobytes can describe
gigabytes of rows: a compressed page of one repeated byte, or one long value of a dictionary
that a million rows point at. :func:`read_parquet_rows` refuses such a file before building
its rows: first from the file's metadata (row count, leaf values, uncompressed page bytes), then
from the decoded size of its values, measured while every text column is still held as a
dictionary (each distinct value once), before any row is expanded into Python objects.

The byte budget is :data:`RATIO` times the file's size, and never below :data:`FLOOR_BYTES`:
real data compresses a few times over, a bomb thousands of times.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

FLOOR_BYTES = 64 << 20  # decoded bytes any file may have, however small
RATIO = 100  # decoded bytes per byte of file, above the floor
MAX_VALUES = 50_000_000  # leaf values (one per scalar, list element or struct field)


class ParquetBudgetError(ValueError):
    """A Parquet file larger, once decoded, than the budget allows (the message says which)."""


def byte_budget(size: int) -> int:
    """The decoded bytes allowed for a file of ``size`` bytes."""
    return max(FLOOR_BYTES, RATIO * size)


def check_metadata(metadata: Any, max_rows: int, max_bytes: int) -> None:
    """Refuse, from the file's metadata alone, more rows than ``max_rows``, more leaf values
    than :data:`MAX_VALUES` or more uncompressed page bytes than ``max_bytes``."""
    if metadata.num_rows > max_rows:
        raise ParquetBudgetError(f"{metadata.num_rows} rows, more than the {max_rows} allowed")
    values = pages = 0
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        for c in range(group.num_columns):
            column = group.column(c)
            values += max(column.num_values, 0)
            pages += max(column.total_uncompressed_size, 0)
    if values > MAX_VALUES:
        raise ParquetBudgetError(f"{values} values, more than the {MAX_VALUES} allowed")
    if pages > max_bytes:
        raise ParquetBudgetError(f"{pages} bytes uncompressed, more than the {max_bytes} "
                                 "allowed for a file of its size")  # fmt: skip


def dense_bytes(array: Any) -> int:
    """About how many bytes ``array`` (an Arrow array) holds once every dictionary value is
    written out where it is used: what converting it to rows costs at least."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if pa.types.is_dictionary(kind):
        values = array.dictionary
        if pa.types.is_primitive(values.type):
            return int(values.nbytes // max(len(values), 1)) * len(array) + 8 * len(array)
        sizes = pc.binary_length(values)  # only text and binary columns are read as dictionaries
        used = pc.sum(pc.take(sizes, array.indices)).as_py() if len(array) else 0
        return int(used or 0) + 8 * len(array)
    if (pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_map(kind)
            or pa.types.is_fixed_size_list(kind)):  # fmt: skip
        return dense_bytes(array.flatten()) + 8 * len(array)
    if pa.types.is_struct(kind):
        return sum(dense_bytes(array.field(i)) for i in range(kind.num_fields)) + len(array)
    return int(array.nbytes)


def read_parquet_rows(path: str | os.PathLike[str], max_rows: int) -> list[dict[str, Any]]:
    """The rows of the Parquet file ``path`` as dicts, refused with
    :class:`ParquetBudgetError` when its metadata or its decoded values exceed the budget
    (``max_rows`` rows, :func:`byte_budget` bytes) before any row is built. Other failures
    (a missing or damaged file) raise what ``pyarrow`` raises."""
    import pyarrow.parquet as pq

    path = Path(path)
    max_bytes = byte_budget(path.stat().st_size)
    with pq.ParquetFile(path) as probe:
        check_metadata(probe.metadata, max_rows, max_bytes)
        texts = [column.path for column in probe.schema if column.physical_type == "BYTE_ARRAY"]
    with pq.ParquetFile(path, read_dictionary=texts) as source:
        table = source.read()
    total = 0
    for column in table.columns:
        for chunk in column.chunks:
            total += dense_bytes(chunk)
            if total > max_bytes:
                raise ParquetBudgetError(f"more than {max_bytes} bytes once decoded, more "
                                         "than allowed for a file of its size")  # fmt: skip
    return table.to_pylist()
