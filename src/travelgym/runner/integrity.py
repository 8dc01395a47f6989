"""Whether a run's tool database stayed byte-identical, and which sandbox guarded its code.

Every session of a run (its first start and each ``--resume``) appends one line to
``integrity.jsonl`` in the run directory: the SHA-256 of the database file's bytes (every table,
index, trigger, view and float, not only the content hash of chosen tables) when the session
started and when it ended, and the sandbox boundary in force. A run whose hashes differ (within
a session, or from one session to the next) is *tampered*: ``score`` and ``report`` say so.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from travelgym import sandbox
from travelgym.runner.durable import append_file

INTEGRITY = "integrity.jsonl"


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def sandbox_entry(runs_code: bool) -> dict[str, str]:
    """The manifest's ``sandbox`` entry; raises :class:`~travelgym.sandbox.SandboxUnavailable`
    up front when the agent runs model-written code and there is no sandbox."""
    if runs_code:
        return sandbox.require().describe()
    return {**sandbox.describe(), "used": "no"}


class IntegritySession:
    """One session's line of ``integrity.jsonl``: open with :meth:`start`, close with :meth:`finish`."""

    def __init__(self, run_dir: Path, database: Path, sandbox_info: dict[str, str]) -> None:
        self.path = Path(run_dir) / INTEGRITY
        self.database = Path(database)
        self.entry: dict[str, Any] = {
            "started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "database": self.database.name,
            "sha256_start": file_sha256(self.database),
            "sandbox": sandbox_info,
        }

    @classmethod
    def start(cls, run_dir: Path, database: Path, sandbox_info: dict[str, str]) -> IntegritySession:
        """Hash the database as the session starts."""
        return cls(run_dir, database, sandbox_info)

    def finish(self) -> dict[str, Any]:
        """Hash the database again and append the session's line; returns the line."""
        self.entry["sha256_end"] = file_sha256(self.database)
        self.entry["ended"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        line = json.dumps(self.entry, sort_keys=True) + "\n"
        append_file(Path(self.path), line.encode())  # every byte or an error, fsynced
        return self.entry


def tampering(run_dir: str | os.PathLike[str]) -> str | None:
    """Why a run directory's database cannot be trusted, or None when every session agrees.

    Also flags sessions whose code ran without an operating-system sandbox.
    """
    path = Path(run_dir) / INTEGRITY
    if not path.is_file():
        return None
    problems: list[str] = []
    previous: str | None = None
    for number, raw in enumerate(
        path.read_text(encoding="utf-8", errors="replace").splitlines(), 1
    ):
        try:
            entry = json.loads(raw)
            start, end = entry["sha256_start"], entry.get("sha256_end")
        except (ValueError, KeyError, TypeError):
            problems.append(f"{INTEGRITY} line {number} is unreadable")
            continue
        if end is not None and end != start:
            problems.append(f"the database changed during session {number} "
                            f"(sha256 {start[:12]}... -> {end[:12]}...)")  # fmt: skip
        if previous is not None and start != previous:
            problems.append(f"the database changed between sessions {number - 1} and {number}")
        previous = end or start
        if (entry.get("sandbox") or {}).get("boundary") == "unsafe":
            problems.append(f"session {number} ran model code with --unsafe-sandbox")
    return "; ".join(problems) or None


def tamper_notes(runs: list[Any]) -> list[str]:
    """One ``TAMPERED`` line per run (objects with ``label`` and ``directory``) that needs one."""
    notes = []
    for run in runs:
        reason = tampering(run.directory)
        if reason:
            notes.append(f"TAMPERED {run.label}: {reason}")
    return notes
