"""Reading JSON Lines files whose every failure names the file, the line and the reason.

A line that is not UTF-8, not JSON, nested beyond what the parser can follow, or holding a
number too long to convert raises :class:`JsonLinesError` instead of an exception that names
neither file nor line (or, for deep nesting, a bare ``RecursionError``). Lines are read one at a
time, so a large file is never held whole in memory; a path that is not a regular file (a FIFO,
a device) is refused before anything is read (:mod:`travelgym.safe_open`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from travelgym.safe_open import open_regular


class JsonLinesError(ValueError):
    """A JSON Lines file that cannot be read; the message names the file and line."""


def iter_json_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for every non-blank line of ``path`` (numbered from 1)."""
    path = Path(path)
    try:
        handle = open_regular(path)
    except OSError as exc:
        raise JsonLinesError(f"{path}: cannot read: {exc.strerror or exc}") from None
    with handle:
        number = 0
        while True:
            try:
                raw = handle.readline()
            except OSError as exc:
                raise JsonLinesError(f"{path}:{number + 1}: cannot read: "
                                     f"{exc.strerror or exc}") from None  # fmt: skip
            if not raw:
                return
            number += 1
            if raw.strip():
                yield number, parse_json_line(raw, f"{path}:{number}")


def parse_json_line(raw: bytes, where: str) -> Any:
    """One line of JSON (UTF-8 bytes); errors are :class:`JsonLinesError` prefixed ``where``."""
    try:
        text = raw.decode("utf-8").rstrip("\r\n")  # so that error columns count from the line
    except UnicodeDecodeError as exc:
        raise JsonLinesError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start + 1})"
                             ) from None  # fmt: skip
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonLinesError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})"
                             ) from None  # fmt: skip
    except RecursionError:
        raise JsonLinesError(f"{where}: JSON nested too deeply to read") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise JsonLinesError(f"{where}: not valid JSON ({exc})") from None
