"""Typed access to raw JSON responses, with errors that name the file and the field.

Every value the ingest reads goes through :func:`get` (or :func:`check`), so a missing field, a
``null`` where a value is required or a value of the wrong type raises :class:`IngestError` with a
message of the form ``hotels/details_12.json: rooms[0].max_occupancy: missing``.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError
from travelgym.safe_open import read_regular_bytes
from travelgym.suites.compass.calibration import NIGHTS


class IngestError(UserError):
    """A raw file is missing, malformed or incomplete; the message names the file and field."""


@dataclass(frozen=True)
class Loc:
    """Where a value sits: a file relative to the raw directory and a path inside its JSON."""

    file: str
    path: str = ""

    def key(self, name: str) -> Loc:
        return Loc(self.file, f"{self.path}.{name}" if self.path else name)

    def index(self, i: int) -> Loc:
        return Loc(self.file, f"{self.path}[{i}]")

    def error(self, message: str) -> IngestError:
        return IngestError(f"{self.file}: {self.path or '(root)'}: {message}")


MAX_MAGNITUDE = 10**12  # above any price, count, distance or id of the raw responses
OUT_OF_RANGE = f"is out of range (at most {MAX_MAGNITUDE:.0e} in size)"


class BadNumber:
    """A number of a raw file that is no finite number of a sane size (``NaN``, ``Infinity``,
    an integer of thousands of digits): kept as its text when the file is parsed, so that the
    field reading it (:func:`check`) names the file and the field."""

    def __init__(self, text: str, problem: str = "is not a finite number") -> None:
        self.text, self.problem = _shown(text), problem

    def __repr__(self) -> str:
        return self.text


def _shown(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


def _parse_int(text: str) -> int | BadNumber:
    """A JSON integer; one longer than any sane value is a :class:`BadNumber` (Python refuses
    to convert more than 4,300 digits, with an error that names neither file nor field)."""
    if len(text.lstrip("-")) > len(str(MAX_MAGNITUDE)):
        return BadNumber(text, OUT_OF_RANGE)
    return int(text)


def _bounded(value: int | float, loc: Loc) -> int | float:
    """``value`` when finite and within :data:`MAX_MAGNITUDE`, else an error naming ``loc``."""
    if not (isinstance(value, int) or math.isfinite(value)):
        raise loc.error(f"{value!r} is not a finite number")
    if abs(value) > MAX_MAGNITUDE:
        raise loc.error(f"{_shown(str(value))} {OUT_OF_RANGE}")
    return value


_KIND_NAMES = {
    "str": "a string",
    "int": "an integer",
    "number": "a number",
    "flag": "a boolean or 0/1",
    "list": "a list",
    "dict": "an object",
}


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def check(value: Any, loc: Loc, kind: str) -> Any:
    """Return ``value`` converted to ``kind`` or raise an error naming ``loc``."""
    bad = loc.error(f"expected {_KIND_NAMES[kind]}, got {_type_name(value)}")
    if kind == "str":
        if not isinstance(value, str):
            raise bad
        if not value.strip():
            raise loc.error("empty string")
        return value.strip()
    if isinstance(value, BadNumber):
        raise loc.error(f"{value.text} {value.problem}")
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad
        return _bounded(value, loc)
    if kind == "number":
        # The Booking.com API sends some numbers as strings ("distance": "1.25").
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                raise bad from None
            if not math.isfinite(number):
                raise loc.error(f"{_shown(value)} is not a finite number")
            return _bounded(number, loc)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise bad
        return float(_bounded(value, loc))
    if kind == "flag":
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise bad
    if kind == "list":
        if not isinstance(value, list):
            raise bad
        return value
    if kind == "dict":
        if not isinstance(value, dict):
            raise bad
        return value
    raise ValueError(f"unknown kind {kind!r}")  # pragma: no cover - programming error


def get(obj: Any, name: str, loc: Loc, kind: str, *, required: bool = True) -> Any:
    """Field ``name`` of the object ``obj`` found at ``loc``, checked against ``kind``.

    A missing or ``null`` field raises when ``required``, else returns ``None``.
    """
    if not isinstance(obj, dict):
        raise loc.error(f"expected an object, got {_type_name(obj)}")
    value = obj.get(name)
    if value is None:
        if required:
            raise loc.key(name).error("missing")
        return None
    return check(value, loc.key(name), kind)


def get_path(obj: Any, names: str, loc: Loc, kind: str, *, required: bool = True) -> Any:
    """Like :func:`get` for a dotted path (``"paymentterms.prepayment.type"``)."""
    *parents, last = names.split(".")
    for name in parents:
        obj = get(obj, name, loc, "dict", required=required)
        if obj is None:
            return None
        loc = loc.key(name)
    return get(obj, last, loc, kind, required=required)


def items(obj: Any, name: str, loc: Loc, *, required: bool = True) -> Iterator[tuple[Any, Loc]]:
    """Yield (element, location) for each element of the list field ``name``."""
    values = get(obj, name, loc, "list", required=required) or []
    base = loc.key(name)
    for i, value in enumerate(values):
        yield value, base.index(i)


def in_range(value: float, loc: Loc, lo: float, hi: float) -> float:
    """Return ``value`` if ``lo <= value <= hi``, else raise naming ``loc``."""
    if not lo <= value <= hi:
        raise loc.error(f"{value!r} out of range [{lo:g}, {hi:g}]")
    return value


def lookup(table: dict[str, str], raw: str, loc: Loc) -> str:
    """Map a raw vocabulary value (case, spaces and hyphens ignored) through ``table``."""
    key = raw.strip().lower().replace(" ", "_").replace("-", "_")
    if key not in table:
        raise loc.error(f"unknown value {raw!r} (known: {', '.join(sorted(table))})")
    return table[key]


def parse_date(text: str, loc: Loc) -> str:
    """Parse ``YYYY-MM-DD`` inside the booking window (August 2025) or raise naming ``loc``.

    Package IDs name days of August 2025 (``docs/compass/package_ids.md``), so data for any other
    date could never be booked.
    """
    try:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            raise ValueError
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise loc.error(f"invalid date {text!r} (expected YYYY-MM-DD)") from None
    if day not in NIGHTS:
        raise loc.error(f"{text} is outside the booking window {NIGHTS[0]} .. {NIGHTS[-1]}")
    return day.isoformat()


def parse_datetime(text: str, loc: Loc) -> dt.datetime:
    """Parse a local ISO timestamp (``2025-08-01T08:30:00``) or raise naming ``loc``."""
    try:
        return dt.datetime.fromisoformat(text).replace(tzinfo=None)
    except ValueError:
        raise loc.error(f"invalid timestamp {text!r} (expected YYYY-MM-DDTHH:MM:SS)") from None


def load_json(root: Path, rel: str) -> Any:
    """Parse the raw file ``root/rel``; any read or syntax error names the file."""
    try:
        text = read_regular_bytes(root / rel).decode("utf-8")  # a FIFO would block forever
    except FileNotFoundError:
        raise IngestError(f"{rel}: missing file") from None
    except UnicodeDecodeError:
        raise IngestError(f"{rel}: not UTF-8 text") from None
    except OSError as exc:
        raise IngestError(f"{rel}: unreadable: {exc.strerror}") from None
    try:
        return json.loads(text, parse_int=_parse_int, parse_constant=BadNumber)
    except json.JSONDecodeError as exc:
        raise IngestError(
            f"{rel}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise IngestError(f"{rel}: invalid JSON: nested too deeply") from None


def scan(
    root: Path, folder: str, patterns: dict[str, re.Pattern[str]], expected: str
) -> dict[str, list[tuple[str, re.Match[str]]]]:
    """Sort the ``*.json`` files of ``root/folder`` by which pattern their name matches.

    Returns, per pattern name, ``(relative path, match)`` pairs in name order. A JSON file that
    matches no pattern raises (naming the ``expected`` names), so a typo in a file name is never
    silently ignored.
    """
    found: dict[str, list[tuple[str, re.Match[str]]]] = {name: [] for name in patterns}
    directory = root / folder
    if not directory.is_dir():
        return found
    for path in sorted(directory.glob("*.json")):
        rel = f"{folder}/{path.name}"
        for name, pattern in patterns.items():
            match = pattern.fullmatch(path.name)
            if match:
                found[name].append((rel, match))
                break
        else:
            raise IngestError(f"{rel}: file name: unexpected (expected {expected})")
    return found
