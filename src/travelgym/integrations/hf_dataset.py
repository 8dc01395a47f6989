"""A suite's tasks as a Hugging Face dataset: one Parquet file per split under ``data/`` (the
Hub's ``data/{split}-00000-of-00001.parquet`` layout, so ``datasets.load_dataset("parquet",
data_dir=DIR)`` gives one split each), optional ground-truth and run-result files beside it,
and a dataset card ``README.md`` whose YAML front matter records what the data is (versions,
content hashes, the command that made it). Written once against the Suite protocol: the tasks
come from :meth:`Suite.open_run` as :meth:`Suite.public_task` gives them (nothing hidden from
the agent), the answer key from :meth:`Suite.hidden_task` and :meth:`Suite.dataset_ground_truth`
(written only with ``--ground-truth``). pyarrow is imported here only when a dataset is written."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError
from travelgym.core.suite import Suite, SuiteOptions
from travelgym.integrations.hf_dataset_card import CARD, canonical, content_sha256, render_card

FORMAT = "1"  # the layout and card format of an exported dataset
TASK_JSON = "task_json"  # the column holding each task's record (hidden fields left out)
SHARD = "-00000-of-00001.parquet"


def data_file(folder: str, split: str) -> str:
    """The path of ``split``'s Parquet file in ``folder`` (``data``, ``ground_truth``...)."""
    return f"{folder}/{split}{SHARD}"


def task_record(suite: Suite, task: Any) -> dict[str, Any]:
    """``task`` as JSON without what is hidden from the agent (:meth:`Suite.public_task`):
    what the dataset stores and what ``run --tasks-from`` compares with the suite's own task."""
    return suite.public_task(task)


def rows_sha256(rows: list[dict[str, Any]]) -> str:
    """The content hash of a table's rows as Parquet reads them back (every column)."""
    digest = hashlib.sha256()
    for row in rows:
        digest.update(canonical(row).encode("utf-8") + b"\n")
    return digest.hexdigest()


def need_pyarrow() -> Any:
    """``pyarrow.parquet``, or a one-line error naming the extra that brings it."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError(
            "Hugging Face datasets need pyarrow: pip install 'travelgym[datasets]'"
        ) from None
    return pq


@dataclass
class Table:
    """One Parquet file of the dataset: its path in the directory, rows and hash."""

    path: str
    rows: list[dict[str, Any]]
    sha256: str = ""
    columns: list[tuple[str, str]] = field(default_factory=list)  # (name, Arrow type)


def make_table(path: str, rows: list[dict[str, Any]]) -> tuple[Any, Table]:
    """The Arrow table of ``rows`` and its :class:`Table` (hash of the rows as read back)."""
    import pyarrow as pa

    try:
        arrow = pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise UserError(f"{path}: the rows do not make one table: {exc}") from None
    back = arrow.to_pylist()
    columns = [(f.name, str(f.type)) for f in arrow.schema]
    return arrow, Table(path, back, rows_sha256(back), columns)


def task_rows(suite: Suite, tasks: list[Any]) -> list[dict[str, Any]]:
    """One row per task: ``task_id``, the suite's browsing columns, the full record as JSON."""
    rows = []
    for task in tasks:
        columns = {k: v for k, v in suite.dataset_columns(task).items()
                   if k not in ("task_id", TASK_JSON)}  # fmt: skip
        rows.append({"task_id": task.task_id, **columns,
                     TASK_JSON: canonical(task_record(suite, task))})  # fmt: skip
    return rows


def truth_rows(suite: Suite, run: Any) -> list[dict[str, Any]]:
    """One row per task of ``run``: ``task_id`` and one ``NAME_json`` column per part of its
    answer key (what the task hides from the agent and the suite's ground truth)."""
    extra = suite.dataset_ground_truth(run)
    rows = []
    for task in run.tasks:
        key = suite.hidden_task(task)
        key.update(extra.get(task.task_id, {}))
        rows.append({"task_id": task.task_id,
                     **{f"{name}_json": canonical(value) for name, value in key.items()}})  # fmt: skip
    return rows


def _scalar_scores(scores: list[dict[str, Any]]) -> dict[str, str]:
    """Top-level score keys whose values are all flags (``bool``) or all numbers (``float``):
    the browsable score columns of the episodes file."""
    kinds: dict[str, set[str]] = {}
    for score in scores:
        for key, value in score.items():
            kind = ("bool" if isinstance(value, bool) else "float"
                    if isinstance(value, int | float) else "null" if value is None else "other")  # fmt: skip
            kinds.setdefault(key, set()).add(kind)
    return {k: (v - {"null"}).pop() for k, v in kinds.items()
            if len(v - {"null"}) == 1 and v - {"null"} <= {"bool", "float"}}  # fmt: skip


def episode_rows(suite: Suite, run_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(manifest, rows)`` of a run directory: one row per stored episode with its task, trial,
    agent, error, the score's flags and numbers as ``score_*`` columns and the whole score and
    episode as JSON."""
    from travelgym.runner.run_manifest import read_manifest
    from travelgym.runner.store import RunDirError, read_run

    try:
        made = read_manifest(run_dir, required=True).get("suite")
        if made != suite.name:
            raise UserError(f"a {made} run, not {suite.name}")
        contents = read_run(run_dir, suite.name, as_dicts=True)
    except (RunDirError, UserError, OSError, ValueError) as exc:
        raise UserError(f"--run {run_dir}: {exc}") from None
    scores = [e.get("score") or {} for e in contents.episodes]
    kinds = _scalar_scores(scores)
    rows = []
    for episode, score in zip(contents.episodes, scores, strict=True):
        cells = {f"score_{k}": (None if score.get(k) is None else
                                bool(score[k]) if kind == "bool" else float(score[k]))
                 for k, kind in kinds.items()}  # fmt: skip
        rows.append({"task_id": episode.get("task_id"), "trial": episode.get("trial"),
                     "agent": episode.get("agent") or contents.manifest.get("agent"),
                     "error": episode.get("error"), **cells,
                     "score_json": canonical(episode.get("score")),
                     "episode_json": canonical(episode)})  # fmt: skip
    return contents.manifest, rows


@dataclass
class Split:
    """One exported split: its options, what identifies its data, its tables."""

    name: str
    options: dict[str, Any]
    identity: dict[str, Any]
    tasks: Table
    truth: Table | None = None


def open_split(suite: Suite, name: str, options: SuiteOptions, db_seed: int,
               data_dir: Path | None, ground_truth: bool,
               selection: tuple[str, ...] = ()) -> tuple[Split, list]:  # fmt: skip
    """Read one split's tasks (and answer key) through the suite's run; its Arrow tables.
    The split records the options given and those of ``selection`` (the options that pick
    the data, defaults included, so a run asking for other data is refused up front)."""
    run = suite.open_run(options, None, None, db_seed, data_dir)
    try:
        identity = {"db_content_hash": run.db_hash, "tasks_sha256": run.tasks_sha256,
                    "data": run.data_identity()}  # fmt: skip
        arrows = []
        arrow, tasks = make_table(data_file("data", name), task_rows(suite, run.tasks))
        arrows.append(arrow)
        truth = None
        if ground_truth:
            arrow, truth = make_table(data_file("ground_truth", name), truth_rows(suite, run))
            if len(truth.columns) < 2:
                raise UserError(f"{suite.title} has no ground truth to export (leave out "
                                "--ground-truth)")  # fmt: skip
            arrows.append(arrow)
    finally:
        asyncio.run(run.aclose())
    dump = options.model_dump(mode="json")
    given = {k: dump[k] for k in dump if k in selection or k in options.model_fields_set}
    return Split(name, given, identity, tasks, truth), arrows


def export_dataset(suite: Suite, options: SuiteOptions, out: Path, *, db_seed: int = 0,
                   data_dir: Path | None = None, ground_truth: bool = False,
                   run_dir: Path | None = None, command: str = "",
                   selection: tuple[str, ...] = ()) -> dict[str, Any]:  # fmt: skip
    """Write ``suite``'s tasks selected by ``options`` as a dataset directory ``out`` (replaced
    whole, or left as it was on an error); return the card's ``travelgym`` metadata.
    ``selection``: the options that pick the data (recorded with their values)."""
    pq = need_pyarrow()
    refuse_foreign_dir(out)
    splits, arrows = [], []
    manifest, rows = episode_rows(suite, run_dir) if run_dir is not None else ({}, [])
    for name, split_options in suite.dataset_splits(options, data_dir).items():
        split, tables = open_split(suite, name, split_options, db_seed, data_dir, ground_truth,
                                   selection)  # fmt: skip
        if not split.tasks.rows:
            raise UserError(f"split {name}: no tasks match the options")
        splits.append(split)
        arrows += tables
    episodes = None
    if run_dir is not None:
        ours = [s for s in splits if s.identity["tasks_sha256"] == manifest.get("tasks_sha256")
                and s.identity["db_content_hash"] == manifest.get("db_content_hash")]  # fmt: skip
        if not ours:
            raise UserError(f"--run {run_dir}: made on other data than the exported tasks "
                            "(its tasks_sha256 / db_content_hash differ)")  # fmt: skip
        arrow, episodes = make_table(data_file("episodes", "run"), rows)
        arrows.append(arrow)
        episodes_split = ours[0].name
    meta = {"format": FORMAT, "suite": suite.name, "db_seed": db_seed, "command": command}
    meta["splits"] = {s.name: {"file": s.tasks.path, "rows": len(s.tasks.rows),
                               "rows_sha256": s.tasks.sha256, "options": s.options,
                               **s.identity} for s in splits}  # fmt: skip
    if ground_truth:
        meta["ground_truth"] = {s.name: {"file": s.truth.path, "rows": len(s.truth.rows),
                                         "rows_sha256": s.truth.sha256} for s in splits}  # fmt: skip
    if episodes is not None:
        meta["episodes"] = {"file": episodes.path, "rows": len(episodes.rows),
                            "rows_sha256": episodes.sha256, "split": episodes_split,
                            "run": Path(run_dir).name}  # fmt: skip  # no local path
    meta["content_sha256"] = content_sha256(meta)
    tables = [t for s in splits for t in (s.tasks, s.truth) if t is not None]
    tables += [episodes] if episodes is not None else []
    _write(out, suite, meta, tables, arrows, pq, render_card)
    return meta


def refuse_foreign_dir(out: Path) -> None:
    """A one-line error when ``out`` holds something other than an exported dataset (it is
    replaced whole, so only a directory this command wrote may be)."""
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: not a directory")
    if out.is_dir() and any(out.iterdir()) and "travelgym:" not in _card_text(out / CARD):
        raise UserError(f"--out {out}: a non-empty directory that is no travelgym dataset "
                        "(choose a new or empty directory)")  # fmt: skip


def _card_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")[:4096]
    except (OSError, UnicodeDecodeError):
        return ""


def _write(out: Path, suite: Suite, meta: dict[str, Any], tables: list[Table], arrows: list,
           pq: Any, render_card: Any) -> None:  # fmt: skip
    """Write the files into a fresh sibling directory, then swap it in for ``out``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for table, arrow in zip(tables, arrows, strict=True):
            path = staging / table.path
            path.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(arrow, path)
        (staging / CARD).write_text(render_card(suite, meta, tables), encoding="utf-8")
        old = None
        if out.exists():
            old = out.with_name(f".{out.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            out.rename(old)
        staging.rename(out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        raise UserError(f"{out}: cannot write the dataset: {exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
