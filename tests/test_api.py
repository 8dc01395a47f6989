"""The Python API (issue 33): ``travelgym.evaluate`` runs through the same runner as ``travelgym
run`` and returns the same figures, typed; ``load_suite`` and ``make_env``; bad input is one
clear error."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

import travelgym
from travelgym.cli import main
from travelgym.core.errors import UnknownSuite, UserError


def test_import_stays_cheap_and_names_the_api():
    done = subprocess.run([sys.executable, "-c", "import sys, travelgym; "
                           "print(sorted(m for m in sys.modules if m.startswith('travelgym')))"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert done.stdout.strip() == "['travelgym', 'travelgym.version']"  # the API: on first use
    assert {"evaluate", "load_suite", "make_env", "RunResult"} <= set(travelgym.__all__)
    with pytest.raises(AttributeError):
        travelgym.no_such_thing  # noqa: B018


def test_evaluate_gives_the_figures_of_the_command_line(tmp_path, compass_db):
    data_dir = compass_db.parent.parent
    result = travelgym.evaluate("compass", "scripted:greedy", limit=5, out=tmp_path / "api",
                                data_dir=data_dir)  # fmt: skip
    done = CliRunner().invoke(main, ["run", "compass", "--agent", "scripted:greedy", "--limit",
                                     "5", "--out", str(tmp_path / "cli"), "--data-dir",
                                     str(data_dir), "--no-progress", "--json"])  # fmt: skip
    assert done.exit_code == 0, done.output
    printed = json.loads(done.output)["scripted:greedy"]
    assert isinstance(result, travelgym.RunResult) and result.episodes == 5
    assert result.directory == tmp_path / "api" and result.agent == "scripted:greedy"
    for key in ("overall", "by_level", "by_objective", "outcomes"):
        assert result.summary[key] == printed[key], key
    assert result.metrics == {k: v for k, v in printed["overall"].items() if isinstance(v, float)}
    api_lines = (tmp_path / "api" / "episodes.jsonl").read_text().splitlines()
    cli_lines = (tmp_path / "cli" / "scripted-greedy" / "episodes.jsonl").read_text().splitlines()
    scores = [sorted((json.loads(x)["task_id"], json.dumps(json.loads(x)["score"], sort_keys=True))
                     for x in lines) for lines in (api_lines, cli_lines)]  # fmt: skip
    assert scores[0] == scores[1]


def test_suite_options_by_name_and_bad_input(tmp_path, compass_db):
    data_dir = compass_db.parent.parent
    result = travelgym.evaluate("compass", "scripted:greedy", limit=2, level=2,
                                out=tmp_path / "l2", data_dir=data_dir)  # fmt: skip
    assert set(result.summary["by_level"]) == {"2"} and result.episodes == 2
    with pytest.raises(UserError, match="compass option level: Input should be less than or"):
        travelgym.evaluate("compass", "scripted:greedy", level=7, out=tmp_path / "x")
    with pytest.raises(UserError, match="bad agent spec"):
        travelgym.evaluate("compass", "nonsense:agent", out=tmp_path / "x")
    with pytest.raises(UnknownSuite, match="installed suites are"):
        travelgym.load_suite("no-such-suite")
    assert not (tmp_path / "x").exists()


def test_make_env_is_the_suites_training_environment(compass_db):
    env = travelgym.make_env("compass", limit=1, data_dir=compass_db.parent.parent)
    try:
        messages, info = env.reset()
        assert messages[0]["role"] == "system" and travelgym.load_suite("compass").name == "compass"
        assert info is not None
    finally:
        env.close()


def test_evaluate_without_out_gets_a_new_directory_and_resumes_the_matching_one(
    tmp_path, compass_db, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    data_dir = compass_db.parent.parent
    first = travelgym.evaluate("compass", "scripted:greedy", limit=1, data_dir=data_dir)
    second = travelgym.evaluate("compass", "scripted:greedy", limit=1, data_dir=data_dir)
    assert first.directory != second.directory
    assert str(first.directory.parent) == str(second.directory.parent) == "runs/compass"
    hashes = {re.search(r"-([0-9a-f]{8})(-\d+)?$", r.directory.name)[1] for r in (first, second)}
    assert len(hashes) == 1  # one identity, one hash
    again = travelgym.evaluate("compass", "scripted:greedy", limit=1, data_dir=data_dir,
                               resume=True)  # fmt: skip
    assert again.directory in (first.directory, second.directory) and again.episodes == 1
