"""``travelgym run SUITE --tasks-from DIR``: the tasks of an exported dataset, checked before a
run uses them. The card's ``travelgym`` block must be intact, each file's rows must hash to the
card's value (tampered rows are refused), the data the run opens must have the card's versions
and hashes (a dataset of other data or an older version is never scored against this data's
ground truth), and each row's record must equal the suite's own task of that id."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from travelgym.bounded_parquet import ParquetBudgetError, read_parquet_rows
from travelgym.core.errors import UserError
from travelgym.core.options import FLAG_KEY
from travelgym.core.suite import Suite, SuiteRun
from travelgym.integrations.hf_dataset import TASK_JSON, need_pyarrow, rows_sha256, task_record


@dataclass
class DatasetTasks:
    """One split of a dataset directory, read and checked against its card."""

    directory: Path
    suite: str
    split: str
    options: dict[str, Any]  # the options the split was exported with (paths left out)
    task_ids: list[str]
    records: dict[str, dict[str, Any]]  # task id -> its record (JSON)
    identity: dict[str, Any]  # db_content_hash, tasks_sha256, data
    content_sha256: str
    db_seed: int

    def check(self, suite: Suite, run: SuiteRun) -> dict[str, Any]:
        """Refuse ``run`` when its data is not the dataset's or a task differs from the
        dataset's row; else the manifest entry recording where the tasks came from."""
        where = f"--tasks-from {self.directory}"
        found = {"db_content_hash": run.db_hash, "tasks_sha256": run.tasks_sha256,
                 "data": run.data_identity()}  # fmt: skip
        for key, want in self.identity.items():
            if found.get(key) != want:
                raise UserError(f"{where}: split {self.split} was made from other data or another "
                                f"version ({key} {_short(want)}, this data has "
                                f"{_short(found.get(key))})")  # fmt: skip
        for task in run.tasks:
            if task.task_id not in self.records:
                raise UserError(f"{where}: {task.task_id} is not in the dataset's {self.split} "
                                "split")  # fmt: skip
            if task_record(suite, task) != self.records[task.task_id]:
                raise UserError(f"{where}: the row of {task.task_id} differs from {suite.name}'s "
                                "task of that id (tampered rows?)")  # fmt: skip
        return {"content_sha256": self.content_sha256, "split": self.split,
                "directory": str(self.directory.resolve())}  # fmt: skip


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else value
    return text if len(text) <= 80 else text[:77] + "..."


def _path_options(suite: Suite) -> set[str]:
    """The suite's options that are paths of this machine (not carried from a dataset)."""
    out = set()
    for name, info in suite.Options.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if (extra.get(FLAG_KEY) or {}).get("path"):
            out.add(name)
    return out


def choose_split(suite: Suite, splits: dict[str, Any], given: dict[str, Any],
                 where: str) -> str:  # fmt: skip
    """The split to run: the one whose options agree with the options given (then with the
    suite's defaults); an option given that no split was exported with is refused here, before
    any data is opened for it."""
    defaults = suite.options().model_dump(mode="json")

    def agree(name: str, wanted: dict[str, Any]) -> bool:
        options = splits[name].get("options") or {}
        return all(options.get(k) in (None, v) for k, v in wanted.items())  # None: any

    candidates = [n for n in splits if agree(n, given)]
    if len(candidates) > 1:
        candidates = [n for n in candidates if agree(n, {k: v for k, v in defaults.items()
                                                         if k not in given})]  # fmt: skip
    if len(candidates) == 1:
        return candidates[0]
    made = "; ".join(f"{n}: {_flags(splits[n].get('options') or {})}" for n in splits)
    raise UserError(f"{where}: the options given pick " + ("none" if not candidates else
                    "more than one") + f" of the dataset's splits ({made})")  # fmt: skip


def _flags(options: dict[str, Any]) -> str:
    """Options as the command-line flags that give them (``--split test``)."""
    words = [f"--{k.replace('_', '-')} {v}" for k, v in options.items() if v is not None]
    return " ".join(words) or "the defaults"


def read_rows(directory: Path, entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of one of the card's files, refused unless they hash to the card's value; at most
    the card's row count is read, and a file that would decode to more than its byte budget
    (:mod:`travelgym.bounded_parquet`) is refused before its rows are built."""
    need_pyarrow()
    file = entry.get("file")
    path = directory / str(file)
    if not isinstance(file, str) or Path(file).is_absolute() or ".." in Path(file).parts:
        raise UserError(f"{directory}: the card names a file outside the dataset: {file!r}")
    rows_given = entry.get("rows")
    if isinstance(rows_given, bool) or not isinstance(rows_given, int) or rows_given < 0:
        raise UserError(f"{directory}: the card gives no row count for {file}")
    try:
        rows = read_parquet_rows(path, max_rows=rows_given)
    except FileNotFoundError:
        raise UserError(f"--tasks-from {directory}: {file} is missing") from None
    except ParquetBudgetError as exc:
        raise UserError(f"{path}: refused: {exc} (the card gives {rows_given} rows)") from None
    except Exception as exc:  # pyarrow's errors for a damaged file share no base class
        raise UserError(f"{path}: not a readable Parquet file ({exc})".replace("\n", " ")) from None
    if rows_sha256(rows) != entry.get("rows_sha256"):
        raise UserError(f"--tasks-from {directory}: the rows of {file} do not match the card's "
                        "rows_sha256 (tampered or replaced rows)")  # fmt: skip
    return rows


def read_dataset(directory: Path, suite: Suite, given: dict[str, Any]) -> DatasetTasks:
    """The split of ``directory`` that ``run`` uses, its rows checked against the card."""
    from travelgym.integrations.hf_dataset_card import read_card

    directory = Path(directory)
    need_pyarrow()
    meta = read_card(directory)
    where = f"--tasks-from {directory}"
    if meta.get("suite") != suite.name:
        raise UserError(f"{where}: a {meta.get('suite')} dataset, not {suite.name}")
    name = choose_split(suite, meta["splits"], given, where)
    entry = meta["splits"][name]
    records: dict[str, dict[str, Any]] = {}
    ids = []
    for i, row in enumerate(read_rows(directory, entry)):
        try:
            record = json.loads(row[TASK_JSON])
            task_id = row["task_id"]
        except (KeyError, TypeError, ValueError):
            raise UserError(f"{where}: row {i} of {entry['file']} has no task_id / valid "
                            f"{TASK_JSON}") from None  # fmt: skip
        if task_id in records:
            raise UserError(f"{where}: task {task_id} appears twice in {entry['file']}")
        records[task_id] = record
        ids.append(task_id)
    paths = _path_options(suite)
    options = {k: v for k, v in (entry.get("options") or {}).items() if k not in paths}
    identity = {k: entry.get(k) for k in ("db_content_hash", "tasks_sha256", "data")}
    return DatasetTasks(directory, suite.name, name, options, ids, records, identity,
                        meta["content_sha256"], int(meta.get("db_seed") or 0))  # fmt: skip


def plan_run(directory: Path, suite: Suite, given: dict[str, Any],
             db_seed: int) -> tuple[DatasetTasks, dict[str, Any]]:  # fmt: skip
    """``(dataset, the run's suite options)`` for ``run --tasks-from``: the options the
    dataset's split was exported with, under those ``given`` on the command line (so the run
    selects the dataset's tasks, or those of them the options pick)."""
    dataset = read_dataset(directory, suite, given)
    if db_seed != dataset.db_seed:
        raise UserError(f"--tasks-from {directory}: made with --db-seed {dataset.db_seed}, not "
                        f"{db_seed}")  # fmt: skip
    return dataset, {**dataset.options, **given}
