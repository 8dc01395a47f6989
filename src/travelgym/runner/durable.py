"""Checked, durable file writes: every byte written and flushed to disk, or an ``OSError``.

``os.write`` may write fewer bytes than asked (a disk filling up mid-write); these helpers retry
until every byte is written, and an append that fails part-way is cut back to where it started,
so a file never keeps half a line it did not mean to write.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

# the write primitive, a module attribute so fault-injection tests can replace it
os_write = os.write


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``, retrying short writes; raise ``OSError`` otherwise."""
    view = memoryview(data)
    while view:
        written = os_write(fd, view)
        if written <= 0:  # a regular file never legitimately accepts nothing
            raise OSError(errno.EIO, "the write stored no bytes")
        view = view[written:]


def append_durably(fd: int, data: bytes, *, data_only: bool = False) -> None:
    """Append ``data`` to the end of the ``O_APPEND`` file ``fd`` and ``fsync`` it
    (``data_only``: ``fdatasync``, enough for an append-only log whose other metadata does not
    matter, and cheaper). On failure the file is cut back to its size before the call (best
    effort) and the error raised (an interrupt, e.g. Ctrl-C, mid-write too)."""
    start = os.fstat(fd).st_size
    try:
        write_all(fd, data)
        (os.fdatasync if data_only else os.fsync)(fd)
    except BaseException:
        try:
            os.ftruncate(fd, start)
            os.fsync(fd)
        except OSError:
            pass  # the unterminated rest is then a torn last line, quarantined on resume
        raise


def fsync_dir(directory: Path) -> None:
    """Make a directory's entries (a new or renamed file) durable; a no-op where unsupported."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems cannot fsync a directory; the file data itself is synced
    finally:
        os.close(fd)


def replace_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a crash leaves either the old or the new content:
    a temporary file beside it, written in full and synced, then renamed over it."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        write_all(fd, data)
        os.fsync(fd)
    except OSError:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    try:
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def append_file(path: Path, data: bytes) -> None:
    """Append ``data`` to ``path`` (created when missing), durably (see :func:`append_durably`)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        append_durably(fd, data)
    finally:
        os.close(fd)
