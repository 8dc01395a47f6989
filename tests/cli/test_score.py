"""``travelgym score`` never crashes on an answers file: empty, unknown, of the other suite,
nested, huge, not text or not a file, each is one line and a non-zero exit."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.suites.compass.tasks import load_tasks

TASK = load_tasks()[0].task_id


def _score(path, *args, data_dir=None):
    extra = ["--data-dir", str(data_dir)] if data_dir else []
    return CliRunner().invoke(main, ["score", str(path), *args, *extra])


def _one_line_error(result, code: int, text: str) -> None:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)  # a message and an exit, no exception
    assert text in result.output, result.output
    if code == 1:
        assert result.output.strip().count("\n") == 0, result.output


def short_id(value: object) -> str | None:
    """Test ids of a readable length for long byte strings."""
    return repr(value)[:40] if isinstance(value, bytes) else None


@pytest.mark.parametrize(
    ("content", "code", "text"),
    [
        (b"", 1, "no answers in it"),
        (b"\n  \n\t\n", 1, "no answers in it"),
        (b'{"task_id": "nope", "recommendation": {}}\n{"task_id": "nix", "recommendation": null}\n',
         1, "none of its 2 answer(s) names a known task id (e.g. 'nope', 'nix')"),
        (b'{"task_id": "' + TASK.encode() + b'", "recomendation": {}}\n', 1,
         ":1: no 'recommendation' (write null for a task left unanswered)"),
        (b'{"instance_id": "b2t-test-easy-0000", "anwser": "x"}\n', 1,
         ":1: no 'answer' (write null for an instance left unanswered)"),
        (b'{"task_id": "' + TASK.encode() + b'", "recommendation": '
         + b"[" * 100_000 + b"]" * 100_000 + b"}\n", 1, ":1: JSON nested too deeply"),
        (b'{"task_id": "x", "recommendation": ' + b"9" * 100_000 + b"}\n", 1,
         ":1: not valid JSON (Exceeds the limit"),
        (b'{"task_id": "caf\xe9"}\n', 1, ":1: not UTF-8 text"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", 1, ":1: not UTF-8 text"),
        (b'{"task_id": "' + TASK.encode() + b'", "recommendation": {}}\n{oops\n', 1,
         ":2: not valid JSON"),
        (b'{"task_id": ["L1"], "recommendation": {}}\n', 1, ":1: expected an object with"),
        (b'{"task_id": "' + TASK.encode() + b'", "trial": [1], "final_recommendation": {}}\n', 1,
         ":1: 'trial' must be a whole number >= 0"),
        (b'{"task_id": "' + TASK.encode() + b'", "recommendation": {}}\n', 2,
         "holds compass answers, not behavior2trip"),
        (b'{"instance_id": "b2t-test-easy-0000", "answer": "x"}\n', 2,
         "holds behavior2trip answers, not compass"),
    ],
    ids=short_id,
)  # fmt: skip
def test_bad_answers_files_are_one_line_errors(tmp_path, content, code, text):
    path = tmp_path / "answers.jsonl"
    path.write_bytes(content)
    wrong = {"holds compass": ["--suite", "behavior2trip"], "holds behavior2trip": ["--suite",
             "compass"]}  # fmt: skip
    args = next((v for k, v in wrong.items() if text.startswith(k)), [])
    _one_line_error(_score(path, *args, data_dir=tmp_path / "data"), code, text)
    assert not (tmp_path / "data").exists()  # refused before building anything


def test_run_directories_of_the_other_suite_are_refused(tmp_path):
    for suite, other in (("compass", "behavior2trip"), ("behavior2trip", "compass")):
        run_dir = tmp_path / suite
        run_dir.mkdir()
        (run_dir / "manifest.json").write_text(json.dumps({"suite": suite, "agent": "a"}))
        (run_dir / "episodes.jsonl").write_text("")
        result = _score(run_dir, "--suite", other)
        _one_line_error(result, 2, f"holds {suite} answers, not {other}")
    empty = _score(tmp_path / "compass", data_dir=tmp_path / "data")
    _one_line_error(empty, 1, "no answers in it")


def test_paths_that_are_no_answers_file_are_refused(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    _one_line_error(_score(tmp_path / "fifo"), 2, "is a FIFO, not a regular file")
    _one_line_error(_score("/dev/zero"), 2, "is a character device, not a regular file")
    _one_line_error(_score(tmp_path / "missing.jsonl"), 2, "does not exist")
    _one_line_error(_score(tmp_path), 1, "is not a run directory: no episodes.jsonl")


@pytest.fixture(scope="module")
def trips_data_dir(trips_database):
    from travelgym.suites.behavior2trip.instances import ensure_instances

    directory = trips_database.path.parent.parent
    ensure_instances(trips_database, directory, splits=("test",))
    return directory


def test_behavior2trip_answers_naming_no_instance_are_an_error(trips_data_dir, tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text('{"instance_id": "b2t-test-easy-9999x", "answer": "<answer></answer>"}\n')
    _one_line_error(_score(path, data_dir=trips_data_dir), 1,
                    "none of its 1 answer(s) names a known instance id")  # fmt: skip
    path.write_text("")
    _one_line_error(_score(path, "--suite", "behavior2trip", data_dir=trips_data_dir), 1,
                    "no answers in it")  # fmt: skip
    # ids name their slots: refused before any database is built on a fresh data directory
    path.write_text('{"task_id": "compass-001", "answer": null}\n')
    fresh = tmp_path / "fresh"
    _one_line_error(_score(path, "--suite", "behavior2trip", data_dir=fresh), 1,
                    "none of its 1 answer(s) names a known instance id (e.g. 'compass-001')")  # fmt: skip
    assert not fresh.exists()
