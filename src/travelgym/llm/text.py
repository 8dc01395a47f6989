"""Invalid Unicode from models and clients, made harmless at the boundary.

A model reply can carry text that is not valid Unicode: a JSON escape of a lone surrogate
(``"\\ud83d"``) or bytes that are not UTF-8. Python keeps such text as lone surrogate code points,
which no UTF-8 writer accepts, so one bad character would abort writing the whole episode. Every
piece of model text goes through :func:`clean_text` (or :func:`clean_value`) as it enters:
surrogate pairs are joined into their character, every other surrogate becomes U+FFFD, and the
number of replacements is reported so the trajectory can flag it. Undecodable bytes are first
turned into lone surrogates by :func:`decode_body`, so one sanitiser handles both.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")

M = TypeVar("M", bound=BaseModel)


def clean_text(text: str) -> tuple[str, int]:
    """``(text with invalid Unicode replaced by U+FFFD, number of characters replaced)``."""
    if _SURROGATE.search(text) is None:
        return text, 0
    # UTF-16 round trip: a high+low pair becomes its character, any other surrogate U+FFFD
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return fixed, fixed.count(REPLACEMENT) - text.count(REPLACEMENT)


def clean_value(value: Any) -> tuple[Any, int]:
    """``value`` (str, or dicts and lists of them, keys included) with :func:`clean_text`
    applied to every string, and the total number of characters replaced. Values without
    invalid text are returned as they are (not copied)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        total = 0
        for key, item in value.items():
            key, n_key = clean_value(key)
            item, n_item = clean_value(item)
            out[key] = item
            total += n_key + n_item
        return (out, total) if total else (value, 0)
    if isinstance(value, (list, tuple)):
        items, total = [], 0
        for item in value:
            item, n = clean_value(item)
            items.append(item)
            total += n
        return (type(value)(items), total) if total else (value, 0)
    return value, 0


def clean_arguments(arguments: Any) -> tuple[Any, Any, int]:
    """Tool-call arguments made safe to run and to record: ``(arguments for the tool,
    arguments for the trajectory, characters replaced)``.

    Invalid Unicode is replaced wherever it is: in the text itself, in a dict's strings, or
    behind JSON escapes of lone surrogates in argument text (``{"city": "\\ud83d"}``), which
    only appear once the JSON is parsed; then the tool gets the cleaned object while the
    trajectory keeps the text as sent (it is plain ASCII there)."""
    if not isinstance(arguments, str):
        cleaned, replaced = clean_value(arguments)
        return cleaned, cleaned, replaced
    text, replaced = clean_text(arguments)
    if _SURROGATE_ESCAPE.search(text) is None:
        return text, text, replaced
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return text, text, replaced  # the tool layer reports the bad JSON
    cleaned, escaped = clean_value(parsed)
    return (cleaned if escaped else text), text, replaced + escaped


def decode_body(data: bytes) -> str:
    """HTTP body bytes as text; bytes that are not UTF-8 become lone surrogates
    (``surrogateescape``), which :func:`clean_text` later replaces and counts."""
    return data.decode("utf-8", "surrogateescape")


def load_json_body(data: bytes) -> Any:
    """Parse a JSON body that may hold invalid UTF-8; ``ValueError`` when it is not JSON
    (including JSON nested too deep to parse)."""
    try:
        return json.loads(decode_body(data))
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


def serialisable(model: M) -> tuple[M, int]:
    """``(model, 0)`` when it serialises to JSON; otherwise a copy with every string cleaned by
    :func:`clean_value`, and the number of characters replaced. A last line of defence for
    records (episodes) assembled from many sources: whatever slipped past the boundary must
    not stop the record from being written."""
    try:
        model.model_dump_json()
        return model, 0
    except (PydanticSerializationError, UnicodeError):
        data, replaced = clean_value(model.model_dump())
        return type(model).model_validate(data), replaced
