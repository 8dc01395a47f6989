"""Run files are read only when they are regular files: an ``episodes.jsonl`` that is a FIFO or
a link to a device is one line of error in ``score``, ``analyze`` and ``report``, never a hang
(a FIFO with no writer) or a read without end (``/dev/zero``)."""

from __future__ import annotations

import os
import threading

import pytest
from click.testing import CliRunner

from tests.suites.compass.analysis.test_metrics import three_episodes
from travelgym.cli import main
from travelgym.jsonl import JsonLinesError, iter_json_lines
from travelgym.runner.errors import RunDirError
from travelgym.runner.run_manifest import read_manifest
from travelgym.runner.store import EPISODES, MANIFEST, RunStore, read_run
from travelgym.safe_open import NotRegularFileError, open_regular, read_regular_bytes

WAIT_S = 10.0  # far above what a refusal takes; a blocked reader never returns


@pytest.fixture
def run_dir(tmp_path):
    store = RunStore(tmp_path / "run")
    store.open({"suite": "compass", "agent": "a", "trials": 1}, resume=False)
    for e in three_episodes():
        store.append(e)
    store.close()
    return tmp_path / "run"


def _fifo(path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def _device_link(path) -> None:
    # /dev/null: a character device that today's readers would read as an empty file (a link
    # to /dev/zero would be read until memory runs out, so the test does not try it)
    path.unlink(missing_ok=True)
    path.symlink_to("/dev/null")


def _within(call, fifo=None):
    """``call()``'s result, failing (not hanging) when it blocks; a blocked reader of ``fifo``
    is released by opening the FIFO's other end."""
    out: dict = {}

    def target():
        try:
            out["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(WAIT_S)
    if thread.is_alive():
        if fifo is not None:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # EOF for the blocked reader
            thread.join(WAIT_S)
        pytest.fail(f"still reading after {WAIT_S} s")
    if "error" in out:
        raise out["error"]
    return out["value"]


MAKERS = {"a FIFO": (_fifo, "FIFO"), "a link to /dev/null": (_device_link, "character device")}


@pytest.mark.parametrize("special", MAKERS)
def test_score_analyze_and_report_refuse_a_special_episodes_file(run_dir, tmp_path, special):
    make, kind = MAKERS[special]
    path = run_dir / EPISODES
    make(path)
    fifo = path if special == "a FIFO" else None
    with pytest.raises(RunDirError, match=f"not a regular file \\(a {kind}"):
        _within(lambda: read_run(run_dir), fifo)
    runner = CliRunner()
    for args in (["score", str(run_dir)], ["analyze", str(run_dir)],
                 ["report", str(run_dir), "--out", str(tmp_path / "r.html")]):  # fmt: skip
        result = _within(lambda args=args: runner.invoke(main, args), fifo)
        line = result.output.strip()
        assert result.exit_code == 1, (args, result.output)
        assert "\n" not in line and "Traceback" not in line, (args, line)
        assert str(path) in line and "not a regular file" in line, (args, line)


@pytest.mark.parametrize("special", MAKERS)
def test_a_special_manifest_is_refused(run_dir, special):
    # variant: the manifest, not episodes.jsonl, is the special file
    make, kind = MAKERS[special]
    path = run_dir / MANIFEST
    make(path)
    fifo = path if special == "a FIFO" else None
    with pytest.raises(RunDirError, match=f"{path}: .*not a regular file \\(a {kind}"):
        _within(lambda: read_manifest(run_dir), fifo)
    with pytest.raises(RunDirError, match="not a regular file"):
        _within(lambda: read_run(run_dir), fifo)
    for args in (["score", str(run_dir)], ["analyze", str(run_dir)]):  # neither waits on it
        result = _within(lambda args=args: CliRunner().invoke(main, args), fifo)
        assert result.exit_code == 1 and "not a regular file" in result.output, (
            args,
            result.output,
        )


def test_a_json_lines_file_given_as_a_fifo_is_refused(tmp_path):
    # variant: an answers file (score's JSONL input), a FIFO reached through a link
    fifo = tmp_path / "answers.fifo"
    os.mkfifo(fifo)
    link = tmp_path / "answers.jsonl"
    link.symlink_to(fifo)
    with pytest.raises(JsonLinesError, match="not a regular file \\(a FIFO\\)"):
        _within(lambda: list(iter_json_lines(link)), fifo)


def test_a_directory_and_a_missing_file(tmp_path):
    with pytest.raises(
        NotRegularFileError, match="^not a regular file \\(a directory\\)$"
    ) as caught:
        open_regular(tmp_path)
    assert caught.value.filename == str(tmp_path)
    with pytest.raises(FileNotFoundError):
        open_regular(tmp_path / "missing")


def test_a_regular_file_and_a_link_to_one_are_read(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_bytes(b'{"a": 1}\n')
    link = tmp_path / "link.jsonl"
    link.symlink_to(path)
    assert read_regular_bytes(path) == read_regular_bytes(link) == b'{"a": 1}\n'
    assert list(iter_json_lines(link)) == [(1, {"a": 1})]
