"""Finding the JSON of a plan in an agent's final text: ``<answer>``/``<result>`` tags, code
fences, typographic quotes and Python-literal lookalikes."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any

_TAGS = ("answer", "result")
_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.S)
_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})
_CURLY = ("\u201c", "\u201d", "\u2018", "\u2019")


def _answer_body(text: str) -> tuple[str, list[str]]:
    """The text inside the last ``<answer>`` (or ``<result>``) tag, else the whole text."""
    for tag in _TAGS:
        closed = re.findall(rf"<{tag}>(.*?)</{tag}>", text, re.S | re.I)
        if closed:
            return closed[-1], [] if tag == "answer" else ["plan given in <result> tags"]
        start = [m.end() for m in re.finditer(rf"<{tag}>", text, re.I)]
        if start:
            return text[start[-1] :], [f"<{tag}> tag not closed"]
    return text, ["no <answer> tag: the plan was looked for in the whole text"]


def _unquote(text: str) -> str:
    """``text`` with typographic quotes made plain (a scan first: translating is slow)."""
    if any(q in text for q in _CURLY):
        return text.translate(_QUOTES)
    return text


def _loads(text: str) -> Any:
    text = _unquote(text.strip())
    for variant in (text, re.sub(r",\s*([\]}])", r"\1", text)):
        try:
            return json.loads(variant)
        except ValueError:
            pass
        try:  # single quotes, True/False/None
            value = ast.literal_eval(variant)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, list | dict):
            return value
    raise ValueError("invalid JSON")


def _scan(text: str) -> Iterator[Any]:
    """The non-empty JSON arrays and objects embedded in prose (balanced brackets), in order."""
    decoder = json.JSONDecoder()
    text = _unquote(text)
    pos = 0
    for m in re.finditer(r"[\[{]", text):
        if m.start() < pos:
            continue  # inside a value already found
        try:
            value, pos = decoder.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(value, list | dict) and value:
            yield value


def json_values(text: str) -> Iterator[Any]:
    """Candidate JSON values of a model's text, most likely first: code fences, the whole text,
    then arrays or objects embedded in prose (trailing commas, curly quotes and Python literals
    tolerated; ``<think>`` blocks skipped)."""
    text = re.sub(r"<think>.*?</think>", "", text, flags=re.S | re.I)
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        try:
            value = _loads(candidate)
        except ValueError:
            continue
        yield value
    for candidate in candidates:
        yield from _scan(candidate)


def extract_json(text: str) -> Any:
    """The first JSON value of :func:`json_values`. Raises ``ValueError`` when there is none."""
    for value in json_values(text):
        return value
    raise ValueError("no valid JSON found")
