"""Choosing a run's tasks: explicit ids in the order given, else one level, then the first
``limit`` (the same rule in every suite)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def select(items: Sequence[T], ids: Sequence[str] | None, level: Any, limit: int | None, *,
           id_of: Callable[[T], str], level_of: Callable[[T], Any], interleave: bool = False,
           noun: str = "task") -> list[T]:  # fmt: skip
    """``items`` by explicit ``ids`` (in that order; a ``ValueError`` names unknown ones), else
    those of ``level`` (``None``: all), then the first ``limit``. ``interleave``: with a limit
    and no level, the levels take turns, so that a small sample covers each."""
    if ids:
        by_id = {id_of(x): x for x in items}
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            example = f" (ids look like {id_of(items[0])})" if items else ""
            raise ValueError(f"unknown {noun} id(s): {', '.join(unknown)}{example}")
        chosen = [by_id[i] for i in ids]
    elif level is not None:
        chosen = [x for x in items if level_of(x) == level]
    elif limit is not None and interleave:
        levels: dict[Any, list[T]] = {}
        for x in items:
            levels.setdefault(level_of(x), []).append(x)
        chosen = [x for row in itertools.zip_longest(*levels.values()) for x in row if x]
    else:
        chosen = list(items)
    return chosen[:limit] if limit is not None else chosen
