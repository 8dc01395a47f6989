"""Writing an output file whole or not at all.

:func:`write_text_atomic` writes to a temporary file beside the target, checks every byte was
written (retrying short writes), syncs it to disk and renames it over the target. On any failure
(a full disk, a read-only file system, an I/O error) the temporary file is removed, a previous
file at the target is left as it was, and the ``OSError`` raised names the target.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import os
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path


def utf8_bytes(text: str) -> bytes:
    """``text`` as UTF-8: surrogate pairs joined into their character, any lone surrogate
    (not encodable) written as U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return joined.encode("utf-8")


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``, going on after short writes."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:  # never expected of a regular file; refuse to spin
            raise OSError(0, "the file system accepted no bytes")
        view = view[written:]


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Replace ``path`` with ``text`` (UTF-8) atomically, creating missing parent directories;
    return the path."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            write_all(fd, utf8_bytes(text))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
    return path


@contextlib.contextmanager
def replaced_on_success(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary file name beside ``path`` that no other writer uses (two processes writing
    the same file at once each write their own, the last rename wins; a shared name let one
    rename the other's file away): the block writes it, then it is renamed over ``path``. On
    any failure it is removed and ``path`` is left as it was."""
    path = Path(path)
    remove_orphans(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with naming_target(path, tmp):
            yield tmp
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def naming_target(path: str | os.PathLike[str], tmp: str | os.PathLike[str]) -> Iterator[None]:
    """An ``OSError`` about the temporary file ``tmp`` raised in the block names ``path``, the
    file being written, instead (a user never heard of the temporary name)."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None and os.fspath(exc.filename) == os.fspath(tmp):
            raise OSError(exc.errno, exc.strerror or str(exc), os.fspath(path)) from exc
        raise


@contextlib.contextmanager
def updating(path: str | os.PathLike[str]) -> Iterator[None]:
    """One read-merge-write of the data file ``path`` at a time, across processes: a blocking
    ``flock`` on ``.<name>.lock`` beside it for the block (two commands adding entries to one
    file at once each read the other's before writing, so neither's are lost). The lock file is
    kept (deleting it races with a process about to lock it); the kernel releases the lock
    however its holder exits."""
    path = Path(path)
    lock = path.with_name(f".{path.name}.lock")
    with naming_target(path, lock):  # a read-only directory: the data file is what it lacks
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def check_writable(path: str | os.PathLike[str]) -> None:
    """Raise the ``OSError`` that writing the data file ``path`` would meet (a read-only data
    directory), naming ``path``, before any work is done for it; leaves nothing behind."""
    import tempfile

    path = Path(path)
    try:
        with tempfile.TemporaryFile(dir=path.parent):
            pass
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), os.fspath(path)) from exc


ORPHAN_AGE_S = 60  # a temporary file untouched this long whose writer is gone is an orphan


def remove_orphans(path: str | os.PathLike[str]) -> None:
    """Remove the temporary files of earlier writes of ``path`` (``.<name>.<pid>[.<x>].tmp``)
    whose process is gone and which nothing has written to for :data:`ORPHAN_AGE_S` seconds
    (a writer killed mid-way, ``SIGKILL`` included, left a file as large as the data file
    that no later write would reuse)."""
    path = Path(path)
    prefix = f".{path.name}."
    try:
        candidates = list(path.parent.glob(f".{glob.escape(path.name)}.*.tmp"))
    except OSError:
        return
    for tmp in candidates:
        pid = tmp.name[len(prefix) : -len(".tmp")].split(".")[0]
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        with contextlib.suppress(OSError):  # gone meanwhile, or a read-only directory
            if time.time() - tmp.stat().st_mtime >= ORPHAN_AGE_S:
                tmp.unlink()


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (one of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


SAVE_EVERY_S = 10.0  # a build saves what it finished at least this often (a SIGKILL loses less)


def every(seconds: float, action: Callable[[], object]) -> Callable[[], None]:
    """A function that calls ``action`` when at least ``seconds`` have passed since the last
    call of ``action`` (or since it was made): a long build saving its finished parts as it
    goes, not only when it ends (a ``finally`` never runs on ``SIGKILL`` or a power cut)."""
    last = [time.monotonic()]

    def tick() -> None:
        if time.monotonic() - last[0] >= seconds:
            action()
            last[0] = time.monotonic()

    return tick
