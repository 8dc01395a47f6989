"""SFT export: the successful trajectories of run directories as chat-format JSONL.

``travelgym export sft RUN_DIR... --out FILE`` reads each run directory (``manifest.json`` and
``episodes.jsonl``), keeps the episodes that their suite keeps
(:meth:`~travelgym.core.suite.Suite.sft_keep`: a reward reaching ``--min-score``, default the
suite's ``sft_min_score``; e.g. 0.5 for COMPASS: any feasible plan; for Behavior2Trip a plan
that passes Final, every applicable check, unless ``--keep-failing``; and the suite's own
thresholds, :attr:`~travelgym.core.suite.Suite.sft_filters`), never those that ended in an
error, and writes one chat a line:

- ``openai``: ``{"messages": [...], "tools": [...]}`` (system / user / assistant with
  ``tool_calls`` / tool with ``tool_call_id``), what TRL's ``SFTTrainer`` reads;
- ``sharegpt``: ``{"conversations": [...], "system": ..., "tools": "<json>"}`` for LLaMA-Factory.

Chats are taken from the trajectories or rebuilt by the suite
(:meth:`~travelgym.core.suite.Suite.sft_chat`, :mod:`~travelgym.training.chat`). See
``docs/training/sft.md``.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from travelgym.atomic import replaced_on_success
from travelgym.core.registry import all_suites, get_suite, suite_names
from travelgym.runner.store import RunDirError
from travelgym.runner.store import read_run as read_strictly
from travelgym.training.base import training_suite_names
from travelgym.training.chat import (
    ReplayError,
    chat_problems,
    sharegpt_problems,
    to_sharegpt,
    trim_chat,
)

ExportFormat = Literal["openai", "sharegpt"]
FORMATS = ("openai", "sharegpt")


class ExportError(ValueError):
    """Input that cannot be exported (the message names the directory, file or line)."""


class FilterError(ExportError):
    """A suite's filter given for runs of no suite that reads it (a usage error)."""


class ExportSummary(BaseModel):
    """What an export read, kept and skipped (by reason)."""

    out: str
    format: ExportFormat
    episodes: int = 0
    kept: int = 0
    rebuilt: int = 0  # kept chats rebuilt from the trajectory (scripted agents)
    skipped: dict[str, int] = Field(default_factory=dict)
    by_suite: dict[str, int] = Field(default_factory=dict)  # kept, per suite


def read_run(directory: str | os.PathLike[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(manifest, episodes)`` of a run directory, read strictly by the run store (a bad line
    is an error naming the file and line; a killed run's torn last line is left out)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ExportError(f"{directory} is not a directory")
    try:
        run = read_strictly(directory, as_dicts=True)
    except RunDirError as exc:
        raise ExportError(str(exc)) from None
    return run.manifest, run.episodes


def detect_suite(manifest: dict[str, Any], episodes: list[dict[str, Any]]) -> str:
    """The run's suite: the manifest's, else its first episode's, else the suite whose answer
    keys (``Suite.answer_markers``) the first episode carries, else the first installed."""
    names = suite_names()
    suite = manifest.get("suite")
    if suite in names:
        return suite
    first = episodes[0] if episodes else {}
    if first.get("suite") in names:
        return first["suite"]
    found = [s.name for s in all_suites() if any(k in first for k in s.answer_markers)]
    return found[0] if found else names[0]


class RunSource:
    """One run directory for the export: its manifest and episodes, its suite, its database
    (for replays, :attr:`conn`) and a ``cache`` the suite keeps what it reads in (e.g. the
    instances the episodes ran on)."""

    def __init__(self, directory: Path, suite: str | None, data_dir: Path | None) -> None:
        self.dir, self.data_dir = directory, data_dir
        self.manifest, self.episodes = read_run(directory)
        found = detect_suite(self.manifest, self.episodes)
        if suite is not None and self.manifest.get("suite") not in (None, suite):
            raise ExportError(f"{directory} is a {found} run, not {suite}")
        self.suite = suite or found
        self.cache: dict[str, Any] = {}
        self._conn: Any = None

    @property
    def conn(self) -> Any:
        """The run's database, opened (built when missing) on first use, checked against the
        content hash in the manifest."""
        if self._conn is None:
            from travelgym.db import connect_readonly

            suite = get_suite(self.suite)
            seed = int(self.manifest.get("db_seed", 0))
            db = suite.build(suite.options_of_run(self.manifest), seed, self.data_dir)
            want = self.manifest.get("db_content_hash")
            if want and db.metadata.get("content_hash") != want:
                raise ExportError(f"{self.dir}: the database in the data directory is not the "
                                  "run's (content hash differs); pass the run's --data-dir")  # fmt: skip
            self._conn = connect_readonly(db.path)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


def _insist_on_scale(source: RunSource, scale: str) -> None:
    """An :class:`ExportError` unless the run was made at database ``scale``."""
    options = get_suite(source.suite).options_of_run(source.manifest)
    if "scale" not in type(options).model_fields:
        raise ExportError(f"{source.dir}: {source.suite} runs have no database scale; drop --scale")
    if options.scale != scale:
        raise ExportError(f"{source.dir} is a run at scale {options.scale}, not {scale}")


def _verdict(source: RunSource, episode: dict[str, Any], min_score: float,
             filters: dict[str, Any]) -> str | None:  # fmt: skip
    """Why an episode is not kept, or ``None`` to keep it."""
    if episode.get("termination") == "error":
        return "error"
    if episode.get("score") is None:
        return "unscored"
    return get_suite(source.suite).sft_keep(episode, min_score, **filters)


def suite_filters(suite: str, filters: dict[str, Any] | None) -> dict[str, Any]:
    """The given ``filters`` (name -> value, ``None``/``False``: not given) that ``suite``
    declares in its :attr:`~travelgym.core.suite.Suite.sft_filters`."""
    declared = {f.name for f in get_suite(suite).sft_filters}
    return {k: v for k, v in (filters or {}).items() if k in declared and _given(v)}


def _given(value: Any) -> bool:
    return value is not None and value is not False  # 0.0 is a threshold given


def check_filters(suites: set[str], filters: dict[str, Any] | None) -> None:
    """Refuse a given filter that none of ``suites`` (the runs' suites) declares."""
    for name, value in (filters or {}).items():
        if not _given(value) or any(name in suite_filters(s, {name: value}) for s in suites):
            continue
        owners = [s.name for s in all_suites() if any(f.name == name for f in s.sft_filters)]
        flag = "--" + name.replace("_", "-")
        if not owners:
            raise FilterError(f"unknown filter {flag}")
        raise FilterError(f"{flag} applies to {' and '.join(owners)} runs only, and none of "
                          "the runs given is one")  # fmt: skip


def _example(source: RunSource, episode: dict[str, Any], fmt: str) -> tuple[dict[str, Any], bool]:
    """The training example of a kept episode and whether its chat was rebuilt."""
    rebuilt = not episode.get("messages")
    messages, tools = get_suite(source.suite).sft_chat(episode, source)
    messages = trim_chat(messages)
    if fmt == "sharegpt":
        return to_sharegpt(messages, tools), rebuilt
    return {"messages": messages, "tools": tools}, rebuilt


def iter_examples(source: RunSource, fmt: str, min_score: float | None,
                  max_chars: int | None, skipped: Counter,
                  filters: dict[str, Any] | None = None) -> Iterator[tuple[str, bool]]:  # fmt: skip
    """The JSONL lines of one run's kept episodes (and whether each was rebuilt)."""
    threshold = get_suite(source.suite).sft_min_score if min_score is None else min_score
    own = suite_filters(source.suite, filters)
    for episode in source.episodes:
        reason = _verdict(source, episode, threshold, own)
        if reason is None:
            try:
                example, rebuilt = _example(source, episode, fmt)
            except ReplayError as exc:
                raise ExportError(str(exc)) from None
            problems = (
                sharegpt_problems(example)
                if fmt == "sharegpt"
                else chat_problems(example["messages"])
            )
            line = json.dumps(example, ensure_ascii=False)
            if problems:
                reason = "malformed_chat"
            elif max_chars is not None and len(line) > max_chars:
                reason = "too_long"
            else:
                yield line, rebuilt
                continue
        skipped[reason] += 1


def chains_suite(path: Path, suite: str | None) -> Any:
    """The suite a chains file (``travelgym chains``) was annotated on, from its manifest, as
    its ``chains`` capability; ``suite``: the one the export insists on."""
    from travelgym.core.errors import UserError
    from travelgym.core.registry import require
    from travelgym.datafiles import manifest_path, read_manifest

    try:
        meta = read_manifest(path)
    except (OSError, ValueError) as exc:
        raise ExportError(f"{path}: not a chains file: cannot read {manifest_path(path).name} "
                          f"({exc})") from None  # fmt: skip
    name = meta.get("suite") if isinstance(meta, dict) else None
    if not isinstance(name, str) or meta.get("kind") != "chains":
        raise ExportError(f"{path}: not a chains file (its manifest names no chains suite)")
    if suite is not None and name != suite:
        raise ExportError(f"{path} holds {name} chains, not {suite}")
    try:
        return require(name, "chains")
    except UserError as exc:
        raise ExportError(f"{path}: {exc}") from None


def iter_chain_examples(path: Path, target: Any, fmt: str, min_score: float | None,
                        max_chars: int | None, skipped: Counter,
                        filters: dict[str, Any] | None,
                        data_dir: Path | None) -> Iterator[str]:  # fmt: skip
    """The JSONL lines of the chains of ``path`` its suite keeps (as for a run's episodes)."""
    threshold = target.sft_min_score if min_score is None else min_score
    own = suite_filters(target.name, filters)
    try:
        for chat, reason in target.chain_examples(path, threshold, data_dir, **own):
            if chat is None:
                skipped[reason] += 1
                continue
            messages, tools = trim_chat(chat[0]), chat[1]
            example = to_sharegpt(messages, tools) if fmt == "sharegpt" else {
                "messages": messages, "tools": tools}  # fmt: skip
            problems = (sharegpt_problems(example) if fmt == "sharegpt"
                        else chat_problems(example["messages"]))  # fmt: skip
            line = json.dumps(example, ensure_ascii=False)
            if problems:
                skipped["malformed_chat"] += 1
            elif max_chars is not None and len(line) > max_chars:
                skipped["too_long"] += 1
            else:
                yield line
    except ValueError as exc:  # a chains file that cannot be read (names the file and line)
        raise ExportError(str(exc)) from None


def export_sft(run_dirs: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], *,
               fmt: ExportFormat = "openai", min_score: float | None = None,
               suite: str | None = None, data_dir: str | os.PathLike[str] | None = None,
               max_chars: int | None = None, scale: str | None = None,
               filters: dict[str, Any] | None = None,
               chains: Sequence[str | os.PathLike[str]] = ()) -> ExportSummary:  # fmt: skip
    """Write the kept episodes of ``run_dirs`` to ``out`` (JSONL, replaced atomically) and
    return the counts; see the module docstring. ``suite`` insists on one suite, ``scale`` on
    one database scale (each run's own is in its manifest); ``data_dir`` holds the runs'
    databases (for replaying scripted agents' tool calls); ``filters``: values of the suites'
    own options (:attr:`~travelgym.core.suite.Suite.sft_filters`, by name), each applied to the
    runs of the suites that declare it; ``chains``: Chain-of-Action files (``travelgym
    chains``) whose kept chains are exported too (counted with the episodes)."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}: use openai or sharegpt")
    names = training_suite_names()
    if suite is not None and suite not in names:
        raise ExportError(f"unknown suite {suite!r}: use {' or '.join(names)}")
    if not run_dirs and not chains:
        raise ExportError("no run directory and no chains file given")
    data = Path(data_dir) if data_dir is not None else None
    sources = [RunSource(Path(d), suite, data) for d in run_dirs]  # read all before writing
    chain_files = [(Path(p), chains_suite(Path(p), suite)) for p in chains]
    if scale is not None:
        for source in sources:
            _insist_on_scale(source, scale)
    check_filters({s.suite for s in sources} | {t.name for _, t in chain_files}, filters)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    summary = ExportSummary(out=str(out), format=fmt)
    skipped: Counter = Counter()
    by_suite: Counter = Counter()
    with replaced_on_success(out) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for source in sources:
            summary.episodes += len(source.episodes)
            try:
                lines = iter_examples(source, fmt, min_score, max_chars, skipped, filters)
                for line, rebuilt in lines:
                    fh.write(line + "\n")
                    summary.kept += 1
                    summary.rebuilt += rebuilt
                    by_suite[source.suite] += 1
            finally:
                source.close()
        for path, target in chain_files:
            before = summary.kept + sum(skipped.values())
            for line in iter_chain_examples(path, target, fmt, min_score, max_chars,
                                            skipped, filters, data):  # fmt: skip
                fh.write(line + "\n")
                summary.kept += 1
                by_suite[target.name] += 1
            summary.episodes += summary.kept + sum(skipped.values()) - before
    summary.skipped, summary.by_suite = dict(skipped), dict(by_suite)
    return summary
