"""Run directories: a manifest and an append-only JSONL of finished episodes, with guarantees.

- **One writer**: a run holds an exclusive lock on ``DIR/run.lock`` (:mod:`~travelgym.runner.lock`)
  from :meth:`RunStore.open` to :meth:`RunStore.close`; a second run into the directory is refused
  at once, naming the holder's pid.
- **Durable appends**: each episode is one line, written in full (short writes retried) and
  ``fsync``-ed; a failed append (disk full, read-only, I/O error) is cut back and stops the run
  with one line naming the file, leaving every saved episode readable.
- **Strict reading** (:mod:`~travelgym.runner.episode_file`): every line is read by the rules of
  its ``format_version``; a bad line is an error naming the file and the line. Only a torn last
  line (a run killed mid-write) is repaired on ``--resume``, and ``--resume --repair`` takes bad
  lines out; what is taken out goes to ``episodes.quarantine.jsonl`` beside the run, never lost.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from travelgym.runner import chain
from travelgym.runner.durable import append_durably, append_file, fsync_dir, replace_atomically
from travelgym.runner.episode_file import BadLine, EpisodeLines, read_episode_file, scan_episodes
from travelgym.runner.errors import RunDirError, StoreWriteError
from travelgym.runner.formats import known_suites, suite_of_model
from travelgym.runner.integrity import INTEGRITY, verify_run
from travelgym.runner.lock import RunLock
from travelgym.safe_open import read_regular_text

__all__ = ["EPISODES", "MANIFEST", "QUARANTINE", "RunDirError", "RunStore", "read_episodes",
           "read_manifest", "read_run"]  # fmt: skip

EPISODES = "episodes.jsonl"
MANIFEST = "manifest.json"
QUARANTINE = "episodes.quarantine.jsonl"
# manifest keys that must match for a run to be resumed
IDENTITY_KEYS = ("suite", "agent", "user", "seed", "trials", "task_ids", "db_content_hash",
                 "tasks_sha256", "max_turns", "generation", "prompt")  # fmt: skip
# what an identity key missing from a manifest written before it existed meant
IDENTITY_DEFAULTS: dict[str, Any] = {"generation": {}}
REPAIR_HINT = (f"; `travelgym run ... --resume --repair` moves bad lines to {QUARANTINE} and "
               "runs their episodes again")  # fmt: skip


class RunStore:
    """The writer of one run directory (use :meth:`open` first, :meth:`close` at the end, or
    ``with``)."""

    def __init__(self, directory: Path) -> None:
        self.dir = Path(directory)
        self.episodes_path = self.dir / EPISODES
        self.manifest_path = self.dir / MANIFEST
        self.quarantine_path = self.dir / QUARANTINE
        self.notes: list[str] = []  # what opening the run repaired (for the user)
        self._lock = RunLock(self.dir)
        self._fd: int | None = None
        self._saved = 0  # episodes in the file
        self._failure: str | None = None
        # the digest chain (see travelgym.runner.chain): integrity.jsonl's fd, lines, head
        self._chain_fd: int | None = None
        self._lines = 0
        self._head = chain.genesis()
        self._prior: Any = None  # the verdict on the directory before this session changed it
        self._rewrote: str | None = None  # why this session rewrote lines of the file
        self._manifest_sha256: str | None = None
        self._amend: dict[str, Any] = {}  # entries the manifest gains as the session closes

    def open(self, manifest: dict[str, Any], resume: bool, retry_errors: bool = False,
             repair: bool = False,
             identity: dict[str, Any] | None = None) -> set[tuple[str, int]]:  # fmt: skip
        """Lock and prepare the directory; return the (task_id, trial) keys already done. On
        resume a torn last line is quarantined; ``repair`` quarantines bad lines too and
        ``retry_errors`` the episodes that ended in an error, so that they run again.
        ``identity``: the suite's own manifest keys that must match too (key -> the value an
        older manifest without the key stands for)."""
        if repair and not resume:
            raise RunDirError("--repair works on a run being continued: add --resume")
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RunDirError(
                f"cannot create the run directory {self.dir}: {exc.strerror}"
            ) from None
        if not self.dir.is_dir():
            raise RunDirError(f"cannot use {self.dir} as a run directory: not a directory")
        self._lock.acquire()
        try:
            done = self._prepare(manifest, resume, retry_errors, repair, identity or {})
            self._open_for_append()
        except BaseException:
            self.close()
            raise
        return done

    def _prepare(self, manifest: dict[str, Any], resume: bool, retry_errors: bool, repair: bool,
                 identity: dict[str, Any]) -> set[tuple[str, int]]:  # fmt: skip
        if self.manifest_path.exists():
            old = read_manifest(self.dir)
            diff = [k for k in IDENTITY_KEYS if _identity_of(old, k) != _identity_of(manifest, k)]
            diff += [k for k, was in identity.items() if old.get(k, was) != manifest.get(k)]
            if "task_ids" in diff and resume:
                diff.remove("task_ids")
                self._check_extension(old.get("task_ids"), manifest.get("task_ids"))
            if diff:
                raise RunDirError(f"{self.dir} holds a different run (differs in: {', '.join(diff)}); "
                                  "choose another --out")  # fmt: skip
            manifest = {**manifest, "created": old.get("created", manifest.get("created"))}
        if not resume and self.episodes_path.exists() and self.episodes_path.stat().st_size:
            raise RunDirError(f"{self.dir} already has episodes; pass --resume to continue it")
        self._prior = verify_run(self.dir)  # before anything here changes the files
        manifest = {**manifest, chain.MANIFEST_KEY: chain.FORMAT}
        text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
        self._manifest_sha256 = hashlib.sha256(text.encode()).hexdigest()
        suite = manifest.get("suite") if manifest.get("suite") in known_suites() else None
        lines = scan_episodes(self.episodes_path, suite)
        _mark_strangers(lines, manifest)
        if lines.bad and not repair:
            raise lines.error(REPAIR_HINT)
        removed = lines.bad + ([lines.torn] if lines.torn else [])
        if retry_errors:
            removed += _error_lines(lines, self.episodes_path)
        if removed:
            self._quarantine(removed)
        rewrite = len(removed) > bool(lines.torn)  # lines in the middle go: rewrite the file
        data = self.episodes_path.read_bytes()[: lines.good_end] if lines.good_end else b""
        kept = _without(data, {b.number for b in removed})
        if rewrite:
            why = "--retry-errors" if retry_errors else "--repair"
            self._rewrote = f"{why} took out line(s) {sorted(b.number for b in removed)}"
        # the chain's open entry first, then the changes it describes: a kill in between leaves
        # the files as they were, which the entry still accepts until a line follows it
        self._start_chain(kept)
        self._write(
            self.manifest_path, lambda: replace_atomically(self.manifest_path, text.encode())
        )
        if rewrite:
            self._write(self.episodes_path,
                        lambda: replace_atomically(self.episodes_path, b"".join(kept)))  # fmt: skip
        elif lines.torn:
            self._write(self.episodes_path, lambda: _truncate(self.episodes_path, lines.good_end))
        gone = {b.number for b in removed}
        done = {k for k, n in zip(lines.keys, lines.numbers, strict=True) if n not in gone}
        self._saved = len(done)
        return done

    def _check_extension(self, old: Any, new: Any) -> None:
        """Accept a resumed selection that extends the recorded one (``--limit`` raised: the
        recorded task ids are a prefix of the new ones; the manifest then records the new
        ones and only the added tasks run). A shorter or different selection is refused: the
        run's episodes would fall outside it."""
        if not isinstance(old, list) or not isinstance(new, list):
            raise RunDirError(f"{self.dir} holds a different run (differs in: task_ids); "
                              "choose another --out")  # fmt: skip
        if new[: len(old)] == old:
            if len(new) > len(old):
                self.notes.append(f"extending the run from {len(old)} to {len(new)} tasks")
            return
        if old[: len(new)] == new:
            raise RunDirError(f"{self.dir} holds a run of {len(old)} tasks and this selection "
                              f"has only their first {len(new)}; resume with the run's own "
                              f"selection (e.g. --limit {len(old)}) or choose another --out")  # fmt: skip
        raise RunDirError(f"{self.dir} holds a different run (differs in: task_ids, and the "
                          "run's tasks are not the first of this selection); choose another "
                          "--out")  # fmt: skip

    def _quarantine(self, lines: list[BadLine]) -> None:
        """Append the lines taken out of ``episodes.jsonl``, with why, to the quarantine file."""
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        kept = _quarantined(self.quarantine_path)
        records = []
        for bad in sorted(lines, key=lambda b: b.number):
            record: dict[str, Any] = {"source": EPISODES, "line": bad.number, "reason": bad.reason,
                                      "quarantined_at": now}  # fmt: skip
            try:
                record["text"] = bad.raw.decode("utf-8")
            except UnicodeDecodeError:
                record["bytes_base64"] = base64.b64encode(bad.raw).decode("ascii")
            self.notes.append(f"{self.episodes_path}:{bad.number}: {bad.reason}; moved to "
                              f"{self.quarantine_path}")  # fmt: skip
            if _identity(record) in kept:  # kept by a session killed before it cut the line out
                continue
            records.append(json.dumps(record, ensure_ascii=False) + "\n")
        data = "".join(records).encode("utf-8")
        self._write(self.quarantine_path, lambda: append_file(self.quarantine_path, data))

    def _write(self, path: Path, action) -> None:
        try:
            action()
        except OSError as exc:
            raise StoreWriteError(f"cannot write {path}: {exc.strerror or exc}; nothing saved "
                                  "before was changed") from None  # fmt: skip

    def _open_for_append(self) -> None:
        try:
            self._fd = os.open(self.episodes_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreWriteError(f"cannot open {self.episodes_path}: {exc.strerror}") from None
        fsync_dir(self.dir)

    def _start_chain(self, lines: list[bytes] | None = None) -> None:
        """Open ``integrity.jsonl`` for the chain and write this session's ``open`` entry: the
        file's ``lines`` as this session leaves them (default: as they are), the manifest's
        digest, what the check before found, and every line's head where this session rewrites
        the file or adopts unchained lines."""
        if self._prior is None:
            self._prior = verify_run(self.dir)
        if self._manifest_sha256 is None and self.manifest_path.exists():
            self._manifest_sha256 = hashlib.sha256(self.manifest_path.read_bytes()).hexdigest()
        if lines is None:
            data = self.episodes_path.read_bytes() if self.episodes_path.exists() else b""
            lines, _ = chain.split_lines(data)
        heads = chain.heads_of(lines)
        self._lines, self._head = len(lines), heads[-1] if heads else chain.genesis()
        prior = self._prior.reason if self._prior.status == "tampered" else None
        why = self._rewrote or (prior and "re-chained after tampering")
        if why is None and self._prior.status == "unchained" and lines:
            why = f"adopted {len(lines)} line(s) written before tamper evidence"
        fields: dict[str, Any] = {
            "at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "lines": self._lines, "head": self._head.hex(),
            "manifest_sha256": self._manifest_sha256, "prior": prior,
            "prior_line": self._prior.line if prior else None,
        }  # fmt: skip
        if why is not None:
            fields["rewrite"] = {"reason": why, "heads": [h.hex() for h in heads]}
        path = self.dir / INTEGRITY
        try:
            self._chain_fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            _cut_torn_tail(self._chain_fd, path)  # a kill mid-write of its last entry
            append_durably(self._chain_fd, chain.entry("open", **fields))
        except OSError as exc:
            raise StoreWriteError(f"cannot write {path}: {exc.strerror or exc}") from None

    def append(self, episode: BaseModel) -> None:
        """Save one finished episode (a whole line, fsynced) or raise :class:`StoreWriteError`
        (after which the store refuses further appends: the run must stop)."""
        if self._failure is not None:
            raise StoreWriteError(self._failure)
        if self._fd is None:  # appending without open(): still the only writer
            self._lock.acquire()
            self._open_for_append()
            self._start_chain()
        line = (episode.model_dump_json() + "\n").encode()
        start = os.fstat(self._fd).st_size
        head = chain.step(self._head, line)
        try:
            # the line's head first: a kill between the two leaves the chain one line ahead,
            # which the next session accepts; never a line the chain does not cover
            entry = chain.entry("line", n=self._lines + 1, head=head.hex())
            append_durably(self._chain_fd, entry, data_only=True)
            append_durably(self._fd, line)
        except OSError as exc:
            what = f"{getattr(episode, 'task_id', '?')} trial {getattr(episode, 'trial', 0)}"
            self._failure = (f"cannot save episode {what} to {self.episodes_path}: "
                             f"{exc.strerror or exc}; the {self._saved} episode(s) saved before "
                             f"are intact{self._left_behind(start, len(line))}: free space (or "
                             "fix the disk) and run again with --resume")  # fmt: skip
            raise StoreWriteError(self._failure) from None
        self._saved += 1
        self._lines, self._head = self._lines + 1, head

    def _left_behind(self, start: int, size: int) -> str:
        """What a failed append left in the file when it could not be cut back (a disk that
        went read-only after the write but before its ``fsync``): said, so the count of lines a
        reader finds there is explained; ``--resume`` reads that line like any other."""
        try:
            now = os.fstat(self._fd).st_size
        except OSError:
            return "; whether this episode's line reached the file is unknown"
        if now == start:
            return ""
        if now == start + size:
            return " (this episode's whole line reached the file but could not be synced)"
        return " (a part of this episode's line is left at the end of the file)"

    @property
    def saved(self) -> int:
        """Episodes in the file (those found on opening plus those appended since)."""
        return self._saved

    def amend_manifest(self, entries: dict[str, Any]) -> None:
        """Add ``entries`` (what only the end of the session knows) to the manifest when the
        session closes without a failed write: the chain's close entry names the amended
        manifest's digest, then the manifest is replaced (a kill in between leaves the old one,
        which the chain still accepts)."""
        self._amend.update(entries)

    def _amended_manifest(self) -> bytes | None:
        """The manifest with :meth:`amend_manifest`'s entries, or ``None`` (nothing to add, or
        the file is not the one this session wrote)."""
        if not self._amend or self._manifest_sha256 is None:
            return None
        try:
            data = self.manifest_path.read_bytes()
        except OSError:
            return None
        if hashlib.sha256(data).hexdigest() != self._manifest_sha256:
            return None
        amended = {**json.loads(data), **self._amend}
        return (json.dumps(amended, indent=2, sort_keys=True) + "\n").encode()

    def close(self) -> None:
        """Stop writing and give the directory's lock up (idempotent); a session that ended
        without a failed write closes its chain (nothing may go missing after that)."""
        if self._chain_fd is not None:
            fd, self._chain_fd = self._chain_fd, None
            try:
                if self._failure is None and self._fd is not None:
                    fields: dict[str, Any] = {"lines": self._lines, "head": self._head.hex()}
                    amended = self._amended_manifest()
                    if amended is not None:
                        fields["manifest_sha256"] = hashlib.sha256(amended).hexdigest()
                    append_durably(fd, chain.entry("close", **fields))
                    if amended is not None:
                        replace_atomically(self.manifest_path, amended)
            except OSError:
                pass  # the run's own error says what went wrong; the chain stays open
            finally:
                os.close(fd)
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)
        self._lock.release()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()


def _identity(record: dict[str, Any]) -> tuple:
    return tuple(record.get(k) for k in ("line", "reason", "text", "bytes_base64"))


def _quarantined(path: Path) -> set[tuple]:
    """The identities of the records already in a quarantine file (unreadable lines skipped:
    the file is only ever appended to, so at worst a record is kept twice)."""
    if not path.exists():
        return set()
    found = set()
    for raw in path.read_bytes().splitlines():
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict):
            found.add(_identity(record))
    return found


def _without(data: bytes, numbers: set[int]) -> list[bytes]:
    """The complete lines of ``data`` (with their newlines) but those numbered ``numbers``."""
    return [raw + b"\n" for n, raw in enumerate(data.split(b"\n")[:-1], start=1)
            if n not in numbers]  # fmt: skip


def _cut_torn_tail(fd: int, path: Path) -> None:
    """Cut an unterminated last line off ``path``, open as ``fd`` (read once per session)."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        os.ftruncate(fd, data.rfind(b"\n") + 1)
        os.fsync(fd)


def _truncate(path: Path, size: int) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    finally:
        os.close(fd)


def _identity_of(manifest: dict[str, Any], key: str) -> Any:
    """The value of identity key ``key`` in ``manifest`` (its default when it is missing)."""
    return manifest.get(key, IDENTITY_DEFAULTS.get(key))


def _mark_strangers(lines: EpisodeLines, manifest: dict[str, Any]) -> None:
    """Move episodes outside the manifest's task_ids x trials from ``lines`` to its bad lines."""
    task_ids, trials = manifest.get("task_ids"), manifest.get("trials")
    if not isinstance(task_ids, list) or not isinstance(trials, int):
        return
    wanted = {(t, k) for t in task_ids for k in range(trials)}
    keep = [i for i, key in enumerate(lines.keys) if key in wanted]
    if len(keep) == len(lines.keys):
        return
    data = lines.path.read_bytes().split(b"\n")
    for i, key in enumerate(lines.keys):
        if key not in wanted:
            number = lines.numbers[i]
            reason = f"episode {key[0]} trial {key[1]} is not part of this run (see {MANIFEST})"
            lines.bad.append(BadLine(number, reason, data[number - 1]))
    lines.bad.sort(key=lambda b: b.number)
    for name in ("episodes", "keys", "numbers"):
        values = getattr(lines, name)
        setattr(lines, name, [values[i] for i in keep])


def _error_lines(lines: EpisodeLines, path: Path) -> list[BadLine]:
    """The lines of episodes that ended in an infrastructure error (``--retry-errors`` runs them
    again; a model error is a measured result and stays)."""
    numbers = [n for e, n in zip(lines.episodes, lines.numbers, strict=True)
               if e.outcome == "infra_error"]  # fmt: skip
    if not numbers:
        return []
    data = path.read_bytes().split(b"\n")
    return [BadLine(n, "ended in an infra error; taken out to run again (--retry-errors)",
                    data[n - 1])
            for n in numbers]  # fmt: skip


def read_manifest(directory: Path) -> dict[str, Any]:
    """A run directory's manifest (``{}`` when it has none); :class:`RunDirError` naming the file
    when it cannot be read."""
    path = Path(directory) / MANIFEST
    if not path.exists():
        return {}
    try:
        data = json.loads(read_regular_text(path))
    except OSError as exc:
        raise RunDirError(f"cannot read {path}: {exc.strerror}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise RunDirError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise RunDirError(f"{path}: not a JSON object")
    return data


@dataclass
class RunContents:
    """A run directory as read: manifest, episodes, their keys, and a torn last line if any."""

    directory: Path
    manifest: dict[str, Any]
    episodes: list[Any]
    keys: list[tuple[str, int]]
    torn: BadLine | None


def read_run(directory: Path, suite: str | None = None, *, as_dicts: bool = False) -> RunContents:
    """Read a run directory strictly (read only: nothing is repaired). ``suite``: the suite the
    episodes must be of (default: the manifest's). A torn last line is left out (``.torn``)."""
    directory = Path(directory)
    if not (directory / EPISODES).exists():
        raise RunDirError(f"{directory} is not a run directory: no {EPISODES}")
    manifest = read_manifest(directory)
    if suite is None and manifest.get("suite") in known_suites():
        suite = manifest["suite"]
    lines = read_episode_file(directory / EPISODES, suite, as_dicts=as_dicts, hint=REPAIR_HINT)
    return RunContents(directory, manifest, lines.episodes, lines.keys, lines.torn)


def read_episodes(directory: Path, model: type[BaseModel] | None = None) -> list:
    """All complete episodes of a run directory, as the episode model of its suite (the
    manifest's; or the suite whose model is ``model``), read strictly (see :func:`read_run`)."""
    return read_run(directory, None if model is None else suite_of_model(model)).episodes
