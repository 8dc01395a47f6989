"""Bounded bytes stored from sandboxed code: per value (a tool call's arguments or result, the
output of a run) and per episode, with a marker where something was cut.

Code in a loop can make a thousand tool calls of a megabyte each, or print without end; what
the episode record keeps of it is capped here once, for every caller of the sandbox.
"""

from __future__ import annotations

import json
from typing import Any

MARKER = "...[cut: {} bytes]"
RESULT_BYTES = 256 << 10  # one value stored (the UTF-8 bytes of its JSON)
EPISODE_BYTES = 16 << 20  # everything one episode's sandbox calls store


def cut_text(text: str, limit: int) -> str:
    """``text`` within ``limit`` UTF-8 bytes, marker included, when it is longer."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    keep = max(0, limit - len(MARKER.format(len(data))))
    head = data[:keep].decode("utf-8", "ignore")  # never half a character
    return head + MARKER.format(len(data) - len(head.encode("utf-8", "surrogatepass")))


def _json(value: Any) -> str:
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (ValueError, RecursionError, TypeError):  # nested too deeply, a circular reference
        return '"<a value JSON cannot hold>"'


def json_size(value: Any) -> int:
    """The UTF-8 bytes of ``value`` as stored JSON."""
    return len(_json(value).encode("utf-8", "surrogatepass"))


class StoreBudget:
    """What one episode may still store: each value cut to ``per_value`` bytes and to what is
    left of ``per_episode`` (once spent, values are stored as the marker alone)."""

    def __init__(self, per_value: int = RESULT_BYTES, per_episode: int = EPISODE_BYTES) -> None:
        self.per_value, self.per_episode, self.used = per_value, per_episode, 0

    def allowance(self) -> int:
        """The bytes the next value may take."""
        return max(0, min(self.per_value, self.per_episode - self.used))

    def text(self, text: str) -> str:
        """``text`` as stored (cut where over the allowance), charged to the episode."""
        kept = cut_text(text, self.allowance())
        self.used += len(kept.encode("utf-8", "surrogatepass"))
        return kept

    def value(self, value: Any) -> Any:
        """A JSON value as stored: itself when within the allowance, else its JSON text cut
        (a string ending in the marker); charged to the episode."""
        text = _json(value)
        size = len(text.encode("utf-8", "surrogatepass"))
        if size <= self.allowance() and not text.startswith('"<a value JSON'):
            self.used += size
            return value
        return self.text(text)
