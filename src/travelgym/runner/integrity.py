"""Whether a run's files are as the framework wrote them, and which sandbox guarded its code.

``integrity.jsonl`` keeps a digest chain over every line of ``episodes.jsonl`` and the
manifest's digest (:mod:`travelgym.runner.chain`); :func:`verify_run` checks it. This is tamper
evidence against edits by hand, not a signature: whoever can write the run directory can also
recompute the chain. Every session of a run (its first start and each ``--resume``) appends one line to
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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from travelgym import sandbox
from travelgym.runner import chain
from travelgym.runner.chain import MANIFEST_KEY
from travelgym.runner.durable import append_file
from travelgym.safe_open import read_regular_bytes

INTEGRITY = "integrity.jsonl"
EPISODES = "episodes.jsonl"
MANIFEST = "manifest.json"


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


def _db_problems(sessions: list[tuple[int, dict[str, Any]]]) -> tuple[list[str], list[str]]:
    """The database's problems and the unsafe-sandbox sessions, from the session lines."""
    problems: list[str] = []
    unsafe: list[str] = []
    previous: str | None = None
    for session, (number, entry) in enumerate(sessions, 1):
        try:
            start, end = entry["sha256_start"], entry.get("sha256_end")
        except KeyError:
            problems.append(f"{INTEGRITY} line {number} is unreadable")
            continue
        if end is not None and end != start:
            problems.append(f"the database changed during session {session} "
                            f"(sha256 {start[:12]}... -> {end[:12]}...)")  # fmt: skip
        if previous is not None and start != previous:
            problems.append(f"the database changed between sessions {session - 1} and {session}")
        previous = end or start
        if (entry.get("sandbox") or {}).get("boundary") == "unsafe":
            unsafe.append(f"session {session} ran model code with --unsafe-sandbox")
    return problems, unsafe


@dataclass
class Verdict:
    """What :func:`verify_run` found. ``status``: ``verified`` (the chain holds), ``unchained``
    (no chain: written before tamper evidence) or ``tampered``; ``reason`` and ``line`` (the
    first line of ``episodes.jsonl`` that disagrees, where one does) say why; ``unsafe``: why
    the run's code was not contained (from the manifest and the session lines); ``notes``:
    what is unfinished but not tampering (a run killed mid-write)."""

    status: str
    reason: str | None = None
    line: int | None = None
    database: list[str] = field(default_factory=list)
    unsafe: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def tampered(self) -> str | None:
        """Everything that makes the run untrustworthy, in one line (``None``: nothing)."""
        parts = ([self.reason] if self.status == "tampered" and self.reason else []) + self.database
        parts += [self.unsafe] if self.unsafe else []
        return "; ".join(parts) or None


def _read_entries(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], str | None, bool]:
    """The JSON objects of ``integrity.jsonl``; the first unreadable line's problem; whether it
    is missing."""
    try:
        data = read_regular_bytes(path)
    except FileNotFoundError:
        return [], None, True
    except OSError as exc:
        return [], f"{INTEGRITY} cannot be read ({exc.strerror or exc})", False
    lines, rest = chain.split_lines(data)
    entries, problem = [], None
    for number, raw in enumerate(lines, 1):
        try:
            item = json.loads(raw)
        except ValueError:
            item = None
        if not isinstance(item, dict):
            problem = problem or f"{INTEGRITY} line {number} is unreadable"
            continue
        entries.append((number, item))
    # an unterminated last line (a kill mid-write) is left out: what came before still binds
    del rest
    return entries, problem, False


def _manifest(run_dir: Path) -> tuple[bytes | None, dict[str, Any]]:
    try:
        data = read_regular_bytes(run_dir / MANIFEST)
    except OSError:
        return None, {}
    try:
        parsed = json.loads(data)
    except (ValueError, RecursionError):
        return data, {}
    return data, parsed if isinstance(parsed, dict) else {}


def _check_file(state: chain.ChainState, run_dir: Path) -> tuple[str | None, int | None, list[str]]:
    """The first disagreement between ``episodes.jsonl`` and the chain: (reason, line, notes)."""
    try:
        data = read_regular_bytes(run_dir / EPISODES)
    except FileNotFoundError:
        data = b""
    except OSError as exc:
        return f"{EPISODES} cannot be read ({exc.strerror or exc})", None, []
    lines, rest = chain.split_lines(data)
    head = chain.genesis()
    for number, line in enumerate(lines, 1):
        head = chain.step(head, line)
        expected = state.heads.get(number)
        if expected is None:
            return f"{EPISODES} line {number} is not in the digest chain (added)", number, []
        if expected != head.hex():
            return f"{EPISODES} line {number} differs from the digest chain", number, []
    notes = []
    missing = state.lines - len(lines)
    if missing and (state.closed or missing > 1):
        return (f"{EPISODES} ends at line {len(lines)} but the digest chain holds "
                f"{state.lines} line(s) (line {len(lines) + 1} deleted)"), len(lines) + 1, []  # fmt: skip
    if missing:
        notes.append(f"line {state.lines} was never written (the run was killed between writes)")
    if rest:
        if state.closed:
            return f"{EPISODES} has bytes after its last chained line", len(lines) + 1, []
        notes.append(f"{EPISODES} has a torn last line (the run was killed mid-write)")
    return None, None, notes


def _compare(state: chain.ChainState, run_dir: Path,
             raw_manifest: bytes | None) -> tuple[str | None, int | None, list[str]]:  # fmt: skip
    """The first disagreement of the files with ``state``: (reason, line, notes)."""
    reason, line, notes = _check_file(state, run_dir)
    if reason is not None:
        return reason, line, notes
    if state.manifest_sha256 is None:  # the files before the first chained session
        return None, None, notes
    if raw_manifest is None:
        return f"{MANIFEST} is missing", None, notes
    digest = hashlib.sha256(raw_manifest).hexdigest()
    if digest != state.manifest_sha256:
        if digest != state.manifest_replaced:
            why = f"{MANIFEST} differs from the digest recorded when the run was written"
            return why, None, notes
        notes.append(f"the run was killed as it ended: {MANIFEST} lacks its end-of-run records")
    return None, None, notes


def verify_run(run_dir: str | os.PathLike[str]) -> Verdict:
    """Check a run directory against its ``integrity.jsonl``: the digest chain over every line
    of ``episodes.jsonl``, the manifest's digest, the database's hashes; and whether its code
    ran without a sandbox (the manifest's record counts even when ``integrity.jsonl`` is gone).
    The one check ``score``, ``analyze``, ``report`` and ``export`` use."""
    run_dir = Path(run_dir)
    raw_manifest, manifest = _manifest(run_dir)
    entries, unreadable, missing = _read_entries(run_dir / INTEGRITY)
    sessions = [(n, e) for n, e in entries if "chain" not in e]
    database, unsafe = _db_problems(sessions)
    if (manifest.get("sandbox") or {}).get("boundary") == "unsafe":
        unsafe.insert(0, "the run's model code ran with --unsafe-sandbox (manifest)")
    verdict = Verdict("verified", database=database, unsafe="; ".join(unsafe) or None)
    state = chain.ChainState()
    for number, item in entries:
        if "chain" in item:
            state.read(number, item)
    writes_chain = MANIFEST_KEY in manifest
    if not state.entries:
        verdict.database += [unreadable] if unreadable else []
        if writes_chain:
            what = "is missing" if missing else "holds no digest chain"
            verdict.status, verdict.reason = "tampered", f"{INTEGRITY} {what}"
        else:
            verdict.status = "unchained"
            verdict.notes.append("no chain (written before tamper evidence)")
        return verdict
    problems = [state.prior and f"tampered before a resume: {state.prior}", unreadable,
                state.problem]  # fmt: skip
    reason = next((p for p in problems if p), None)
    line = state.prior_line if state.prior else None
    if reason is None:
        reason, line, verdict.notes = _compare(state, run_dir, raw_manifest)
        # killed after the session's open entry, before the changes it describes
        fallback = state.fallback
        if reason is not None and fallback and _compare(fallback, run_dir, raw_manifest)[0] is None:
            reason, line, writes_chain = None, None, True
            verdict.notes = ["a session was killed as it started (the next resume completes "
                             "what it began)"]  # fmt: skip
    if reason is None and not writes_chain and raw_manifest is not None:
        reason = f"{MANIFEST} lost its {MANIFEST_KEY} entry"
    if reason is not None:
        verdict.status, verdict.reason, verdict.line = "tampered", reason, line
    return verdict


def tampering(run_dir: str | os.PathLike[str]) -> str | None:
    """Why a run directory cannot be trusted (an edited file, a changed database, code run
    without a sandbox), or None when nothing is wrong."""
    return verify_run(run_dir).tampered


def tamper_notes(runs: list[Any]) -> list[str]:
    """One ``TAMPERED`` line per run (objects with ``label`` and ``directory``) that needs one,
    and a note for each run written before tamper evidence."""
    notes = []
    for run in runs:
        verdict = verify_run(run.directory)
        if verdict.tampered:
            notes.append(f"TAMPERED {run.label}: {verdict.tampered}")
        if verdict.status == "unchained":
            notes.append(f"{run.label}: no chain (written before tamper evidence)")
    return notes


@contextmanager
def tamper_suffix(tampered: str | None) -> Iterator[None]:
    """Name the tampering in the one-line error of a command that then cannot read the run
    (a click error's message, or another error's message argument)."""
    try:
        yield
    except Exception as exc:
        if tampered:
            suffix = f" (TAMPERED run: {tampered})"
            if isinstance(getattr(exc, "message", None), str):
                exc.message += suffix
            elif exc.args and isinstance(exc.args[0], str):
                exc.args = (exc.args[0] + suffix, *exc.args[1:])
        raise
