"""Opening files that must be regular files: a run's ``episodes.jsonl``, its manifest, a JSON
Lines file given on the command line.

A path that is (or links to) a device, a FIFO, a socket or a directory is refused with
:class:`NotRegularFileError` before anything is read: ``/dev/zero`` would be read until memory
runs out and a FIFO with no writer would block the reader forever. The file is opened with
``O_NONBLOCK`` (so opening a FIFO never waits for a writer) and checked with ``fstat`` on the
open descriptor, so a path swapped between the check and the open is caught too. A link to a
regular file is followed: it is read like the file itself.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


class NotRegularFileError(OSError):
    """A path that is not a regular file; ``str()`` says what it is (``filename``: the path)."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", os.fspath(path))

    def __str__(self) -> str:
        return str(self.strerror)  # readers put the path before it


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def check_regular(path: str | os.PathLike[str], mode: int) -> None:
    """Raise :class:`NotRegularFileError` unless ``mode`` (an ``st_mode``) is a regular file's."""
    if not stat.S_ISREG(mode):
        raise NotRegularFileError(path, _kind(mode))


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` open for reading in binary mode, refused unless it is a regular file (after
    following links). Raises :class:`FileNotFoundError` and other :class:`OSError` as ``open``
    does, and :class:`NotRegularFileError` for a device, FIFO, socket or directory."""
    check_regular(path, os.stat(path).st_mode)  # a device is never even opened
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        check_regular(path, os.fstat(fd).st_mode)  # the path may have changed since the stat
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file ``path`` (see :func:`open_regular`)."""
    with open_regular(path) as handle:
        return handle.read()


def read_regular_text(path: str | os.PathLike[str], encoding: str = "utf-8") -> str:
    """The text of the regular file ``path`` (see :func:`open_regular`); raises
    :class:`UnicodeDecodeError` for bytes that are not ``encoding``."""
    return read_regular_bytes(path).decode(encoding)
