"""SFT export: the successful trajectories of run directories as chat-format JSONL.

``travelgym export sft RUN_DIR... --out FILE`` reads each run directory (``manifest.json`` and
``episodes.jsonl``), keeps the episodes whose reward (:mod:`~travelgym.training.rewards`) reaches
``--min-score`` (default 0.5 for COMPASS: any feasible plan; 1.0 for Behavior2Trip: a delivered
plan that passes the Format gate and scores R_total >= 1), never those that ended in an error,
and writes one chat a line:

- ``openai``: ``{"messages": [...], "tools": [...]}`` (system / user / assistant with
  ``tool_calls`` / tool with ``tool_call_id``), what TRL's ``SFTTrainer`` reads;
- ``sharegpt``: ``{"conversations": [...], "system": ..., "tools": "<json>"}`` for LLaMA-Factory.

Chats are taken from the trajectories or rebuilt (:mod:`~travelgym.training.chat`). See
``docs/training/sft.md``.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from travelgym.runner.store import RunDirError
from travelgym.runner.store import read_run as read_strictly
from travelgym.training.chat import (
    ReplayError,
    chat_problems,
    compass_chat,
    compass_tools,
    sharegpt_problems,
    to_sharegpt,
    trim_chat,
    trip_chat,
)
from travelgym.training.rewards import b2t_episode_reward, compass_episode_reward

ExportFormat = Literal["openai", "sharegpt"]
FORMATS = ("openai", "sharegpt")
SUITES = ("compass", "behavior2trip")
DEFAULT_MIN_SCORE = {"compass": 0.5, "behavior2trip": 1.0}
_INSTANCE_ID = re.compile(r'"instance_id"\s*:\s*"([^"]+)"')


class ExportError(ValueError):
    """Input that cannot be exported (the message names the directory, file or line)."""


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
    """The run's suite: the manifest's, else ``behavior2trip`` when episodes name an
    ``instance_id``, else ``compass``."""
    suite = manifest.get("suite")
    if suite in SUITES:
        return suite
    return "behavior2trip" if episodes and "instance_id" in episodes[0] else "compass"


class _RunSource:
    """One run directory's suite, database (for replays) and instances (Behavior2Trip)."""

    def __init__(self, directory: Path, suite: str | None, data_dir: Path | None) -> None:
        self.dir, self.data_dir = directory, data_dir
        self.manifest, self.episodes = read_run(directory)
        found = detect_suite(self.manifest, self.episodes)
        if suite is not None and self.manifest.get("suite") not in (None, suite):
            raise ExportError(f"{directory} is a {found} run, not {suite}")
        self.suite = suite or found
        self._conn: Any = None
        self._instances: dict[str, Any] | None = None

    @property
    def conn(self) -> Any:
        """The run's database, opened (built when missing) on first use, checked against the
        content hash in the manifest."""
        if self._conn is None:
            from travelgym.db import connect_readonly

            if self.suite == "compass":
                from travelgym.suites.compass.build import ensure_database
            else:
                from travelgym.suites.behavior2trip.build import ensure_database
            db = ensure_database(seed=int(self.manifest.get("db_seed", 0)), data_dir=self.data_dir)
            want = self.manifest.get("db_content_hash")
            if want and db.metadata.get("content_hash") != want:
                raise ExportError(f"{self.dir}: the database in the data directory is not the "
                                  "run's (content hash differs); pass the run's --data-dir")  # fmt: skip
            self._conn = connect_readonly(db.path)
        return self._conn

    def instance(self, instance_id: str) -> Any:
        """The instance an episode ran on, read from the run's split file (only the lines of
        this run's instances are parsed)."""
        if self._instances is None:
            from travelgym.suites.behavior2trip.build import ensure_database
            from travelgym.suites.behavior2trip.instances import Instance, ensure_instances

            db = ensure_database(seed=int(self.manifest.get("db_seed", 0)), data_dir=self.data_dir)
            paths = ensure_instances(db, self.data_dir)
            split = self.manifest.get("split")
            wanted = {e.get("instance_id", e.get("task_id")) for e in self.episodes}
            self._instances = {}
            for path in [paths[split]] if split in paths else paths.values():
                with open(path, encoding="utf-8") as fh:
                    for line in fh:
                        found = _INSTANCE_ID.search(line, 0, 200)
                        if found and found.group(1) in wanted:
                            x = Instance.model_validate_json(line)
                            self._instances[x.instance_id] = x
        if instance_id not in self._instances:
            raise ExportError(f"{self.dir}: unknown instance {instance_id!r}")
        return self._instances[instance_id]

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


def _verdict(suite: str, episode: dict[str, Any], min_score: float) -> str | None:
    """Why an episode is not kept, or ``None`` to keep it."""
    if episode.get("termination") == "error":
        return "error"
    if episode.get("score") is None:
        return "unscored"
    if suite == "compass":
        reward = compass_episode_reward(episode)
        if not reward.feasible:
            return "infeasible"
    else:
        reward = b2t_episode_reward(episode)
        if not reward.delivered:
            return "undelivered"
    return "below_min_score" if reward.total < min_score else None


def _example(source: _RunSource, episode: dict[str, Any], fmt: str) -> tuple[dict[str, Any], bool]:
    """The training example of a kept episode and whether its chat was rebuilt."""
    rebuilt = not episode.get("messages")
    if source.suite == "compass":
        from travelgym.suites.compass.trajectory import Episode

        model = Episode.model_validate(episode)
        messages = compass_chat(model, source.conn if rebuilt else None)
        tools = compass_tools(model.agent)
    else:
        from travelgym.suites.behavior2trip.episode import TripEpisode

        model = TripEpisode.model_validate(episode)
        instance = source.instance(model.instance_id) if rebuilt else None
        messages = trip_chat(model, instance, source.conn if rebuilt else None)
        tools = []  # the B2T format lists the tools in its system prompt
    messages = trim_chat(messages)
    if fmt == "sharegpt":
        return to_sharegpt(messages, tools), rebuilt
    return {"messages": messages, "tools": tools}, rebuilt


def iter_examples(source: _RunSource, fmt: str, min_score: float | None,
                  max_chars: int | None, skipped: Counter) -> Iterator[tuple[str, bool]]:  # fmt: skip
    """The JSONL lines of one run's kept episodes (and whether each was rebuilt)."""
    threshold = DEFAULT_MIN_SCORE[source.suite] if min_score is None else min_score
    for episode in source.episodes:
        reason = _verdict(source.suite, episode, threshold)
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


def export_sft(run_dirs: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], *,
               fmt: ExportFormat = "openai", min_score: float | None = None,
               suite: str | None = None, data_dir: str | os.PathLike[str] | None = None,
               max_chars: int | None = None) -> ExportSummary:  # fmt: skip
    """Write the kept episodes of ``run_dirs`` to ``out`` (JSONL, replaced atomically) and
    return the counts; see the module docstring. ``suite`` insists on one suite; ``data_dir``
    holds the runs' databases (for replaying scripted agents' tool calls)."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}: use openai or sharegpt")
    if suite is not None and suite not in SUITES:
        raise ExportError(f"unknown suite {suite!r}: use compass or behavior2trip")
    if not run_dirs:
        raise ExportError("no run directory given")
    data = Path(data_dir) if data_dir is not None else None
    sources = [_RunSource(Path(d), suite, data) for d in run_dirs]  # read all before writing
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    summary = ExportSummary(out=str(out), format=fmt)
    skipped: Counter = Counter()
    by_suite: Counter = Counter()
    tmp = out.with_name(out.name + ".tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            for source in sources:
                summary.episodes += len(source.episodes)
                try:
                    for line, rebuilt in iter_examples(source, fmt, min_score, max_chars, skipped):
                        fh.write(line + "\n")
                        summary.kept += 1
                        summary.rebuilt += rebuilt
                        by_suite[source.suite] += 1
                finally:
                    source.close()
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    summary.skipped, summary.by_suite = dict(skipped), dict(by_suite)
    return summary
