"""The bounded per-process memos of the plan readers and planners (texts, keys, local legs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class BoundedMemo(dict):
    """A dict that makes a missing key's value by ``make(key)`` and remembers it; emptied when
    it holds ``kept`` entries (a lookup miss then starts it afresh)."""

    def __init__(self, make: Callable[[Any], Any] | None, kept: int) -> None:
        super().__init__()
        self.make, self.kept = make, kept

    def __missing__(self, key: Any) -> Any:
        return self.keep(key, self.make(key))

    def keep(self, key: Any, value: Any) -> Any:
        """Remember ``value`` under ``key`` (emptying the memo first when full) and return it."""
        if len(self) >= self.kept:
            self.clear()
        self[key] = value
        return value
