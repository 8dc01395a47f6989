"""Atomic output files: written whole or not at all, with failures naming the target."""

from __future__ import annotations

import errno
import os

import pytest

from travelgym import atomic
from travelgym.atomic import write_text_atomic


def test_writes_creating_parents_and_replacing_the_old_file(tmp_path):
    target = tmp_path / "a" / "b" / "report.html"
    assert write_text_atomic(target, "first") == target
    write_text_atomic(target, "second \ud83d\ude00 and a lone \udc00")
    assert target.read_text(encoding="utf-8") == "second \U0001f600 and a lone \ufffd"
    assert [p.name for p in target.parent.iterdir()] == ["report.html"]  # no temporary left


def test_short_writes_are_continued(tmp_path, monkeypatch):
    real_write = atomic.os.write
    calls = []

    def short_write(fd, data):
        calls.append(len(data))
        return real_write(fd, bytes(data[:7]))  # the file system takes 7 bytes at a time

    monkeypatch.setattr(atomic.os, "write", short_write)
    text = "x" * 100 + "\u00e9" * 50
    write_text_atomic(tmp_path / "out.txt", text)
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == text
    assert len(calls) == -(-len(text.encode()) // 7)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO, errno.EROFS])
def test_a_failed_write_keeps_the_old_file_and_names_the_target(tmp_path, monkeypatch, code):
    target = tmp_path / "report.html"
    write_text_atomic(target, "the previous report")
    real_write = atomic.os.write
    written = []

    def failing_write(fd, data):
        if written:  # the first chunk lands, the disk then fills up
            raise OSError(code, "injected")
        written.append(real_write(fd, bytes(data[:10])))
        return written[-1]

    monkeypatch.setattr(atomic.os, "write", failing_write)
    with pytest.raises(OSError) as info:
        write_text_atomic(target, "a new report " * 1000)
    assert info.value.errno == code and info.value.filename == str(target)
    assert target.read_text() == "the previous report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_a_build_removes_the_temporary_files_of_killed_builds(tmp_path):
    """A build killed mid-way (SIGKILL) left its database-sized temporary file for good."""
    import subprocess
    import sys

    from travelgym.db import atomic_build

    target = tmp_path / "x.sqlite"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    orphan = tmp_path / f".x.sqlite.{gone.stdout.strip()}.tmp"
    running = tmp_path / f".x.sqlite.{os.getppid()}.tmp"  # a build still in progress
    other = tmp_path / f".y.sqlite.{gone.stdout.strip()}.tmp"  # another file's
    for path in (orphan, running, other):
        path.write_bytes(b"partial")
        _age(path)
    with atomic_build(target) as conn:
        conn.execute("CREATE TABLE t (x)")
    assert target.exists() and not orphan.exists() and running.exists() and other.exists()


def _age(path, seconds: float = atomic.ORPHAN_AGE_S + 1) -> None:
    """Make ``path`` look untouched for ``seconds``."""
    before = path.stat().st_mtime - seconds
    os.utime(path, (before, before))


def test_a_data_file_write_removes_the_temporary_files_of_killed_writers(tmp_path):
    """``tasks behavior2trip`` killed (SIGKILL) while it wrote the instance files left hidden
    temporary files of 28-245 MB that no later write removed."""
    import subprocess
    import sys

    from travelgym.atomic import replaced_on_success

    target = tmp_path / "instances-small-v2-test.jsonl"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    orphan = tmp_path / f".{target.name}.{gone}.1a2b3c4d.tmp"
    fresh = tmp_path / f".{target.name}.{gone}.5e6f7a8b.tmp"  # written to moments ago
    running = tmp_path / f".{target.name}.{os.getppid()}.9c0d1e2f.tmp"  # a writer at work
    other = tmp_path / f".instances-small-v2-train.jsonl.{gone}.3a4b5c6d.tmp"  # another file's
    for path in (orphan, fresh, running, other):
        path.write_bytes(b"partial")
    for path in (orphan, running, other):
        _age(path)
    with replaced_on_success(target) as tmp:
        tmp.write_text("whole\n")
    assert target.read_text() == "whole\n"
    assert not orphan.exists()
    assert fresh.exists() and running.exists() and other.exists()


def test_concurrent_writers_of_one_data_file_all_succeed(tmp_path):
    """Two ``tasks behavior2trip`` assembling the same instance files at once: one failed with
    ``...jsonl.tmp -> ...jsonl: No such file or directory`` (both wrote one temporary name, the
    first rename took the other's file away). Each writer now has its own temporary file."""
    import threading

    from pydantic import BaseModel

    from travelgym.datafiles import dump_jsonl, read_manifest, write_manifest

    class Row(BaseModel):
        writer: int
        n: int

    target = tmp_path / "data.jsonl"
    writers, rounds = 4, 40
    start = threading.Barrier(writers)
    failures: list[BaseException] = []

    def write(writer: int) -> None:
        rows = [Row(writer=writer, n=n) for n in range(200)]
        for _ in range(rounds):
            start.wait()
            try:
                sha = dump_jsonl(rows, target)
                write_manifest(target, {"sha256": sha, "writer": writer})
            except BaseException as exc:  # noqa: BLE001 - collected for the assertion
                failures.append(exc)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    lines = target.read_text().splitlines()
    assert len(lines) == 200 and len({Row.model_validate_json(x).writer for x in lines}) == 1
    assert read_manifest(target)["writer"] in range(writers)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.jsonl", "data.manifest.json"]


def test_a_current_database_clears_the_temporary_file_of_a_killed_build(tmp_path):
    """A build killed while another command finished the database left its temporary file for
    good: later commands found the database current and never built again."""
    import subprocess
    import sys

    from travelgym.suites.compass.build import database_path, ensure_database

    ensure_database(seed=0, data_dir=tmp_path)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    path = database_path(0, tmp_path)
    orphan = path.with_name(f".{path.name}.{gone}.tmp")
    orphan.write_bytes(b"partial")
    _age(orphan)
    assert ensure_database(seed=0, data_dir=tmp_path).built is False
    assert not orphan.exists()
