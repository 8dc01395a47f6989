"""Run directories: a manifest and an append-only JSONL of finished episodes.

Each finished episode is appended as one line with a single ``write`` and ``fsync``; on resume a
partial last line (a run killed mid-write) is cut off, so no episode is duplicated or lost.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from travelgym.trajectory import Episode

EPISODES = "episodes.jsonl"
MANIFEST = "manifest.json"
# manifest keys that must match for a run to be resumed
IDENTITY_KEYS = ("suite", "agent", "user", "seed", "trials", "task_ids", "db_content_hash",
                 "tasks_sha256", "max_turns")  # fmt: skip


class RunDirError(Exception):
    """A run directory that cannot be used as asked (the message says why and what to do)."""


class RunStore:
    def __init__(self, directory: Path) -> None:
        self.dir = Path(directory)
        self.episodes_path = self.dir / EPISODES
        self.manifest_path = self.dir / MANIFEST

    def open(
        self, manifest: dict[str, Any], resume: bool, retry_errors: bool = False
    ) -> set[tuple[str, int]]:
        """Prepare the directory; return the (task_id, trial) keys already done. With
        ``retry_errors`` the episodes that ended in an error are dropped so they run again."""
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.manifest_path.exists():
            old = json.loads(self.manifest_path.read_text())
            same = all(old.get(k) == manifest.get(k) for k in IDENTITY_KEYS)
            if not same:
                diff = [k for k in IDENTITY_KEYS if old.get(k) != manifest.get(k)]
                raise RunDirError(f"{self.dir} holds a different run (differs in: {', '.join(diff)}); "
                                  "choose another --out")  # fmt: skip
            if not resume and self.episodes_path.exists() and self.episodes_path.stat().st_size:
                raise RunDirError(f"{self.dir} already has episodes; pass --resume to continue it")
            manifest = {**manifest, "created": old.get("created", manifest.get("created"))}
        tmp = self.manifest_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        os.replace(tmp, self.manifest_path)
        episodes = self._read_repairing()
        if retry_errors and any(e.get("termination") == "error" for e in episodes):
            kept = [e for e in episodes if e.get("termination") != "error"]
            tmp = self.episodes_path.with_suffix(".tmp")
            tmp.write_text("".join(json.dumps(e) + "\n" for e in kept))
            os.replace(tmp, self.episodes_path)
            episodes = kept
        return {(e["task_id"], e["trial"]) for e in episodes}

    def _read_repairing(self) -> list[dict[str, Any]]:
        if not self.episodes_path.exists():
            return []
        data = self.episodes_path.read_bytes()
        good_end = data.rfind(b"\n") + 1
        if good_end < len(data):  # a partial last line from a killed run: cut it off
            with open(self.episodes_path, "r+b") as fh:
                fh.truncate(good_end)
        out = []
        for line in data[:good_end].splitlines():
            if line.strip():
                out.append(json.loads(line))
        return out

    def append(self, episode: Episode) -> None:
        line = (episode.model_dump_json() + "\n").encode()
        fd = os.open(self.episodes_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)


def read_episodes(directory: Path, model: type[BaseModel] = Episode) -> list:
    """All complete episodes of a run directory, as ``model`` (COMPASS :class:`Episode` by
    default; Behavior2Trip passes ``TripEpisode``)."""
    path = Path(directory) / EPISODES
    if not path.exists():
        raise RunDirError(f"{directory} is not a run directory: no {EPISODES}")
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                out.append(model.model_validate_json(line))
            except ValueError:
                continue  # a partial line of a killed run
    return out
