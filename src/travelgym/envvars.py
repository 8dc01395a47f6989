"""Numeric settings read from environment variables, checked when read."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

N = TypeVar("N", int, float)


def number_from_env(
    name: str,
    default: N,
    parse: Callable[[str], N],
    accept: Callable[[N], bool],
    requirement: str,
    error: type[Exception] = ValueError,
) -> N:
    """``$name`` parsed by ``parse`` (surrounding blanks ignored), or ``default`` when it is
    unset or blank. A value ``parse`` rejects, or one ``accept`` says no to, raises ``error``
    with ``"{name} must be {requirement}, got {raw!r}"``."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = parse(raw)
        valid = accept(value)
    except ValueError:
        valid = False
    if not valid:
        raise error(f"{name} must be {requirement}, got {raw!r}")
    return value
