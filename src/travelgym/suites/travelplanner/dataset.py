"""Read the TravelPlanner dataset as the ``datasets`` library exports it: CSV, JSONL or Parquet,
one file per split, or a directory holding files named after their split (``validation.csv``,
``test.jsonl``, ``train-00000-of-00001.parquet``).

In the CSV and Parquet exports ``date``, ``local_constraint``, ``reference_information`` and
``annotated_plan`` are strings holding Python-literal (or JSON) text; they are parsed with
:func:`ast.literal_eval` or :func:`json.loads`, never evaluated. Every malformed input raises
:class:`DatasetError`, one line naming the file, the row (1-based, as ``idx``) and the field.
``reference_information`` may also be the TravelPlanner repository's object of description ->
records (its ``database/*_ref_info.jsonl``); it is read as the Hugging Face column holds the same
data (:func:`reference_entries`).
"""

from __future__ import annotations

import ast
import csv
import datetime as dt
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError

from travelgym.bounded_parquet import ParquetBudgetError, read_parquet_rows
from travelgym.core.errors import UserError
from travelgym.suites.travelplanner.frames import render_records
from travelgym.suites.travelplanner.records import Level, LocalConstraint, Query, Split

SPLITS: tuple[str, ...] = get_args(Split)
LEVELS: tuple[str, ...] = get_args(Level)
COLUMNS = ("org", "dest", "days", "visiting_city_number", "date", "people_number",
           "local_constraint", "budget", "query", "level", "reference_information",
           "annotated_plan")  # fmt: skip
OPTIONAL = frozenset({"annotated_plan"})  # the test split has no annotated plans
SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl", ".parquet": "parquet"}
PARQUET_EXTRA = "travelplanner"  # the pyproject extra that carries pyarrow
# the largest value a number field may hold (TravelPlanner's trips last 3, 5 or 7 days, visit
# up to 3 cities with up to 8 people and budgets of at most tens of thousands of dollars)
MAX_WHOLE = {"days": 366, "visiting_city_number": 100, "people_number": 1_000}
MAX_NUMBER = 1e12
MAX_ROWS = 100_000  # rows of one Parquet file (TravelPlanner's largest split has 1,000)


class DatasetError(UserError, ValueError):
    """A dataset file that cannot be read as TravelPlanner's (one line: file, row, field)."""


def read_dataset(path: str | os.PathLike[str], split: str | None = None) -> dict[str, list[Query]]:
    """Read the dataset at ``path``: a file (its split is ``split``, else its name's) or a
    directory of per-split files (only ``split`` when given). Returns ``{split: queries}``."""
    root = Path(path).expanduser()
    if split is not None and split not in SPLITS:
        raise DatasetError(f"unknown split {split!r}; splits: {', '.join(SPLITS)}")
    if root.is_dir():
        files = split_files(root)
        if split is not None:
            files = {split: files[split]} if split in files else {}
        if not files:
            wanted = split or "train, validation or test"
            raise DatasetError(f"{root}: no dataset file for {wanted} (expected e.g. "
                               f"validation.csv, test.jsonl or train.parquet)")  # fmt: skip
        return {name: read_split(paths, name) for name, paths in files.items()}
    if not root.is_file():
        raise DatasetError(f"{root}: dataset file or directory not found")
    name = split or split_of(root)
    if name is None:
        raise DatasetError(f"{root}: cannot tell the split from the file name; pass the split "
                           f"({', '.join(SPLITS)})")  # fmt: skip
    return {name: read_split([root], name)}


def split_of(path: Path) -> str | None:
    """The split a file's name gives (``validation.csv``, ``test-00000-of-00001.parquet``)."""
    stem = path.name[: -len(path.suffix)] if path.suffix else path.name
    return next((s for s in SPLITS if stem == s or stem.startswith(s + "-")), None)


def split_files(root: Path) -> dict[str, list[Path]]:
    """The dataset files of a directory, by split, in name order."""
    found: dict[str, list[Path]] = {}
    for path in sorted(root.iterdir()):
        name = split_of(path)
        if path.is_file() and path.suffix.lower() in SUFFIXES and name is not None:
            found.setdefault(name, []).append(path)
    return {s: found[s] for s in SPLITS if s in found}


def read_split(paths: list[Path], split: str) -> list[Query]:
    """The queries of one split, read from ``paths`` in order (idx counts across them)."""
    queries: list[Query] = []
    for path in paths:
        for row_number, row in _rows(path):
            idx = len(queries) + 1
            queries.append(parse_row(row, split, idx, Loc(path, row_number)))
    return queries


def read_rows(rows: Iterable[dict[str, Any]], split: str, source: str | Path,
              columns: list[str]) -> list[Query]:  # fmt: skip
    """The queries of one split from rows already decoded (e.g. a ``datasets.Dataset``) with
    ``columns``; ``source`` names them in errors."""
    _check_columns(source, columns)
    return [parse_row(row, split, number, Loc(source, number))
            for number, row in enumerate(rows, 1)]  # fmt: skip


class Loc:
    """Where a value came from, for error messages."""

    def __init__(self, path: Path | str, row: int) -> None:
        self.path, self.row = path, row

    def error(self, field: str, problem: str) -> DatasetError:
        """A :class:`DatasetError` naming this file, row and ``field``."""
        return DatasetError(f"{self.path}: row {self.row}: field {field!r}: {problem}")


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    kind = SUFFIXES.get(path.suffix.lower())
    if kind == "csv":
        yield from _csv_rows(path)
    elif kind == "jsonl":
        yield from _jsonl_rows(path)
    elif kind == "parquet":
        yield from _parquet_rows(path)
    else:
        raise DatasetError(f"{path}: unsupported dataset file type {path.suffix!r} "
                           f"(expected {', '.join(SUFFIXES)})")  # fmt: skip


def _check_columns(path: Path | str, columns: list[str]) -> None:
    missing = [c for c in COLUMNS if c not in columns and c not in OPTIONAL]
    if missing:
        raise DatasetError(f"{path}: missing column {missing[0]!r} (columns present: "
                           f"{', '.join(columns) or 'none'})")  # fmt: skip


def _csv_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    # reference information runs to megabytes per row; the default cap is 128 KiB
    csv.field_size_limit(2**31 - 1)
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            _check_columns(path, list(reader.fieldnames or []))
            for number, row in enumerate(reader, 1):
                if None in row:
                    raise DatasetError(f"{path}: row {number}: more values than columns")
                yield number, row
    except (UnicodeDecodeError, csv.Error) as exc:
        raise DatasetError(f"{path}: not a readable CSV file ({exc})") from None


def _jsonl_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc})") from None
    number = 0
    for line in lines:
        if not line.strip():
            continue
        number += 1
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise DatasetError(f"{path}: row {number}: not a JSON object ({exc})") from None
        if not isinstance(row, dict):
            raise DatasetError(f"{path}: row {number}: not a JSON object")
        if number == 1:
            _check_columns(path, list(row))
        yield number, row


def _parquet_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DatasetError(f"{path}: reading Parquet needs pyarrow (pip install "
                           f"'travelgym[{PARQUET_EXTRA}]'); or export the dataset as CSV or "
                           f"JSONL") from None  # fmt: skip
    try:
        _check_columns(path, pq.ParquetFile(path).schema_arrow.names)
        rows = read_parquet_rows(path, max_rows=MAX_ROWS)
    except DatasetError:
        raise
    except ParquetBudgetError as exc:
        raise DatasetError(f"{path}: refused: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several unrelated types
        raise DatasetError(f"{path}: not a readable Parquet file ({exc})") from None
    yield from enumerate(rows, 1)


def parse_row(row: dict[str, Any], split: str, idx: int, loc: Loc) -> Query:
    """One dataset row as a :class:`Query` (``task_id`` ``"<split>-<idx>"``)."""
    for column in COLUMNS:
        if column not in row and column not in OPTIONAL:
            raise loc.error(column, "missing")
    level = _text(row, "level", loc).strip().lower()
    if level not in LEVELS:
        raise loc.error("level", f"{level!r} is not one of {', '.join(LEVELS)}")
    values = {
        "task_id": f"{split}-{idx}",
        "split": split,
        "idx": idx,
        "org": _text(row, "org", loc),
        "dest": _text(row, "dest", loc),
        "days": _integer(row, "days", loc),
        "visiting_city_number": _integer(row, "visiting_city_number", loc),
        "date": _dates(row, loc),
        "people_number": _integer(row, "people_number", loc),
        "local_constraint": _constraint(row, loc),
        "budget": _number(row, "budget", loc),
        "query": _text(row, "query", loc),
        "level": level,
        "reference_information": _reference(row, loc),
        "annotated_plan": _plan(row, loc),
    }
    try:
        return Query(**values)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise loc.error(str(err["loc"][0]), err["msg"]) from None


def _text(row: dict[str, Any], field: str, loc: Loc) -> str:
    value = row[field]
    if not isinstance(value, str) or not value.strip():
        raise loc.error(field, f"expected text, got {_show(value)}")
    return value


def _number(row: dict[str, Any], field: str, loc: Loc, most: float = MAX_NUMBER) -> float:
    value = row[field]
    if isinstance(value, str):
        try:
            value = float(value.strip().replace(",", ""))
        except ValueError:
            raise loc.error(field, f"expected a number, got {_show(value)}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise loc.error(field, f"expected a number, got {_show(value)}")
    if value < 0 or value in (float("inf"), float("-inf")):
        raise loc.error(field, f"expected a non-negative finite number, got {_show(value)}")
    if value > most:
        raise loc.error(field, f"{_show(row[field])} is out of range (at most {most:g})")
    return float(value)


def _integer(row: dict[str, Any], field: str, loc: Loc) -> int:
    value = _number(row, field, loc, most=MAX_WHOLE[field])
    if not value.is_integer() or value < 1:
        raise loc.error(field, f"expected a positive whole number, got {_show(row[field])}")
    return int(value)


def _literal(row: dict[str, Any], field: str, loc: Loc) -> Any:
    """A field that may hold Python-literal or JSON text (decoded) or the value itself."""
    value = row.get(field)
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass  # TypeError: a literal that cannot be built, e.g. an unhashable dict key
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise loc.error(field, f"not a Python or JSON literal: {_show(value)}") from None


def _dates(row: dict[str, Any], loc: Loc) -> list[str]:
    value = _literal(row, "date", loc)
    if not isinstance(value, (list, tuple)) or not value:
        raise loc.error("date", f"expected a list of dates, got {_show(row['date'])}")
    if not all(_is_date(item) for item in value):
        raise loc.error("date", f"expected YYYY-MM-DD dates, got {_show(row['date'])}")
    return list(value)


def _is_date(value: Any) -> bool:
    if not isinstance(value, str) or len(value) != 10:
        return False
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _constraint(row: dict[str, Any], loc: Loc) -> LocalConstraint:
    value = _literal(row, "local_constraint", loc)
    if not isinstance(value, dict):
        raise loc.error(
            "local_constraint", f"expected a dict, got {_show(row['local_constraint'])}"
        )
    try:
        return LocalConstraint.model_validate(value)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise loc.error("local_constraint", f"{where}: {err['msg']}") from None


def _reference(row: dict[str, Any], loc: Loc) -> list[dict[str, str]] | None:
    value = _literal(row, "reference_information", loc)
    if value is None:
        return None
    if isinstance(value, dict):
        return reference_entries(value, loc)
    if not isinstance(value, list) or not all(isinstance(u, dict) for u in value):
        raise loc.error("reference_information", "expected a list of {'Description', "
                                                 "'Content'} entries or an object of "
                                                 "description: records")  # fmt: skip
    out = []
    for unit in value:
        if not isinstance(unit.get("Description"), str) or "Content" not in unit:
            raise loc.error("reference_information", f"entry without Description and Content: "
                                                     f"{_show(unit)}")  # fmt: skip
        content = unit["Content"]
        # a tool's text, or (in re-exports) its rows; kept as text either way
        text = content if isinstance(content, str) else json.dumps(content, default=str)
        out.append({"Description": unit["Description"], "Content": text})
    return out


_FLIGHT = re.compile(r"flights? from (.+) to (.+) on (\d{4}-\d{2}-\d{2})", re.I)
_CITY = re.compile(r"(accommodation|restaurant|attraction)s? in .+", re.I)


def reference_entries(value: dict[str, Any], loc: Loc) -> list[dict[str, str]]:
    """The TravelPlanner repository's reference information (``database/*_ref_info.jsonl``:
    one object of description -> records, text or city names) as the Hugging Face column
    holds it: ``{"Description", "Content"}`` entries in the object's order whose tables are the
    ``DataFrame.to_string`` text TravelPlanner printed (flights without the index, the rest
    with it), so the same data in either form gives the same queries and content hash."""
    out = []
    for description, content in value.items():
        if isinstance(content, str):
            text = content
        elif isinstance(content, list) and content and all(isinstance(r, dict) for r in content):
            text = render_records(content, index=not _FLIGHT.fullmatch(description.strip()))
        elif isinstance(content, list) and not content:
            text = _nothing_found(description)
        elif isinstance(content, list) and all(isinstance(c, str) for c in content):
            text = json.dumps(content)  # a city list, as the Hugging Face column's is kept
        else:
            raise loc.error("reference_information", f"entry {_show(description)}: expected "
                                                     f"text, a list of records or a list of "
                                                     f"names, got {_show(content)}")  # fmt: skip
        out.append({"Description": description, "Content": text})
    return out


def _nothing_found(description: str) -> str:
    """TravelPlanner's sentence for a search with no rows (what its text form holds)."""
    if match := _FLIGHT.fullmatch(description.strip()):
        origin, dest, date = match.groups()
        return f"There is no flight from {origin} to {dest} on {date}."
    if match := _CITY.fullmatch(description.strip()):
        return f"There is no {match.group(1).lower()} in this city."
    return "[]"


def _plan(row: dict[str, Any], loc: Loc) -> list[dict[str, Any]] | None:
    value = _literal(row, "annotated_plan", loc)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(d, dict) for d in value):
        raise loc.error("annotated_plan", f"expected a list of dicts, got {_show(value)}")
    return value


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
