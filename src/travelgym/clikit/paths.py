"""Path parameters that refuse an unusable path before a command starts its work.

:class:`OutputPath` is for every path a command writes (a file or a directory): it must be of
the right kind where it exists (a regular file, never a device, FIFO or socket; a directory)
and writable, or, where it does not exist yet, its nearest existing ancestor must be a
writable directory. :class:`InputPath` is for files a command reads: they must exist and be
regular files (or directories where those are accepted), so that a FIFO cannot block a
command forever and ``/dev/zero`` cannot exhaust its memory.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Any, Literal

import click

Kind = Literal["file", "dir"]


def describe_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, with its article ("a character device")."""
    for test, name in ((stat.S_ISREG, "a file"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):  # fmt: skip
        if test(mode):
            return name
    return "a special file"


def _nearest_existing(path: Path) -> tuple[Path, os.stat_result] | None:
    for ancestor in path.absolute().parents:
        try:
            return ancestor, os.stat(ancestor)
        except (FileNotFoundError, NotADirectoryError):
            continue
    return None


def output_problem(path: Path, kind: Kind) -> str | None:
    """Why ``path`` cannot be written as a ``kind`` ("file" or "dir"), or ``None`` if it can
    (as far as can be told before writing: a full disk shows only then)."""
    if not os.fspath(path):
        return "an empty path"
    try:
        info: os.stat_result | None = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        info = None
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if info is not None:
        if kind == "dir" and not stat.S_ISDIR(info.st_mode):
            return f"{path} is {describe_kind(info.st_mode)}, not a directory"
        if kind == "file" and stat.S_ISDIR(info.st_mode):
            return f"{path} is a directory, not a file"
        if kind == "file" and not stat.S_ISREG(info.st_mode):
            return f"{path} is {describe_kind(info.st_mode)}, not a regular file"
        access = os.W_OK | os.X_OK if kind == "dir" else os.W_OK
        return None if os.access(path, access) else f"{path} is not writable"
    found = _nearest_existing(path)
    if found is None:
        return f"cannot create {path}: no existing parent directory"
    ancestor, info = found
    if not stat.S_ISDIR(info.st_mode):
        return f"cannot create {path}: {ancestor} is {describe_kind(info.st_mode)}, not a directory"
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"cannot create {path}: {ancestor} is not writable"
    try:  # the permission bits do not tell all (root, /proc, a read-only mount): try it
        with tempfile.TemporaryFile(dir=ancestor):
            pass
    except OSError as exc:
        return f"cannot create {path}: {ancestor}: {exc.strerror or exc}"
    return None


SQLITE_HEADER = b"SQLite format 3\x00"


def input_problem(path: Path, dir_okay: bool, sqlite: bool = False,
                  file_okay: bool = True) -> str | None:  # fmt: skip
    """Why the existing ``path`` cannot be read as an input file (or directory, where
    ``dir_okay``; only a directory where not ``file_okay``; an SQLite database, where
    ``sqlite``), or ``None``."""
    try:
        info = os.stat(path)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if stat.S_ISDIR(info.st_mode):
        return None if dir_okay else f"{path} is a directory, not a file"
    if not file_okay:
        return f"{path} is {describe_kind(info.st_mode)}, not a directory"
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is {describe_kind(info.st_mode)}, not a regular file"
    if sqlite:
        try:
            with open(path, "rb") as handle:
                header = handle.read(len(SQLITE_HEADER))
        except OSError as exc:
            return f"{path}: {exc.strerror or exc}"
        if header != SQLITE_HEADER:
            return f"{path} is not an SQLite database"
    return None


class OutputPath(click.Path):
    """A path the command writes: a file (``kind="file"``) or a directory (``kind="dir"``),
    converted to :class:`pathlib.Path` once :func:`output_problem` finds nothing wrong."""

    def __init__(self, kind: Kind) -> None:
        super().__init__(file_okay=kind == "file", dir_okay=kind == "dir", path_type=Path)
        self.kind = kind

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """Check ``value`` and return it as a ``Path``; a problem is a usage error."""
        if isinstance(value, str) and not value.strip():  # Path("") is the current directory
            self.fail("an empty path", param, ctx)
        problem = output_problem(Path(value), self.kind)
        if problem is not None:
            self.fail(problem, param, ctx)
        return super().convert(value, param, ctx)


def data_dir_problem(path: Path) -> str | None:
    """Why ``path`` cannot serve as a data directory, or ``None``: an existing directory is
    read, never required to be writable (a shared, read-only directory of built data serves
    every command that builds nothing; a build in it fails then, naming the file); a missing
    one must be creatable."""
    if not os.fspath(path):
        return "an empty path"
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return output_problem(path, "dir")
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if not stat.S_ISDIR(info.st_mode):
        return f"{path} is {describe_kind(info.st_mode)}, not a directory"
    return None if os.access(path, os.R_OK | os.X_OK) else f"{path} is not readable"


class DataDirPath(click.Path):
    """The data directory (:func:`data_dir_problem`), converted to :class:`pathlib.Path`."""

    def __init__(self) -> None:
        super().__init__(file_okay=False, dir_okay=True, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """Check ``value`` and return it as a ``Path``; a problem is a usage error."""
        if isinstance(value, str) and not value.strip():  # Path("") is the current directory
            self.fail("an empty path", param, ctx)
        problem = data_dir_problem(Path(value))
        if problem is not None:
            self.fail(problem, param, ctx)
        return super().convert(value, param, ctx)


class InputPath(click.Path):
    """An existing, readable input: a regular file (an SQLite database with ``sqlite``), or also
    a directory with ``dir_okay`` (only a directory: ``file_okay=False``). With
    ``exists=False`` a missing path is accepted as it is (a place to look in that may hold
    nothing yet); an empty one never is."""

    def __init__(self, dir_okay: bool = False, sqlite: bool = False, file_okay: bool = True,
                 exists: bool = True) -> None:  # fmt: skip
        super().__init__(exists=exists, dir_okay=dir_okay, file_okay=file_okay, readable=True,
                         path_type=Path)  # fmt: skip
        self.sqlite = sqlite

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """Check ``value`` (click's existence and permission checks, then its kind)."""
        if isinstance(value, str) and not value.strip():  # Path("") is the current directory
            self.fail("an empty path", param, ctx)
        path = super().convert(value, param, ctx)
        if not self.exists and not os.path.lexists(path):
            return path
        problem = input_problem(Path(path), bool(self.dir_okay), self.sqlite,
                                bool(self.file_okay))  # fmt: skip
        if problem is not None:
            self.fail(problem, param, ctx)
        return path
