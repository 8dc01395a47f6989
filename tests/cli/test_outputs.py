"""Every command that writes refuses an unusable output place up front, and a write that fails
later (a full disk, a file size limit) ends with one line, leaving the previous output intact."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import resource
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tests.fakes.mcp_check import subprocess_env
from travelgym import atomic
from travelgym.cli import main
from travelgym.runner.batch import RunConfig, run_suite


@pytest.fixture(scope="module")
def compass_run(compass_db, tmp_path_factory):
    """A finished two-episode scripted run and its data directory."""
    data_dir = compass_db.parent.parent
    out = tmp_path_factory.mktemp("runs") / "scripted-greedy"
    asyncio.run(run_suite(RunConfig("compass", "scripted:greedy", out=out,
                                      limit=2, data_dir=data_dir, progress=False)))  # fmt: skip
    return out, data_dir


def _writers(run_dir, data_dir, tmp_path) -> dict[str, list[str]]:
    """Each writing command with its output option last (the value is appended)."""
    raw = tmp_path / "raw"
    raw.mkdir(exist_ok=True)
    return {
        "report": ["report", str(run_dir), "--no-analysis", "--data-dir", str(data_dir), "--out"],
        "annotate export": ["annotate", "export", str(run_dir), "--out"],
        "export sft": ["export", "sft", str(run_dir), "--out"],
        "generate-tasks": ["generate-tasks", "compass", "--out"],
        "ingest": ["ingest", "compass", str(raw), "--out"],
        "analyze --plots": ["analyze", str(run_dir), "--plots"],
        "stats --plots": [
            "stats",
            "compass",
            "--db",
            str(data_dir / "compass" / "compass-seed0.sqlite"),
            "--plots",
        ],
    }


@pytest.mark.slow
def test_unusable_output_places_are_refused_by_every_writing_command(compass_run, tmp_path):
    run_dir, data_dir = compass_run
    (tmp_path / "a-file").write_text("keep me")
    (tmp_path / "a-dir").mkdir()
    os.mkfifo(tmp_path / "fifo")
    runner = CliRunner()
    for name, args in _writers(run_dir, data_dir, tmp_path).items():
        wants_dir = name.endswith("--plots")
        places = {
            "/dev/null": "/dev/null is a character device",
            str(tmp_path / "fifo"): "is a FIFO",
            str(tmp_path / "a-file" / "below"): "a-file is a file, not a directory",
            str(tmp_path / ("a-file" if wants_dir else "a-dir")): (
                "is a file, not a directory" if wants_dir else "is a directory, not a file"
            ),
        }
        for place, reason in places.items():
            result = runner.invoke(main, [*args, place])
            assert result.exit_code == 2, (name, place, result.output)
            assert reason in result.output and "Traceback" not in result.output, (name, place)
    assert (tmp_path / "a-file").read_text() == "keep me"


def test_a_full_disk_while_writing_is_one_line_and_keeps_the_old_output(compass_run, tmp_path,
                                                                         monkeypatch):  # fmt: skip
    run_dir, data_dir = compass_run
    runner = CliRunner()
    outputs = {"report": tmp_path / "report.html", "annotate export": tmp_path / "sheet.csv",
               "export sft": tmp_path / "sft.jsonl"}  # fmt: skip
    writers = _writers(run_dir, data_dir, tmp_path)
    for out in outputs.values():
        out.write_text("the previous output")

    def full_disk(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "write", full_disk)
    for name in ("report", "annotate export"):
        result = runner.invoke(main, [*writers[name], str(outputs[name])])
        assert result.exit_code == 1, (name, result.output)
        assert result.output.strip() == f"Error: {outputs[name]}: No space left on device"
        assert outputs[name].read_text() == "the previous output"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def _limited_run(args: list[str], max_file_bytes: int) -> subprocess.CompletedProcess:
    """``travelgym ARGS`` in a process that may not write files beyond ``max_file_bytes``
    (writes past it fail with EFBIG, as a full disk fails with ENOSPC)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    # no bytecode writing: a .pyc cut short by the limit would break later imports
    env = {**subprocess_env(), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "travelgym.cli", *args], preexec_fn=limit,
                          capture_output=True, text=True, timeout=120, env=env)  # fmt: skip


def test_file_size_limit_during_a_run_and_a_report_is_one_line(compass_run, tmp_path):
    run_dir, data_dir = compass_run
    out = tmp_path / "runs"
    done = _limited_run(["run", "compass", "--agent", "scripted:greedy", "--limit", "4",
                         "--concurrency", "1", "--out", str(out), "--data-dir", str(data_dir),
                         "--no-progress"], max_file_bytes=40_000)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "File too large" in done.stderr
    report = tmp_path / "report.html"
    report.write_text("the previous report")
    done = _limited_run(["report", str(run_dir), "--no-analysis", "--data-dir", str(data_dir),
                         "--out", str(report)], max_file_bytes=10_000)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == f"Error: {report}: File too large"
    assert report.read_text() == "the previous report"
    assert json.loads((out / "scripted-greedy" / "manifest.json").read_text())["agent"]


def test_database_options_refuse_files_that_are_no_database(compass_run, tmp_path):
    run_dir, data_dir = compass_run
    not_db, damaged = tmp_path / "answers.jsonl", tmp_path / "cut.sqlite"
    not_db.write_text('{"task_id": "x"}\n')
    damaged.write_bytes((data_dir / "compass" / "compass-seed0.sqlite").read_bytes()[:200_000])
    runner = CliRunner()
    for command in (["stats", "compass"], ["stats", "behavior2trip"],
                    ["serve-mcp", "compass"], ["serve-mcp", "behavior2trip"]):  # fmt: skip
        result = runner.invoke(main, [*command, "--db", str(not_db)])
        assert result.exit_code == 2 and "is not an SQLite database" in result.output
    result = runner.invoke(main, ["stats", "compass", "--db", str(damaged)])
    assert result.exit_code == 1, result.output
    assert result.output.strip() == "Error: a damaged database: database disk image is malformed"
