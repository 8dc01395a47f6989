"""What the text environments share: the Gymnasium-style synchronous API over async code, and
opening a database given as a connection or a path; and which installed suites train."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from travelgym.db import connect_readonly

if TYPE_CHECKING:
    from travelgym.core.suite import Suite

T = TypeVar("T")


def training_suites() -> list[Suite]:
    """The installed suites that implement the Suite protocol's training methods
    (``Suite.trainable``), in listing order."""
    from travelgym.core.registry import all_suites

    return [s for s in all_suites() if s.trainable]


def training_suite_names() -> list[str]:
    """The names of :func:`training_suites` (the ``--suite`` choices of ``train`` and
    ``export``)."""
    return [s.name for s in training_suites()]


class EnvStateError(RuntimeError):
    """A call the environment's state does not allow (``step`` before ``reset`` or after the
    episode ended, the synchronous API inside a running event loop)."""


def open_database(db: Any) -> tuple[sqlite3.Connection, bool]:
    """``(connection, owned)`` for a connection, a path, or an object with a ``path`` (what
    ``ensure_database`` returns); a path is opened read-only and owned by the caller."""
    if isinstance(db, sqlite3.Connection):
        return db, False
    path = getattr(db, "path", db)
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"expected a database connection or path, got {type(db).__name__}")
    return connect_readonly(Path(path)), True


def choose_item(items: list[Any], by_id: dict[str, Any], options: dict[str, Any], key: str,
                rng: Any) -> Any:  # fmt: skip
    """The item a reset's ``options`` name: ``{key: ID}`` (a ``KeyError`` naming an unknown
    id), ``{"index": i}``, else one drawn with ``rng``."""
    if key in options:
        if options[key] not in by_id:
            raise KeyError(f"unknown {key} {options[key]!r}")
        return by_id[options[key]]
    if "index" in options:
        return items[int(options["index"])]
    return items[rng.randrange(len(items))]


class SyncAPI:
    """``reset``/``step`` run the ``areset``/``astep`` coroutines on a private event loop (one
    per environment, so clients bound to a loop keep working). Inside a running loop, await
    ``areset``/``astep`` instead."""

    _loop: asyncio.AbstractEventLoop | None = None

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            coro.close()
            raise EnvStateError(
                "reset()/step() cannot run inside an event loop: await areset()/astep() instead"
            )
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coro)

    def transition(self, action: Any, **meta: Any) -> Any:
        """:meth:`atransition` (the environment protocol, :mod:`travelgym.core.environment`) on
        the environment's own event loop."""
        return self._run(self.atransition(action, **meta))  # type: ignore[attr-defined]

    def _close_loop(self) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.close()
        self._loop = None
