"""Clean stops: SIGINT, SIGTERM and SIGHUP while a run's episodes run.

The first signal starts no new episode and gives those in flight a short grace period
(``$TRAVELGYM_STOP_GRACE_S``, 5 s by default) to finish and be saved; when it runs out, or at a
second signal, the episodes still in flight are abandoned: cancelled and not saved, so that
``--resume`` runs them again. The run then ends with :class:`RunStopped`, after its run
directory is flushed and unlocked; the command line turns it into one line and exit status
128 + the signal's number (130 for SIGINT, 143 for SIGTERM).
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError
from travelgym.envvars import number_from_env

GRACE_ENV = "TRAVELGYM_STOP_GRACE_S"
DEFAULT_GRACE_S = 5.0
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # SIGHUP: the terminal closed


class RunStopped(Exception):
    """A run stopped by a signal: ``saved`` of its ``total`` episodes are in ``directory``."""

    def __init__(self, signum: int, saved: int, total: int, directory: Path) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}: {saved} of {total} "
                         f"episodes saved in {directory}")  # fmt: skip
        self.signum, self.saved, self.total, self.directory = signum, saved, total, directory

    @property
    def exit_status(self) -> int:
        """The shell's convention for a process ended by a signal: 128 + its number."""
        return 128 + self.signum


def grace_s() -> float:
    """Seconds the episodes in flight get after the first signal: ``$TRAVELGYM_STOP_GRACE_S``
    or 5 (a :class:`UserError` for a value that is not a number of seconds, 0 or more)."""
    return number_from_env(
        GRACE_ENV,
        DEFAULT_GRACE_S,
        float,
        lambda s: s >= 0,  # NaN fails it too
        "a number of seconds, 0 or more",
        UserError,
    )


class StopSignals:
    """SIGINT and SIGTERM handled on the running event loop (a ``with`` inside a coroutine
    of that loop). Episodes are registered with :meth:`track`;
    :attr:`requested` says a stop began, :attr:`abandoned` that the tasks were cancelled for it.
    ``enabled=False`` (or outside the main thread, where signals cannot be handled) handles
    nothing: the process's own handlers stay."""

    def __init__(self, grace: float = DEFAULT_GRACE_S, enabled: bool = True) -> None:
        self.grace = grace
        self.enabled = enabled and threading.current_thread() is threading.main_thread()
        self.signum: int | None = None
        self.abandoned = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._previous: dict[int, Any] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def __enter__(self) -> StopSignals:
        if self.enabled:
            self._loop = asyncio.get_running_loop()
            for sig in SIGNALS:
                self._previous[sig] = signal.getsignal(sig)
                self._loop.add_signal_handler(sig, self._on_signal, sig)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
        for sig, previous in self._previous.items():
            assert self._loop is not None
            self._loop.remove_signal_handler(sig)
            # remove_signal_handler installs the default; the process's own handler comes back
            # (None: one not set from Python, which cannot be restored)
            if previous is not None:
                signal.signal(sig, previous)
        self._previous.clear()

    def track(self, task: asyncio.Task[Any]) -> None:
        """Cancel ``task`` when the run's episodes are abandoned."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _on_signal(self, signum: int) -> None:
        if self.signum is not None:
            self.abandon()
            return
        self.signum = signum
        if self._tasks:
            print(f"\nstopping: the episodes in flight have {self.grace:g} s to finish "
                  "(signal again to stop at once)", file=sys.stderr, flush=True)  # fmt: skip
        assert self._loop is not None
        self._timer = self._loop.call_later(self.grace, self.abandon)

    def abandon(self) -> None:
        """Cancel every tracked episode: they end unsaved (``--resume`` runs them again)."""
        self.abandoned = True
        for task in list(self._tasks):
            task.cancel()
