"""One writer per run directory: an exclusive ``flock`` on ``DIR/run.lock`` held for the whole run.

The kernel releases the lock when its holder exits, however it exits (``SIGKILL`` included), so a
killed run never leaves a stale lock behind and ``--resume`` can always take it. The file keeps
the holder's pid so a refused run can say who holds the directory; it is never deleted (deleting a
lock file races with a process about to lock it).
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from travelgym.runner.errors import RunDirBusy, RunDirError

LOCK = "run.lock"


class RunLock:
    """The exclusive lock of one run directory (a context manager; :meth:`release` is idempotent)."""

    def __init__(self, directory: Path) -> None:
        self.dir = Path(directory)
        self.path = self.dir / LOCK
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock at once or raise :class:`RunDirBusy` naming the holder's pid."""
        if self._fd is not None:
            return
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise RunDirError(f"cannot lock the run directory {self.dir}: {exc.strerror} "
                              f"({self.path})") from None  # fmt: skip
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise RunDirBusy(f"{self.dir} is in use by another run (pid {self.holder()}); "
                                 "wait for it to finish or choose another --out") from None  # fmt: skip
            raise RunDirError(f"cannot lock the run directory {self.dir}: {exc.strerror}") from None
        self._fd = fd
        try:  # best effort: a full disk must not stop a run that holds its lock
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError:
            pass

    def holder(self) -> str:
        """The pid written by the lock's holder (``unknown`` when unreadable)."""
        try:
            text = self.path.read_text(encoding="ascii", errors="replace").strip()
        except OSError:
            return "unknown"
        return text if text.isdigit() else "unknown"

    def release(self) -> None:
        """Give the lock up (closing the descriptor releases the ``flock``)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __del__(self) -> None:
        self.release()
