"""``travelgym play``: a person at a pseudo-terminal (pexpect) plays one COMPASS episode as the
agent (a tool call, input mistakes, a recommendation) and as the simulated user (against a
scripted agent); each episode is stored as a run directory and ``travelgym score`` on it
agrees with the stored score. Usage errors and ending an episode are checked without a
terminal (click's runner)."""

from __future__ import annotations

import io
import json
import os
import sys

import pexpect
import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.core.registry import all_suites

TASK = "compass-004"  # level 1: a hotel only


@pytest.fixture(scope="module")
def data_dir(compass_db):
    return compass_db.parent.parent


@pytest.fixture(scope="module")
def optimum(data_dir):
    from travelgym.suites.compass.ground_truth import ensure_ground_truth

    _, truths = ensure_ground_truth(seed=0, data_dir=data_dir)
    return truths[TASK].optimal_plan["hotel"]


def spawn(data_dir, *args):
    env = {**os.environ, "TRAVELGYM_DATA_DIR": str(data_dir), "TERM": "dumb"}
    child = pexpect.spawn(sys.executable, ["-m", "travelgym.cli", "play", *args], env=env,
                          encoding="utf-8", timeout=90, dimensions=(50, 250))  # fmt: skip
    child.logfile_read = io.StringIO()
    return child


def read_episode(run_dir):
    lines = (run_dir / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])


def score_json(run_dir, data_dir):
    result = CliRunner().invoke(main, ["score", str(run_dir), "--json", "--data-dir",
                                       str(data_dir)])  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_person_plays_the_agent_calls_a_tool_and_recommends(data_dir, optimum, tmp_path):
    out = tmp_path / "as-agent"
    child = spawn(data_dir, "compass", "--task", TASK, "--set", "max_turns=2", "--out", str(out))
    child.expect("--- system prompt ---")
    child.expect("--- user ---")
    child.expect_exact("you (agent)> ")
    child.sendline("nosuch_tool x=1")  # an unknown tool: one line, and the person types again
    child.expect(r"error: unknown tool 'nosuch_tool'[^\n]*\n")
    child.expect_exact("you (agent)> ")
    child.sendline('recommend_hotel {"package_ids": [')  # bad JSON
    child.expect(r"error: bad JSON arguments for recommend_hotel: [^\n]*\n")
    child.expect_exact("you (agent)> ")
    child.sendline("recommend_hotel reasoning=cheapest")  # a required argument missing
    child.expect(r"error: recommend_hotel needs package_ids")
    child.expect_exact("you (agent)> ")
    child.sendline(f'recommend_hotel package_ids=["{optimum}"] reasoning="the cheapest fit"')
    child.expect("--- result of recommend_hotel ---")
    child.expect_exact(optimum)
    child.expect_exact("you (agent)> ")
    final = {"message": f"Book {optimum}.", "recommendation": {"hotel": optimum}}
    child.sendline(json.dumps(final))
    child.expect("stored in ")
    child.expect(r"all\s+1\s+100\.0")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.logfile_read.getvalue()[-2000:]

    episode = read_episode(out)
    assert episode["agent"] == "llm:human:player" and episode["task_id"] == TASK
    calls = [c for t in episode["turns"] for c in t["tool_calls"]]
    assert [(c["name"], c["ok"]) for c in calls] == [("recommend_hotel", True)]
    arguments = calls[0]["arguments"]  # the JSON text sent, as for a model's call
    arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
    assert arguments == {"package_ids": [optimum], "reasoning": "the cheapest fit"}
    assert episode["final_recommendation"]["hotel"] == optimum
    assert episode["score"]["feasible"] and episode["score"]["optimal"]
    assert episode["termination"] == "turn_limit" and episode["error"] is None
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["agent"] == "llm:human:player" and manifest["task_ids"] == [TASK]
    scored = score_json(out, data_dir)
    assert scored["tasks"][0]["feasible"] == episode["score"]["feasible"]
    assert scored["tasks"][0]["optimal"] == episode["score"]["optimal"]
    assert scored["overall"]["FR"] == 100.0 and scored["overall"]["optimal"] == 100.0


def test_a_person_plays_the_user_against_a_scripted_agent(data_dir, tmp_path):
    from travelgym.suites.compass.tasks import load_tasks

    task = next(t for t in load_tasks() if t.task_id == TASK)
    out = tmp_path / "as-user"
    child = spawn(data_dir, "compass", "--as", "user", "--task", TASK, "--set", "max_turns=4",
                  "--out", str(out))  # fmt: skip
    child.expect("--- your script ---")
    child.expect_exact("you (user)> ")
    opening = "Hi! A cheap hotel near Glacier for three families, please."
    child.sendline(opening)
    child.expect("--- agent ---")
    replies = 0
    while child.expect_exact(["you (user)> ", "stored in "]) == 0:
        child.sendline("")  # Enter: the suggested words
        replies += 1
    child.expect(pexpect.EOF)
    child.close()
    shown = child.logfile_read.getvalue()
    assert child.exitstatus == 0, shown[-2000:]
    for constraint in task.constraints:  # the whole script, hidden requirements included
        assert constraint.sentence() in shown

    episode = read_episode(out)
    assert episode["user"] == "human" and episode["agent"] == "scripted:greedy"
    users = [t for t in episode["turns"] if t["role"] == "user"]
    assert users[0]["text"] == opening and len(users) == 1 + replies
    # Enter sent the simulator's suggested words: each is on screen after "suggested: "
    assert all(f"suggested: {t['text']}" in shown for t in users[1:])
    assert episode["score"] is not None
    scored = score_json(out, data_dir)
    assert scored["tasks"][0]["feasible"] == episode["score"]["feasible"]
    assert scored["tasks"][0]["recommendation"] == episode["score"]["recommendation"]


def test_ctrl_c_at_the_prompt_ends_the_episode_and_it_is_stored(data_dir, tmp_path):
    out = tmp_path / "ctrl-c"
    child = spawn(data_dir, "compass", "--as", "user", "--task", TASK, "--out", str(out))
    child.expect_exact("you (user)> ")
    child.sendintr()
    child.expect("stored in ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.logfile_read.getvalue()[-2000:]
    episode = read_episode(out)
    assert episode["termination"] == "error" and episode["user"] == "human"
    assert episode["error"] == "user: ended_by_player: the player ended the episode (Ctrl-C)"


def test_ending_the_episode_stores_it_as_ended_by_the_player(data_dir, tmp_path):
    runner = CliRunner()
    for typed, how in (("/quit\n", "/quit"), ("", "end of input")):
        out = tmp_path / how.replace(" ", "-").strip("/")
        result = runner.invoke(main, ["play", "compass", "--task", TASK, "--out", str(out),
                                      "--data-dir", str(data_dir)], input=typed)  # fmt: skip
        assert result.exit_code == 0, result.output
        episode = read_episode(out)
        assert episode["termination"] == "error"
        assert episode["error"] == f"agent: ended_by_player: the player ended the episode ({how})"
        assert episode["score"] is not None and not episode["score"]["feasible"]
        assert "stored in" in result.output and "\nall " in result.output


def test_bad_play_options_are_one_line_usage_errors(tmp_path):
    runner = CliRunner()
    without_user = [s.name for s in all_suites() if s.user_option is None]
    with_user = ", ".join(s.name for s in all_suites() if s.user_option is not None)
    cases = [(["compass", "--agent", "scripted:greedy"], "--agent applies to --as user"),
             (["compass", "--set", "nosuch=1"], "compass has no option 'nosuch'"),
             (["compass", "--set", "max_turns"], "use KEY=VALUE"),
             (["compass", "--set", "max_turns=1"], "--max-turns"),
             (["compass", "--as", "user", "--set", "user=template"], "you are the user"),
             (["compass", "--as", "user", "--agent", "nope"], "bad agent spec 'nope'")]  # fmt: skip
    if without_user:
        cases.append(([without_user[0], "--as", "user"], f"suites with one: {with_user}"))
    for args, text in cases:
        result = runner.invoke(main, ["play", *args, "--out", str(tmp_path / "never")])
        assert result.exit_code == 2, (args, result.output)
        assert text in result.output, (args, result.output)
        assert "Traceback" not in result.output
    assert not (tmp_path / "never").exists()
