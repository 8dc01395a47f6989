"""A read-only ``--out``, for real: the kernel answers ``EROFS``, not a mocked ``os.access``
(tests run as root, and ``chmod`` does not stop root).

- At the start: the real CLI runs in a bubblewrap mount namespace where the output directory
  (or the run directory inside it) is a read-only bind mount. It stops with one error line
  naming the directory, a non-zero exit and no traceback, and writes nothing.
- Mid-run: the run writes to a small ext4 file system (a loop image mounted with
  ``errors=remount-ro`` in a private mount namespace) that goes read-only under it after a few
  episodes (``/sys/fs/ext4/<dev>/trigger_fs_error``, as a failing disk would). The run stops
  with one line naming the episode file, every saved episode stays readable, and once the disk
  is repaired ``--resume`` completes the run to what an uninterrupted run gives.

Without bubblewrap (or loop devices) the tests skip, unless ``CI`` is set: then they fail.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.runner.faults import child_env, normalise, raw_episodes
from travelgym.cli import main
from travelgym.runner.store import EPISODES, QUARANTINE

EROFS_TEXT = os.strerror(30)  # "Read-only file system"
# A write already in flight when ext4 fails (or its fsync) gets EIO; any later one EROFS.
FAILED_DISK = (EROFS_TEXT, os.strerror(5))  # "Input/output error"
RUN_DIR = "scripted-greedy"


def require(available: bool, reason: str) -> None:
    """Skip without the facility, except on CI, where a missing facility is a failure."""
    if available:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI is set and {reason}")
    pytest.skip(reason)


def bwrap_read_only_works(probe: Path) -> bool:
    """Whether bubblewrap makes a read-only bind mount here on which root gets ``EROFS``."""
    if sys.platform != "linux" or shutil.which("bwrap") is None:
        return False
    probe.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(probe), str(probe),
                           "sh", "-c", f"touch {shlex.quote(str(probe / 'x'))}"],
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    return done.returncode != 0 and EROFS_TEXT in done.stderr and not (probe / "x").exists()


def cli_in_bwrap(read_only: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m travelgym.cli ARGS`` with ``read_only`` bound read-only over itself."""
    command = ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(read_only), str(read_only),
               sys.executable, "-m", "travelgym.cli", *args]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=180, env=child_env())


def run_args(out: Path, data_dir: Path, *extra: str) -> list[str]:
    return ["run", "compass", "--agent", "scripted:greedy", "--limit", "2", "--out", str(out),
            "--no-progress", "--data-dir", str(data_dir), *extra]  # fmt: skip


def error_lines(stderr: str) -> list[str]:
    """The lines of ``stderr`` that are not click's usage preamble (its usage line may wrap onto
    indented lines)."""
    preamble = ("Usage: ", "Try '", " ")
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith(preamble)]


@pytest.fixture
def bwrap_ok(tmp_path):
    require(bwrap_read_only_works(tmp_path / "probe"), "bwrap cannot make a read-only bind mount")


@pytest.mark.parametrize("where", ["out", "parent_of_out"])
def test_a_read_only_out_is_refused_with_one_line(bwrap_ok, tmp_path, compass_db, where):
    """``--out`` on a read-only mount (or a new ``--out`` below one): a usage error naming the
    directory, before any work starts."""
    mount = tmp_path / "ro"
    mount.mkdir()
    out = mount if where == "out" else mount / "new" / "runs"
    done = cli_in_bwrap(mount, *run_args(out, compass_db.parent.parent))
    want = (f"{out} is not writable" if where == "out"
            else f"cannot create {out}: {mount} is not writable")  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert error_lines(done.stderr) == [f"Error: Invalid value for '--out': {want}"]
    assert "Traceback" not in done.stderr + done.stdout and done.stdout == ""
    assert list(mount.iterdir()) == []


@pytest.mark.parametrize("resume", [False, True], ids=["fresh", "resume"])
def test_a_read_only_run_directory_stops_with_one_line(bwrap_ok, tmp_path, compass_db, resume):
    """``--out`` is writable but the run directory in it is read-only (a finished run on
    read-only media, resumed; or an empty one): the store's first write, the lock, fails with
    ``EROFS`` and the run stops with one line naming the directory, the run left as it was."""
    out, data_dir = tmp_path / "out", compass_db.parent.parent
    run_dir = out / RUN_DIR
    if resume:
        first = CliRunner().invoke(main, run_args(out, data_dir))
        assert first.exit_code == 0, first.output
    run_dir.mkdir(parents=True, exist_ok=True)
    before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    done = cli_in_bwrap(run_dir, *run_args(out, data_dir, *(["--resume"] if resume else [])))
    assert done.returncode == 1, done.stderr
    assert error_lines(done.stderr) == [
        f"Error: cannot lock the run directory {run_dir}: {EROFS_TEXT} ({run_dir / 'run.lock'})"
    ]
    assert "Traceback" not in done.stderr + done.stdout
    assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == before


# ------------------------------------------------------------------ read-only mid-run


def ext4_error_trigger_works(tmp_path: Path) -> bool:
    """Whether a loop-mounted ext4 can be mounted in a private namespace and told to fail."""
    tools = ("unshare", "mkfs.ext4", "findmnt", "e2fsck")
    if sys.platform != "linux" or os.geteuid() != 0 or not all(map(shutil.which, tools)):
        return False
    image, mount = tmp_path / "probe.img", tmp_path / "probe-mnt"
    mount.mkdir()
    script = f"""set -e
truncate -s 4M {image} && mkfs.ext4 -q -F {image}
mount -o loop,errors=remount-ro {image} {mount}
test -w /sys/fs/ext4/$(basename $(findmnt -n -o SOURCE {mount}))/trigger_fs_error
"""
    probe = subprocess.run(["unshare", "-m", "bash", "-c", script], capture_output=True,
                           timeout=60)  # fmt: skip
    image.unlink(missing_ok=True)
    return probe.returncode == 0


@dataclass
class MidRun:
    """What the run that lost its disk mid-way left: its logs and a copy of its directory."""

    total: int
    episodes: Path  # the episode file, as the run named it
    logs: Path
    kept: Path  # the run directory as the failed run left it (resumed/: after --resume)
    want: list[dict]  # an uninterrupted run's episodes

    def read(self, name: str) -> str:
        return (self.logs / name).read_text()


@pytest.fixture(scope="module")
def mid_run(tmp_path_factory, compass_db) -> MidRun:
    """A 30-episode run whose ext4 disk goes read-only after 3 episodes, then (the disk
    checked and mounted again) ``--resume``; both in one private mount namespace."""
    tmp_path = tmp_path_factory.mktemp("mid-run")
    require(ext4_error_trigger_works(tmp_path),
            "no loop-mounted ext4 with trigger_fs_error (needs root and loop devices)")  # fmt: skip
    total, data_dir = 30, compass_db.parent.parent
    args = ["run", "compass", "--agent", "scripted:greedy", "--limit", str(total),
            "--no-progress", "--data-dir", str(data_dir)]  # fmt: skip
    reference = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "ref")])
    assert reference.exit_code == 0, reference.output
    want = raw_episodes(tmp_path / "ref" / RUN_DIR / EPISODES)
    image, mount, keep, logs = (tmp_path / n for n in ("disk.img", "mnt", "kept", "logs"))
    for directory in (mount, keep, logs):
        directory.mkdir()
    run = shlex.join([sys.executable, "-m", "travelgym.cli", *args, "--out", str(mount / "out")])
    episodes = mount / "out" / RUN_DIR / EPISODES
    check = shlex.join([sys.executable, "-c", "import sys; from travelgym.runner.store import "
                        "read_episodes; print(len(read_episodes(sys.argv[1])))",
                        str(mount / "out" / RUN_DIR)])  # fmt: skip
    script = f"""set -u
truncate -s 16M {image} && mkfs.ext4 -q -F {image} || exit 90
mount -o loop,errors=remount-ro {image} {mount} || exit 91
trigger=/sys/fs/ext4/$(basename $(findmnt -n -o SOURCE {mount}))/trigger_fs_error
{run} 2> {logs}/stopped.err & pid=$!
for i in $(seq 1 6000); do  # until 3 episodes are saved (at most a minute)
  [ "$(cat {episodes} 2>/dev/null | wc -l)" -ge 3 ] && break; sleep 0.01
done
echo 1 > "$trigger"
wait $pid; echo "$?" > {logs}/stopped.rc
findmnt -n -o OPTIONS {mount} > {logs}/options
touch {mount}/out/probe 2> {logs}/probe.err
cat {episodes} | wc -l > {logs}/lines
{check} > {logs}/saved 2>&1
cp -r {mount}/out/{RUN_DIR}/. {keep}/
umount {mount}
e2fsck -fy {image} > {logs}/fsck 2>&1
mount -o loop {image} {mount} || exit 92
{run} --resume > /dev/null 2> {logs}/resumed.err; echo "$?" > {logs}/resumed.rc
mkdir {keep}/resumed && cp -r {mount}/out/{RUN_DIR}/. {keep}/resumed/
umount {mount}
"""
    done = subprocess.run(["unshare", "-m", "bash", "-c", script], capture_output=True,
                          text=True, timeout=300, env=child_env())  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return MidRun(total, episodes, logs, keep, want)


@pytest.mark.slow
def test_a_disk_that_goes_read_only_mid_run_stops_it_with_one_line(mid_run):
    assert EROFS_TEXT in mid_run.read("probe.err")  # the disk really was read-only
    stopped = mid_run.read("stopped.err")
    assert mid_run.read("stopped.rc").strip() == "1", stopped
    (line,) = error_lines(stopped)
    assert line.startswith("Error: ") and any(text in line for text in FAILED_DISK), line
    assert str(mid_run.episodes.parent) in line and "Traceback" not in stopped, line


def test_a_disk_that_goes_read_only_mid_run_keeps_the_saved_episodes_and_resume_completes(
    mid_run,
):
    saved = int(mid_run.read("saved"))  # the strict reader: every line saved is whole
    assert 3 <= saved < mid_run.total and saved == int(mid_run.read("lines"))
    assert not (mid_run.kept / QUARANTINE).exists()
    assert mid_run.read("resumed.rc").strip() == "0", mid_run.read("resumed.err")
    got = raw_episodes(mid_run.kept / "resumed" / EPISODES)
    assert sorted(map(normalise, got), key=lambda e: e["task_id"]) == sorted(
        map(normalise, mid_run.want), key=lambda e: e["task_id"]
    )
    assert not (mid_run.kept / "resumed" / QUARANTINE).exists()  # nothing was torn
    print(f"read-only after {saved} of {mid_run.total} episodes; resume added the rest")


def test_a_disk_that_goes_read_only_mid_run_names_the_episode_file_and_the_saved_count(mid_run):
    (line,) = error_lines(mid_run.read("stopped.err"))
    said = re.fullmatch(rf"Error: cannot save episode \S+ trial 0 to "
                        rf"{re.escape(str(mid_run.episodes))}: ({'|'.join(FAILED_DISK)}); the (\d+) "
                        r"episode\(s\) saved before are intact( \(this episode's whole line "
                        r"reached the file but could not be synced\))?: .*--resume",
                        line)  # fmt: skip
    assert said is not None, line
    # a write that went through before the disk failed, but whose fsync did not, leaves its
    # whole line behind (the read-only disk refuses the cut-back); the message says so
    unsynced = 1 if said.group(3) else 0
    assert int(said.group(2)) + unsynced == int(mid_run.read("saved"))
