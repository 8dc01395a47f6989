"""The hostile-endpoint matrix: ``travelgym run`` (the real CLI, in process) with an LLM agent
against each behaviour of :mod:`tests.fakes.hostile_server`, for both suites.

Every run must finish (exit 0) with one recorded episode per task, each failure classified
(``agent: <category>: ...``, never a traceback), the run caps holding (``--max-calls``,
``--max-tokens-total``), and ``episodes.jsonl`` strict UTF-8 JSON. Deadlines come from the
environment (1 s an attempt, 2 s a call), so a run against a hanging server takes seconds.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fakes.hostile_server import BEHAVIOURS, hostile_server
from travelgym.cli import main
from travelgym.runner.store import EPISODES

CATEGORIES = {"rate_limit", "server", "timeout", "connection", "bad_request", "auth", "budget",
              "bad_response"}  # fmt: skip
FAILING = [name for name, b in BEHAVIOURS.items() if b.category is not None]
REPAIRED = ["lone_surrogates", "invalid_utf8"]
UNMETERED = ["missing_usage", "negative_usage"]
TASKS = 3


@pytest.fixture(autouse=True)
def short_deadlines(monkeypatch):
    monkeypatch.setenv("TRAVELGYM_TIMEOUT_S", "1")
    monkeypatch.setenv("TRAVELGYM_TOTAL_TIMEOUT_S", "2")


@pytest.fixture(scope="module")
def trips_data_dir(trips_database):
    from travelgym.suites.behavior2trip.instances import ensure_instances

    directory = trips_database.path.parent.parent
    ensure_instances(trips_database, directory)
    return directory


def run_cli(suite: str, agent: str, url: str, out: Path, data_dir: Path, *extra: str):
    """``travelgym run SUITE`` on the first :data:`TASKS` tasks; the episodes as dicts."""
    args = ["run", suite, "--agent", agent, "--base-url", url, "--limit", str(TASKS),
            "--out", str(out), "--data-dir", str(data_dir), "--no-progress", "--json", *extra]  # fmt: skip
    started = time.monotonic()
    result = CliRunner().invoke(main, args)
    elapsed = time.monotonic() - started
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    raw = (run_dir / EPISODES).read_bytes()
    lines = raw.decode("utf-8").splitlines()  # strict: the store wrote valid UTF-8
    episodes = [json.loads(line) for line in lines]
    assert len({e["task_id"] for e in episodes}) == len(episodes) == TASKS
    return episodes, elapsed


def assert_classified(episode: dict) -> str:
    """The category of an error episode, which must be one of the known ones."""
    assert episode["termination"] == "error"
    prefix, category, _ = episode["error"].split(": ", 2)
    assert prefix == "agent" and category in CATEGORIES, episode["error"]
    assert "Traceback" not in episode["error"]
    return category


def calls_seen(server) -> int:
    """Model calls the server saw: retries repeat a request byte for byte, calls differ."""
    return len({json.dumps(r, sort_keys=True) for r in server.requests})


@pytest.mark.parametrize("name", FAILING)
def test_compass_failing_endpoint(name, tmp_path, compass_db):
    hostile = BEHAVIOURS[name]
    with hostile_server(name) as server:
        episodes, elapsed = run_cli("compass", "llm:fake-model", server.base_url, tmp_path,
                                    compass_db.parent.parent, "--concurrency", str(TASKS),
                                    "--max-turns", "2", "--max-calls", "2")  # fmt: skip
        calls = calls_seen(server)
    categories = sorted(assert_classified(e) for e in episodes)
    assert categories == sorted([hostile.category] * 2 + ["budget"])
    assert calls == 2  # --max-calls held: the third episode's call was refused
    assert elapsed < 15


@pytest.mark.parametrize("name", ["hang", "invalid_json", "huge_body"])
def test_behavior2trip_failing_endpoint(name, tmp_path, trips_data_dir):
    hostile = BEHAVIOURS[name]
    with hostile_server(name) as server:
        episodes, _ = run_cli("behavior2trip", "b2t:fake-model", server.base_url, tmp_path,
                              trips_data_dir, "--concurrency", str(TASKS), "--max-steps", "2",
                              "--max-calls", "2")  # fmt: skip
        calls = calls_seen(server)
    categories = sorted(assert_classified(e) for e in episodes)
    assert categories == sorted([hostile.category] * 2 + ["budget"])
    assert calls == 2


@pytest.mark.parametrize("name", UNMETERED)
def test_compass_token_cap_holds_without_usable_usage(name, tmp_path, compass_db):
    """The first call passes (0 tokens used), its usage is estimated, and the cap of 1 token
    refuses every later call; with usage taken at its word the cap never trips."""
    with hostile_server(name) as server:
        episodes, _ = run_cli("compass", "llm:fake-model", server.base_url, tmp_path,
                              compass_db.parent.parent, "--concurrency", "1", "--max-turns",
                              "2", "--max-tokens-total", "1")  # fmt: skip
        calls = calls_seen(server)
    assert calls == 1
    assert [assert_classified(e) for e in episodes] == ["budget"] * TASKS
    first = next(e for e in episodes if e["llm_calls"])
    assert first["usage"]["prompt_tokens"] > 1000  # the system prompt and 18 tool schemas
    assert first["repairs"][BEHAVIOURS[name].repair] == 2  # prompt and completion


@pytest.mark.parametrize("name", UNMETERED)
def test_behavior2trip_token_cap_holds_without_usable_usage(name, tmp_path, trips_data_dir):
    with hostile_server(name) as server:
        episodes, _ = run_cli("behavior2trip", "b2t:fake-model", server.base_url, tmp_path,
                              trips_data_dir, "--concurrency", "1", "--max-steps", "2",
                              "--max-tokens-total", "1")  # fmt: skip
        calls = calls_seen(server)
    assert calls == 1
    answered = [e for e in episodes if e["termination"] == "answered"]
    assert len(answered) == 1 and answered[0]["usage"]["prompt_tokens"] > 1000
    assert answered[0]["repairs"][BEHAVIOURS[name].repair] == 2
    assert [assert_classified(e) for e in episodes if e not in answered] == ["budget"] * 2


@pytest.mark.parametrize("name", REPAIRED)
def test_compass_invalid_unicode_is_repaired_and_flagged(name, tmp_path, compass_db):
    """Agent and LLM user both reply with invalid Unicode: every episode is saved (today one
    such reply aborts the run with nothing saved), with U+FFFD in its text and flags."""
    data_dir = compass_db.parent.parent
    args = ("--user", "llm:fake-model", "--concurrency", str(TASKS), "--max-turns", "2")
    with hostile_server(name) as server:
        episodes, _ = run_cli("compass", "llm:fake-model", server.base_url, tmp_path, data_dir,
                              *args)  # fmt: skip
        again, _ = run_cli("compass", "llm:fake-model", server.base_url, tmp_path, data_dir,
                           *args, "--resume")  # fmt: skip
    assert again == episodes  # resume finds every episode done
    for episode in episodes:
        assert episode["termination"] == "turn_limit", episode["error"]
        turns = episode["turns"]
        agent = next(t for t in turns if t["role"] == "agent")
        user = [t for t in turns if t["role"] == "user"]
        assert "\ufffd" in agent["text"] and any("\ufffd" in t["text"] for t in user)
        flagged = {r["where"] for t in turns for r in t["repairs"]}
        assert "content" in flagged
        assert episode["repairs"][BEHAVIOURS[name].repair] >= 3  # agent and user replies


def test_compass_invalid_unicode_in_tool_arguments(tmp_path, compass_db):
    with hostile_server("lone_surrogates") as server:
        episodes, _ = run_cli("compass", "llm:fake-model", server.base_url, tmp_path,
                              compass_db.parent.parent, "--max-turns", "2")  # fmt: skip
    calls = [c for e in episodes for t in e["turns"] for c in t["tool_calls"]]
    assert len(calls) == TASKS
    for call in calls:  # the tool ran on the repaired text and said what was wrong with it
        assert call["arguments"] == '{"park_name": "\\ud83d"}'  # as sent: ASCII escapes
        assert call["repairs"] == [{"kind": "invalid_unicode", "where": "arguments", "count": 1}]
        assert call["error_category"] == "content"
        assert "unknown national park '\ufffd'" in call["error_message"]
    assert all(e["repairs"]["invalid_unicode"] == 2 for e in episodes)  # content + arguments


@pytest.mark.parametrize("name", REPAIRED)
def test_behavior2trip_invalid_unicode_is_repaired_and_flagged(name, tmp_path, trips_data_dir):
    with hostile_server(name) as server:
        episodes, _ = run_cli("behavior2trip", "react:fake-model", server.base_url, tmp_path,
                              trips_data_dir, "--max-steps", "2")  # fmt: skip
    for episode in episodes:
        assert episode["termination"] == "answered", episode["error"]
        (step,) = episode["steps"]
        assert "\ufffd" in step["text"] and step["repairs"][0]["where"] == "content"
        assert episode["repairs"] == {"invalid_unicode": 1}


def test_a_bad_deadline_in_the_environment_is_one_line(tmp_path, compass_db, monkeypatch):
    monkeypatch.setenv("TRAVELGYM_TIMEOUT_S", "soon")
    args = ["run", "compass", "--agent", "llm:fake-model", "--base-url", "http://127.0.0.1:9/v1",
            "--limit", "1", "--out", str(tmp_path), "--data-dir", str(compass_db.parent.parent),
            "--no-progress"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: TRAVELGYM_TIMEOUT_S='soon': expected a positive number of seconds"
    ]
