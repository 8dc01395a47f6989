"""Output and input path checks: every unusable path is refused with a reason, before any
work starts."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from travelgym.clikit import paths
from travelgym.clikit.paths import InputPath, OutputPath, input_problem, output_problem


@pytest.fixture
def place(tmp_path) -> Path:
    """A directory holding a file, a sub-directory and a FIFO."""
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "sub").mkdir()
    os.mkfifo(tmp_path / "fifo")
    return tmp_path


@pytest.mark.parametrize(
    ("relative", "kind", "reason"),
    [
        ("file.txt", "dir", "is a file, not a directory"),
        ("file.txt/below", "dir", "file.txt is a file, not a directory"),
        ("file.txt/a/b/c.html", "file", "file.txt is a file, not a directory"),
        ("sub", "file", "is a directory, not a file"),
        ("fifo", "file", "is a FIFO, not a regular file"),
        ("fifo", "dir", "is a FIFO, not a directory"),
        ("/dev/null", "file", "is a character device, not a regular file"),
        ("/dev/null", "dir", "is a character device, not a directory"),
        ("/dev/null/report.html", "file", "/dev/null is a character device, not a directory"),
        ("/dev/full", "file", "is a character device, not a regular file"),
    ],
)  # fmt: skip
def test_output_paths_of_the_wrong_kind_are_refused(place, relative, kind, reason):
    assert reason in output_problem(place / relative, kind)


@pytest.mark.parametrize(
    ("relative", "kind"),
    [("new.html", "file"), ("file.txt", "file"), ("a/b/c/new.html", "file"), ("sub", "dir"),
     ("sub/x/y", "dir"), ("new-dir", "dir")],
)  # fmt: skip
def test_usable_output_paths_pass(place, relative, kind):
    assert output_problem(place / relative, kind) is None


def test_a_socket_is_no_output_file(tmp_path):
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "s"))
        assert "is a socket, not a regular file" in output_problem(tmp_path / "s", "file")


def test_unwritable_places_are_refused(place, monkeypatch):
    if os.geteuid() == 0:  # root writes anywhere: deny as a read-only file system would
        real = os.access
        denied = {str(place / "sub"), str(place / "file.txt")}
        monkeypatch.setattr(paths.os, "access",
                            lambda p, mode: False if str(p) in denied else real(p, mode))  # fmt: skip
    else:
        (place / "sub").chmod(0o555)
        (place / "file.txt").chmod(0o444)
    try:
        assert output_problem(place / "sub", "dir") == f"{place / 'sub'} is not writable"
        assert output_problem(place / "sub" / "r.html", "file") == (
            f"cannot create {place / 'sub' / 'r.html'}: {place / 'sub'} is not writable"
        )
        assert output_problem(place / "file.txt", "file") == f"{place / 'file.txt'} is not writable"
    finally:
        (place / "sub").chmod(0o755)


def test_a_place_whose_bits_allow_writing_but_refuses_files_is_refused(place, monkeypatch):
    """Permission bits do not tell all: root may "write" to /proc by them, and a generation of
    70 s then failed on its output. A file is tried in the place before anything is built."""
    import errno
    import tempfile

    def refused(dir=None, **_):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(tempfile, "TemporaryFile", refused)
    target = place / "sub" / "tasks.jsonl"
    assert output_problem(target, "file") == (
        f"cannot create {target}: {place / 'sub'}: {os.strerror(errno.EROFS)}"
    )
    assert output_problem(place / "sub" / "runs", "dir").endswith(os.strerror(errno.EROFS))


def test_input_paths_must_be_regular_files(place):
    assert input_problem(place / "file.txt", dir_okay=False) is None
    assert input_problem(place / "sub", dir_okay=True) is None
    assert "is a directory, not a file" in input_problem(place / "sub", dir_okay=False)
    assert "is a FIFO, not a regular file" in input_problem(place / "fifo", dir_okay=True)
    assert "is a character device" in input_problem(Path("/dev/zero"), dir_okay=False)


def test_parameter_types_are_usage_errors_naming_the_option(place):
    @click.command()
    @click.option("--out", type=OutputPath("file"))
    @click.option("--src", type=InputPath())
    def cmd(out, src) -> None:
        click.echo(f"{type(out).__name__} {type(src).__name__}")

    runner = CliRunner()
    ok = runner.invoke(cmd, ["--out", str(place / "new.txt"), "--src", str(place / "file.txt")])
    assert ok.exit_code == 0 and ok.output.strip() == "PosixPath PosixPath"
    bad = runner.invoke(cmd, ["--out", "/dev/null"])
    assert (
        bad.exit_code == 2 and "Invalid value for '--out': /dev/null is a character" in bad.output
    )
    bad = runner.invoke(cmd, ["--src", str(place / "fifo")])
    assert bad.exit_code == 2 and "is a FIFO, not a regular file" in bad.output
    bad = runner.invoke(cmd, ["--src", str(place / "missing")])
    assert bad.exit_code == 2 and "does not exist" in bad.output


def test_database_inputs_must_be_sqlite_files(place, compass_db):
    assert input_problem(compass_db, dir_okay=False, sqlite=True) is None
    (place / "empty.sqlite").write_bytes(b"")
    for name in ("file.txt", "empty.sqlite"):
        assert input_problem(place / name, dir_okay=False, sqlite=True) == (
            f"{place / name} is not an SQLite database"
        )


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_path_is_refused_not_read_as_the_current_directory(value, tmp_path, monkeypatch):
    """``--data-dir "$UNSET"`` wrote the databases into the working directory."""
    monkeypatch.chdir(tmp_path)
    for kind in ("dir", "file"):

        @click.command()
        @click.option("--where", type=OutputPath(kind))
        def cmd(where) -> None:
            Path(where, "made").mkdir()

        result = CliRunner().invoke(cmd, ["--where", value])
        assert (
            result.exit_code == 2 and "Invalid value for '--where': an empty path" in result.output
        )
    assert list(tmp_path.iterdir()) == []


def test_a_blank_data_dir_variable_is_unset(monkeypatch, tmp_path):
    from travelgym.paths import data_dir

    monkeypatch.setenv("TRAVELGYM_DATA_DIR", str(tmp_path))
    chosen = data_dir()
    monkeypatch.setenv("TRAVELGYM_DATA_DIR", "  ")
    assert data_dir() != Path("  ").resolve() and data_dir() != chosen
    monkeypatch.delenv("TRAVELGYM_DATA_DIR")
    assert data_dir() == data_dir(None)


def test_a_data_directory_is_read_so_a_read_only_one_serves(place, monkeypatch):
    """The data directory is only written when something must be built there: an existing
    read-only one passes (a build in it fails later, naming the file); one that cannot exist,
    is no directory or cannot be read is refused."""
    from travelgym.clikit.paths import data_dir_problem

    real = os.access
    read_only = {str(place / "sub")}
    monkeypatch.setattr(paths.os, "access",
                        lambda p, mode: not (mode & os.W_OK) and real(p, mode)
                        if str(p) in read_only else real(p, mode))  # fmt: skip
    assert output_problem(place / "sub", "dir") == f"{place / 'sub'} is not writable"
    assert data_dir_problem(place / "sub") is None
    assert data_dir_problem(place / "sub" / "new") == (
        f"cannot create {place / 'sub' / 'new'}: {place / 'sub'} is not writable"
    )
    assert (
        data_dir_problem(place / "file.txt") == f"{place / 'file.txt'} is a file, not a directory"
    )
    assert data_dir_problem(place / "fifo") == f"{place / 'fifo'} is a FIFO, not a directory"
    assert data_dir_problem("") == "an empty path"  # Path("") would be the current directory
    monkeypatch.setattr(paths.os, "access", lambda p, mode: str(p) not in read_only)
    assert data_dir_problem(place / "sub") == f"{place / 'sub'} is not readable"
