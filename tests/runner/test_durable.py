"""Checked, durable appends: every byte written or a clear error. Short writes are retried; a full,
read-only or failing disk stops the run with one line naming the file, every saved episode stays
readable, and resuming after space is freed completes the run."""

from __future__ import annotations

import errno
import json
import os
import shlex
import sys

import pytest
from click.testing import CliRunner

from tests.runner.faults import (
    FaultyDisk,
    injected,
    normalise,
    raw_episodes,
    run_in_tmpfs,
    tmpfs_available,
)
from travelgym.cli import main
from travelgym.runner.durable import append_durably, replace_atomically
from travelgym.runner.store import EPISODES, QUARANTINE, RunStore, StoreWriteError, read_episodes
from travelgym.suites.compass.trajectory import Episode

MANIFEST = {"suite": "compass", "agent": "scripted:greedy", "trials": 1, "task_ids": ["a", "b"]}


def _episode(task_id: str, size: int = 2000) -> Episode:
    return Episode(episode_id=f"{task_id}#0", task_id=task_id, agent="scripted:greedy",
                   user="template", seed=0, error="x" * size)  # fmt: skip


def test_short_writes_are_retried_until_every_byte_is_written(tmp_path):
    path = tmp_path / "f"
    data = bytes(range(256)) * 40
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    with injected(FaultyDisk(chunk=7)) as disk:
        append_durably(fd, data)
    os.close(fd)
    assert path.read_bytes() == data and disk.short_writes > 1000


def test_a_short_write_on_a_full_disk_is_noticed_and_cut_back(tmp_path):
    store = RunStore(tmp_path)
    store.open(MANIFEST, resume=False)
    first = _episode("a")
    size = len(first.model_dump_json()) + 1
    with injected(FaultyDisk(capacity=size + 500)) as disk:  # room for a line and a bit
        store.append(first)
        with pytest.raises(StoreWriteError) as caught:
            store.append(_episode("b"))
        with pytest.raises(StoreWriteError):  # the store stays stopped
            store.append(_episode("b"))
    message = str(caught.value)
    assert "\n" not in message and str(tmp_path / EPISODES) in message
    assert "No space left on device" in message and "1 episode(s) saved before" in message
    assert disk.short_writes == 1  # the write that crossed the limit stored part of the line
    assert (tmp_path / EPISODES).read_bytes() == (first.model_dump_json() + "\n").encode()
    assert [e.task_id for e in read_episodes(tmp_path)] == ["a"]
    store.close()


@pytest.mark.parametrize("code", [errno.EIO, errno.EROFS, errno.ENOSPC, errno.EDQUOT])
def test_any_write_error_stops_with_one_line_and_keeps_the_file(tmp_path, code):
    store = RunStore(tmp_path)
    store.open(MANIFEST, resume=False)
    store.append(_episode("a"))
    before = (tmp_path / EPISODES).read_bytes()
    failing = FaultyDisk(chunk=300, fail_on={3: code})  # fails part-way through a line
    with injected(failing), pytest.raises(StoreWriteError, match=os.strerror(code)):
        store.append(_episode("b"))
    assert (tmp_path / EPISODES).read_bytes() == before
    store.close()


def test_a_line_written_but_not_synced_is_named_in_the_error(tmp_path, monkeypatch):
    """A disk that fails between the write and its ``fsync`` and then refuses the cut-back
    (read-only): the whole line stays in the file, and the error says so, so the count it
    gives plus that line is what a reader finds there."""
    store = RunStore(tmp_path)
    store.open(MANIFEST, resume=False)
    store.append(_episode("a"))

    def fail(*_args):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", fail)
    monkeypatch.setattr(os, "ftruncate", fail)
    with pytest.raises(StoreWriteError) as caught:
        store.append(_episode("b"))
    monkeypatch.undo()
    message = str(caught.value)
    said = ("the 1 episode(s) saved before are intact (this episode's whole line reached the "
            "file but could not be synced)")  # fmt: skip
    assert said in message and "\n" not in message
    assert [e.task_id for e in read_episodes(tmp_path)] == ["a", "b"]
    store.close()


def test_an_atomic_replace_that_fails_leaves_the_old_content(tmp_path):
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(b"old\n")
    with injected(FaultyDisk(capacity=3)), pytest.raises(OSError):
        replace_atomically(path, b"new content\n")
    assert path.read_bytes() == b"old\n" and sorted(p.name for p in tmp_path.iterdir()) == [
        "episodes.jsonl"
    ]


def test_full_disk_during_a_run_then_resume_completes_it(tmp_path, compass_db):
    """The run stops with one line, every saved episode is readable, and once space is freed
    ``--resume`` completes the run to what an uninterrupted run gives."""
    args = ["run", "compass", "--agent", "scripted:greedy", "--limit", "12", "--no-progress",
            "--data-dir", str(compass_db.parent.parent)]  # fmt: skip
    runner = CliRunner()
    reference = runner.invoke(main, [*args, "--out", str(tmp_path / "ref")])
    assert reference.exit_code == 0, reference.output
    want = raw_episodes(tmp_path / "ref" / "scripted-greedy" / EPISODES)
    line = len(json.dumps(want[0])) + 1
    out = tmp_path / "full"
    with injected(FaultyDisk(capacity=5 * line)) as disk:  # the manifest fits, a few lines
        stopped = runner.invoke(main, [*args, "--out", str(out)])
        assert stopped.exit_code == 1
        lines = stopped.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: cannot save episode")
        assert f"{out / 'scripted-greedy' / EPISODES}: No space left on device" in lines[0]
        assert "Traceback" not in stopped.output and disk.refused + disk.short_writes >= 1
        saved = read_episodes(out / "scripted-greedy")  # strict: every line readable
        assert 0 < len(saved) < 12
        disk.free()
        resumed = runner.invoke(main, [*args, "--out", str(out), "--resume"])
    assert resumed.exit_code == 0, resumed.output
    got = raw_episodes(out / "scripted-greedy" / EPISODES)
    assert sorted(map(normalise, got), key=lambda e: e["task_id"]) == sorted(
        map(normalise, want), key=lambda e: e["task_id"]
    )
    assert not (out / "scripted-greedy" / QUARANTINE).exists()  # nothing was damaged


@pytest.mark.slow
@pytest.mark.skipif(not tmpfs_available(), reason="needs root and mount namespaces (unshare -m)")
def test_a_real_full_tmpfs_stops_the_run_then_resume_completes_it(tmp_path, compass_db):
    data_dir = compass_db.parent.parent
    args = ["run", "compass", "--agent", "scripted:greedy", "--limit", "30", "--no-progress",
            "--data-dir", str(data_dir)]  # fmt: skip
    reference = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "ref")])
    assert reference.exit_code == 0, reference.output
    want = raw_episodes(tmp_path / "ref" / "scripted-greedy" / EPISODES)
    total = sum(len(json.dumps(e)) + 1 for e in want)
    mount, keep = tmp_path / "tiny", tmp_path / "kept"
    run = [sys.executable, "-m", "travelgym.cli", *args, "--out", str(mount / "out")]
    check = [sys.executable, "-c", "import sys; from travelgym.runner.store import read_episodes; "
             "print(len(read_episodes(sys.argv[1])))", str(mount / "out" / "scripted-greedy")]  # fmt: skip
    script = f"""
dd if=/dev/zero of={mount}/ballast bs=1k count={(total // 2) // 1024} status=none
{shlex.join(run)} 2> {tmp_path}/stopped.err; echo "$?" > {tmp_path}/stopped.rc
{shlex.join(check)} > {tmp_path}/saved.txt 2>&1
rm {mount}/ballast
{shlex.join(run)} --resume > /dev/null 2> {tmp_path}/resumed.err; echo "$?" > {tmp_path}/resumed.rc
mkdir -p {keep} && cp -r {mount}/out/scripted-greedy/. {keep}/
"""
    size_kib = (total + 64 * 1024) // 1024  # the whole run fits only once the ballast is gone
    done = run_in_tmpfs(mount, f"{size_kib}k", script)
    assert done.returncode == 0, done.stderr
    read = (tmp_path / "stopped.err").read_text()
    assert (tmp_path / "stopped.rc").read_text().strip() == "1", read
    assert read.count("\n") == 1 and "No space left on device" in read and EPISODES in read
    saved = int((tmp_path / "saved.txt").read_text())
    assert 0 < saved < 30
    assert (tmp_path / "resumed.rc").read_text().strip() == "0", (
        tmp_path / "resumed.err"
    ).read_text()
    got = raw_episodes(keep / EPISODES)
    assert sorted(map(normalise, got), key=lambda e: e["task_id"]) == sorted(
        map(normalise, want), key=lambda e: e["task_id"]
    )
