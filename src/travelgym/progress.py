"""Progress of data builds (databases, instances, witnesses, quality control, ground truth) on
stderr, so a first use never waits in silence.

A bar appears only once its step has taken more than :data:`DELAY_S` seconds (or
``TRAVELGYM_PROGRESS_DELAY``), so quick (cached) steps print nothing. The CLI switches bars off for a command with ``--no-progress``
or ``--json`` where stderr is no terminal (:func:`set_enabled`); ``TRAVELGYM_NO_PROGRESS=1`` switches them off everywhere.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from travelgym.core.errors import UserError
from travelgym.envvars import number_from_env

DELAY_S = 1.0
DELAY_ENV = "TRAVELGYM_PROGRESS_DELAY"
_ENABLED: list[bool] = [True]


def set_enabled(enabled: bool) -> None:
    """Show (True) or hide (False) build progress for the rest of this process."""
    _ENABLED[0] = bool(enabled)


def enabled() -> bool:
    """Whether build progress is shown."""
    return _ENABLED[0] and os.environ.get("TRAVELGYM_NO_PROGRESS", "") in ("", "0")


def delay_s() -> float:
    """How long a step runs before its bar appears: ``TRAVELGYM_PROGRESS_DELAY`` seconds
    (default :data:`DELAY_S`); a value that is no number of seconds is a :class:`UserError`."""
    return number_from_env(DELAY_ENV, DELAY_S, float, lambda s: s >= 0,
                           "a number of seconds, 0 or more", UserError)  # fmt: skip


class Display:
    """Where bars are drawn: stderr, given up (not the command) once it cannot be written. A
    closed stderr (``2>&-``) or a reader that went away (``2> >(head -c 100)``) stopped a
    build at its first bar: a bar is a courtesy, the build is the work."""

    def __init__(self) -> None:
        self.broken = False

    def write(self, text: str) -> int:
        """Write ``text`` to stderr, or nothing once stderr failed."""
        stream = sys.stderr
        if self.broken or stream is None:
            return 0
        try:
            return stream.write(text)
        except (OSError, ValueError):  # ValueError: a closed file object
            self.broken = True
            return 0

    def flush(self) -> None:
        """Flush stderr (a failure gives the display up)."""
        if not self.broken and sys.stderr is not None:
            try:
                sys.stderr.flush()
            except (OSError, ValueError):
                self.broken = True

    def isatty(self) -> bool:
        try:
            return not self.broken and sys.stderr is not None and sys.stderr.isatty()
        except (OSError, ValueError):
            return False

    @property
    def encoding(self) -> str:  # tqdm draws unicode blocks only on a file that says UTF-8
        return getattr(sys.stderr, "encoding", None) or "ascii"

    def fileno(self) -> int:  # tqdm sizes its bar from the terminal behind this descriptor
        if sys.stderr is None:
            raise OSError("no stderr")
        return sys.stderr.fileno()


# what a bar shows after its description: the share done, the bar, the units done and the time
# taken and left (no rate: on an 80-column terminal a build step's description and its rate
# left no room for the rest)
BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} {unit} [{elapsed}<{remaining}]"


def bar_layout(total: int | None) -> dict[str, Any]:
    """tqdm's layout settings of a bar of ``total`` units on stderr: as wide as the terminal
    when it has a width (one that reports 0 columns, as a pseudo-terminal without a size does,
    drew every bar empty), the compact format where the total is known."""
    try:
        columns = os.get_terminal_size(sys.stderr.fileno()).columns
    except (AttributeError, OSError, ValueError):  # no stderr, not a terminal
        columns = 0
    layout: dict[str, Any] = {"dynamic_ncols": columns > 0}
    if total is not None:
        layout["bar_format"] = BAR_FORMAT
    return layout


class Step:
    """One build step's bar: :meth:`advance` by units done; a no-op when progress is hidden."""

    def __init__(self, desc: str, total: int | None, unit: str, initial: int = 0) -> None:
        self._bar: Any = None
        if enabled():
            from tqdm import tqdm

            tqdm.monitor_interval = 0  # no monitor thread: builds fork worker processes
            self._bar = tqdm(total=total, desc=desc, unit=unit, file=Display(), delay=delay_s(),
                             initial=initial, leave=True, **bar_layout(total))  # fmt: skip

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more units done."""
        if self._bar is not None and n:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


@contextmanager
def step(desc: str, total: int | None = None, unit: str = "it",
         initial: int = 0) -> Iterator[Step]:  # fmt: skip
    """A bar for one build step (``desc`` says what is built, e.g. "behavior2trip: test
    instances"; ``initial``: the units an earlier, stopped build already did), closed when the
    block ends."""
    bar = Step(desc, total, unit, initial)
    try:
        yield bar
    finally:
        bar.close()
