"""Default run directories never collide: ``run`` without ``--out`` writes a new
``runs/<suite>/<UTC start>-<agent>-<identity hash>/`` per agent, ``--resume`` without ``--out``
continues the latest run of the same identity (and says which), every run ends with a line
saying how to view it, and ``travelgym runs`` lists what is there."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.runner.store import EPISODES, MANIFEST

NAME = re.compile(r"^(\d{8}T\d{6}Z)-scripted-greedy-([0-9a-f]{8})(-\d+)?$")


@pytest.fixture
def in_tmp(tmp_path, monkeypatch, compass_db) -> Path:
    """``tmp_path`` as the working directory (the default ``runs/`` lands there); returns the
    data directory of the shared test data."""
    monkeypatch.chdir(tmp_path)
    return compass_db.parent.parent


def run(data_dir: Path, *args: str):
    """``travelgym run compass --agent scripted:greedy ARGS`` (no ``--out``)."""
    return CliRunner().invoke(main, ["run", "compass", "--agent", "scripted:greedy", *args,
                                     "--data-dir", str(data_dir), "--no-progress"])  # fmt: skip


def run_dirs() -> list[Path]:
    return sorted(Path("runs/compass").iterdir())


def episodes(directory: Path) -> int:
    return len((directory / EPISODES).read_text().splitlines())


def test_two_default_runs_never_collide_and_resume_picks_the_matching_one(in_tmp):
    first = run(in_tmp, "--limit", "1")
    second = run(in_tmp, "--limit", "2")
    assert first.exit_code == 0 and second.exit_code == 0, first.output + second.output
    dirs = run_dirs()
    assert len(dirs) == 2 and all(NAME.match(d.name) for d in dirs)
    one, two = sorted(dirs, key=episodes)
    assert (episodes(one), episodes(two)) == (1, 2)
    # different identities (the task ids differ): different hashes
    assert NAME.match(one.name)[2] != NAME.match(two.name)[2]
    for result, directory in ((first, one), (second, two)):
        assert f"scripted:greedy: {episodes(directory)} episodes in {directory}" in result.stdout
        # the commands printed run on the run's data directory (the default one lacked it)
        assert (f"view: travelgym report {directory} --out report.html --data-dir {in_tmp} · "
                f"JSON: travelgym score {directory} --json --data-dir {in_tmp}"
                ) in result.stdout.splitlines()  # fmt: skip

    resumed = run(in_tmp, "--limit", "1", "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert resumed.stderr.splitlines()[0] == f"resuming {one}"
    assert f"1 episodes in {one}" in resumed.stdout
    assert run_dirs() == dirs and episodes(one) == 1  # nothing new, nothing run twice

    resumed = run(in_tmp, "--limit", "2", "--resume")
    assert resumed.exit_code == 0 and resumed.stderr.splitlines()[0] == f"resuming {two}"


def test_the_same_command_twice_gets_two_directories_and_resume_the_latest(in_tmp):
    for _ in range(2):
        assert run(in_tmp, "--limit", "1").exit_code == 0
    dirs = run_dirs()
    assert len(dirs) == 2
    hashes = {NAME.match(d.name)[2] for d in dirs}
    assert len(hashes) == 1  # one identity: one hash
    latest = max(dirs, key=lambda d: json.loads((d / MANIFEST).read_text())["created"] + d.name)
    resumed = run(in_tmp, "--limit", "1", "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert resumed.stderr.splitlines()[0] == f"resuming {latest} (the latest of 2 such runs)"


def test_resume_without_a_matching_run_is_one_line_and_starts_nothing(in_tmp):
    assert run(in_tmp, "--limit", "1").exit_code == 0
    before = run_dirs()
    result = run(in_tmp, "--limit", "2", "--resume")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "Error: no run under runs/compass has this command's identity (agent, tasks, seeds, "
        "settings) to resume: start it without --resume, or name its directory's parent with "
        "--out"
    ]
    assert run_dirs() == before


def test_out_keeps_naming_run_directories_after_the_agent(in_tmp):
    result = CliRunner().invoke(main, ["run", "compass", "--agent", "scripted:greedy",
                                       "--agent", "scripted:sampled", "--limit", "1", "--out",
                                       "mine", "--data-dir", str(in_tmp), "--no-progress"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in Path("mine").iterdir()) == ["scripted-greedy", "scripted-sampled"]
    assert not Path("runs").exists()
    assert "view: travelgym report mine/scripted-sampled --out report.html" in result.stdout


def test_several_agents_get_a_default_directory_each_with_one_start_time(in_tmp):
    result = CliRunner().invoke(main, ["run", "compass", "--agent", "scripted:greedy",
                                       "--agent", "scripted:sampled", "--limit", "1",
                                       "--data-dir", str(in_tmp), "--no-progress"])  # fmt: skip
    assert result.exit_code == 0, result.output
    names = [d.name for d in run_dirs()]
    assert len(names) == 2
    stamps = {n.split("-")[0] for n in names}
    assert len(stamps) == 1
    assert sorted(n.split("-", 1)[1].rsplit("-", 1)[0] for n in names) == ["scripted-greedy",
                                                                          "scripted-sampled"]  # fmt: skip


def test_runs_lists_both_runs_newest_first_and_skips_what_is_not_a_run(in_tmp):
    assert run(in_tmp, "--limit", "1").exit_code == 0
    assert run(in_tmp, "--limit", "2").exit_code == 0
    one, two = sorted(run_dirs(), key=episodes)
    Path("runs/compass/notes").mkdir()
    (Path("runs/compass/notes") / "todo.txt").write_text("x")
    Path("runs/compass/broken").mkdir()
    (Path("runs/compass/broken") / MANIFEST).write_text("{")
    with (two / EPISODES).open("a") as damaged:  # a bad line after the run: skipped too
        damaged.write("not json\n")
    later = {**json.loads((one / MANIFEST).read_text()), "created": "2099-01-01T00:00:00+00:00"}
    Path("runs/compass/later").mkdir()
    (Path("runs/compass/later") / MANIFEST).write_text(json.dumps(later))  # no episodes yet

    listed = CliRunner().invoke(main, ["runs", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.stdout)
    assert [r["directory"] for r in rows] == ["runs/compass/later", str(one)]
    assert [(r["episodes"], r["success_pct"]) for r in rows] == [(0, None), (1, 0.0)]
    assert rows[1]["metrics"]["FR"] == 100.0 and rows[1]["agent"] == "scripted:greedy"
    notes = listed.stderr.splitlines()
    assert {n.split(":")[1].strip() for n in notes} == {
        "skipped runs/compass/broken", f"skipped {two}", "skipped runs/compass/notes"}  # fmt: skip
    assert len(notes) == 3 and all(n.startswith("note: skipped ") for n in notes)


def test_runs_prints_agent_n_success_errors_cost_and_date(in_tmp):
    assert run(in_tmp, "--limit", "2").exit_code == 0
    exhaustive = CliRunner().invoke(main, ["run", "compass", "--agent", "scripted:exhaustive",
                                           "--limit", "1", "--data-dir", str(in_tmp),
                                           "--no-progress"])  # fmt: skip
    assert exhaustive.exit_code == 0, exhaustive.output
    # the suite's success criterion (COMPASS: OR-5): the exhaustive agent finds the optimum
    expected = {"scripted:greedy": ("2", "0.0"), "scripted:exhaustive": ("1", "100.0")}
    newest_first = sorted(run_dirs(), key=lambda d: json.loads((d / MANIFEST).read_text())["created"]
                          + d.name, reverse=True)  # fmt: skip
    for args in (["runs"], ["runs", "compass"], ["runs", "--root", "runs/compass"]):
        listed = CliRunner().invoke(main, args)
        assert listed.exit_code == 0 and listed.stderr == "", listed.output
        header, *lines = listed.stdout.splitlines()
        assert header.split() == ["directory", "suite", "agent", "n", "success", "%", "infra",
                                  "errors", "cost", "created", "(UTC)"]  # fmt: skip
        assert [line.split()[0] for line in lines] == [str(d) for d in newest_first]
        for line, directory in zip(lines, newest_first, strict=True):
            manifest = json.loads((directory / MANIFEST).read_text())
            created, agent = manifest["created"], manifest["agent"]
            assert line.split()[1:] == ["compass", agent, *expected[agent], "0", "-",
                                        created[:10], created[11:16]]  # fmt: skip

    other = CliRunner().invoke(main, ["runs", "travelplanner"])
    assert other.exit_code == 0 and other.stdout == ""
    assert other.stderr == "no runs under runs of travelplanner\n"


def test_the_printed_score_command_scores_a_run_of_another_database_seed(in_tmp, tmp_path):
    """A ``--db-seed 1`` run printed ``travelgym score DIR --json``, which refused the run
    ("score it with --db-seed 1"): a run is scored on its own seed unless one is given."""
    import json
    import shlex

    result = run(in_tmp, "--limit", "1", "--db-seed", "1", "--out", str(tmp_path / "r"))
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("view: "))
    words = shlex.split(line.split("JSON: ", 1)[1])
    assert words[:2] == ["travelgym", "score"]
    scored = CliRunner().invoke(main, [*words[1:], "--no-progress"])
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.output)["overall"]["n"] == 1
    wrong = CliRunner().invoke(main, [*words[1:], "--db-seed", "0"])
    assert wrong.exit_code == 1 and "score it with --db-seed 1" in wrong.output
