"""The one strict reader of ``episodes.jsonl``: every line read by the rules of its version.

A line that is not UTF-8, not JSON, not an episode of the run's suite, or repeats an episode
already read is *bad*: an error naming the file, the line number and the reason, never skipped.
The only exception is a *torn* last line (no newline after it: the signature of a run killed
mid-write), which readers leave out and report, and which ``--resume`` moves to the quarantine
file (see :mod:`travelgym.runner.store`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from travelgym.runner.errors import EpisodeFileError, RunDirError
from travelgym.runner.formats import LineProblem, parse_episode
from travelgym.safe_open import read_regular_bytes

TORN = "torn last line (no newline after it: a run killed mid-write)"


@dataclass
class BadLine:
    """One line that is not a readable episode: its number (1-based), why, and its bytes."""

    number: int
    reason: str
    raw: bytes


@dataclass
class EpisodeLines:
    """What a scan of ``episodes.jsonl`` found."""

    path: Path
    episodes: list[Any] = field(default_factory=list)  # models, or dicts with ``as_dicts``
    keys: list[tuple[str, int]] = field(default_factory=list)  # (task_id, trial) per episode
    numbers: list[int] = field(default_factory=list)  # line number per episode
    bad: list[BadLine] = field(default_factory=list)
    torn: BadLine | None = None
    good_end: int = 0  # bytes up to and including the last newline

    def error(self, hint: str = "") -> EpisodeFileError:
        """The error for the first bad line (one line: file, line number, reason, count)."""
        first = self.bad[0]
        more = f" (and {len(self.bad) - 1} more bad line(s))" if len(self.bad) > 1 else ""
        return EpisodeFileError(f"{self.path}:{first.number}: {first.reason}{more}{hint}")


def decode_line(raw: bytes) -> Any:
    """The JSON value of one line; :class:`LineProblem` saying why it is not one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LineProblem(f"not valid UTF-8 (byte {raw[exc.start]:#04x} at column "
                          f"{exc.start + 1})") from None  # fmt: skip
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise LineProblem(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise LineProblem("not valid JSON (nested too deeply)") from None


def scan_episodes(path: Path, suite: str | None, *, as_dicts: bool = False) -> EpisodeLines:
    """Read every line of ``path`` (a missing file reads as empty); content problems are
    collected in the result, never raised; an unreadable file raises :class:`RunDirError`."""
    path = Path(path)
    result = EpisodeLines(path)
    try:
        data = read_regular_bytes(path)  # a FIFO or a device is refused, never read
    except FileNotFoundError:
        return result
    except OSError as exc:
        raise RunDirError(f"cannot read {path}: {exc.strerror}") from None
    result.good_end = data.rfind(b"\n") + 1
    lines = data[: result.good_end].split(b"\n")[:-1]
    if result.good_end < len(data):
        result.torn = BadLine(len(lines) + 1, TORN, data[result.good_end :])
    seen: dict[tuple[str, int], int] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue  # an empty line holds nothing to lose
        try:
            _, obj, episode = parse_episode(decode_line(raw), suite)
        except LineProblem as exc:
            result.bad.append(BadLine(number, str(exc), raw))
            continue
        key = (episode.task_id, episode.trial)
        if key in seen:
            reason = f"episode {key[0]} trial {key[1]} again (first at line {seen[key]})"
            result.bad.append(BadLine(number, reason, raw))
            continue
        seen[key] = number
        result.episodes.append(obj if as_dicts else episode)
        result.keys.append(key)
        result.numbers.append(number)
    return result


def read_episode_file(path: Path, suite: str | None, *, as_dicts: bool = False,
                      hint: str = "") -> EpisodeLines:  # fmt: skip
    """:func:`scan_episodes`, raising :class:`EpisodeFileError` for the first bad line (a torn
    last line is left out and reported in ``.torn``)."""
    result = scan_episodes(path, suite, as_dicts=as_dicts)
    if result.bad:
        raise result.error(hint)
    return result
