"""Input files of other commands (task files, run directories for export): not text, not
JSON or nested too deeply is one line naming the file, exit status 1."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from travelgym.cli import main

DEEP = b"[" * 100_000 + b"]" * 100_000 + b"\n"
BINARY = b"\x89PNG\r\n\x1a\n\x00\xff\xfe"


@pytest.mark.parametrize(("content", "reason"), [(DEEP, "recursion limit"),
                                                 (BINARY, "can't decode byte 0x89")])  # fmt: skip
def test_task_files_that_are_no_task_files(tmp_path, content, reason):
    path = tmp_path / "tasks.jsonl"
    path.write_bytes(content)
    result = CliRunner().invoke(main, ["tasks", "compass", "--tasks-file", str(path)])
    assert result.exit_code == 1, result.output
    line = result.output.strip()
    assert "\n" not in line and line.startswith(f"Error: {path}") and reason in line, line


def test_export_of_a_run_with_a_line_nested_too_deeply(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps({"suite": "compass", "agent": "a"}))
    (run / "episodes.jsonl").write_bytes(DEEP)
    result = CliRunner().invoke(main, ["export", "sft", str(run), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1, result.output
    # the store's strict reader names the file, the line and the reason, and how to repair it
    line = result.output.strip()
    assert "\n" not in line, line
    assert line.startswith(f"Error: {run / 'episodes.jsonl'}:1: "), line
    assert "nested too deeply" in line, line
    assert not (tmp_path / "o").exists()
