"""The hostile-endpoint matrix: ``travelgym run`` (the real CLI, in process) with an LLM agent
against each behaviour of :mod:`tests.fakes.hostile_server`, for both suites.

Every run must finish (exit 0) with one recorded episode per task, each failure classified
(``agent: <category>: ...``, never a traceback), the run caps holding (``--max-calls``,
``--max-tokens-total``), and ``episodes.jsonl`` strict UTF-8 JSON. Deadlines come from the
environment (1 s an attempt, 2 s a call), so a run against a hanging server takes seconds.
Every failing behaviour (transport, body and HTTP errors: 429 with ``Retry-After``, 401, 400,
500, a reset mid-body) runs against both suites: a retryable failure is retried until the
call's total deadline, the others are not retried at all.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fakes.hostile_server import BEHAVIOURS, RETRY_AFTER_S, hostile_server
from travelgym.cli import main
from travelgym.llm.retry import RETRYABLE
from travelgym.runner.store import EPISODES

CATEGORIES = {"rate_limit", "server", "timeout", "connection", "bad_request", "auth", "budget",
              "bad_response", "too_many_tool_calls"}  # fmt: skip
FAILING = [name for name, b in BEHAVIOURS.items() if b.category is not None]
REPAIRED = ["lone_surrogates", "invalid_utf8"]
UNMETERED = ["missing_usage", "negative_usage"]
TASKS = 3
MAX_TOKENS = 50_000  # a token cap no failing run may pass (failed calls report no usage)
#: failures whose attempts end at once (not at a deadline): retried several times in 2 s
FAST_RETRYABLE = {"rate_limit_429", "server_500", "reset_mid_body"}


@pytest.fixture(autouse=True)
def short_deadlines(monkeypatch):
    monkeypatch.setenv("TRAVELGYM_TIMEOUT_S", "1")
    monkeypatch.setenv("TRAVELGYM_TOTAL_TIMEOUT_S", "2")


@pytest.fixture(scope="module")
def trips_data_dir(trips_database):
    from travelgym.suites.behavior2trip.instances import ensure_instances

    directory = trips_database.path.parent.parent
    ensure_instances(trips_database, directory, splits=("test",))
    return directory


def run_cli(suite: str, agent: str, url: str, out: Path, data_dir: Path, *extra: str):
    """``travelgym run SUITE`` on the first :data:`TASKS` tasks; the episodes as dicts."""
    args = ["run", suite, "--agent", agent, "--base-url", url, "--limit", str(TASKS),
            "--out", str(out), "--data-dir", str(data_dir), "--no-progress", "--json", *extra]  # fmt: skip
    started = time.monotonic()
    result = CliRunner().invoke(main, args)
    elapsed = time.monotonic() - started
    assert "Traceback" not in result.output
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    raw = (run_dir / EPISODES).read_bytes()
    lines = raw.decode("utf-8").splitlines()  # strict: the store wrote valid UTF-8
    episodes = [json.loads(line) for line in lines]
    # any infra error (here: the endpoint's failures and the budget's refusals) fails the run
    infra = any(e["outcome"] == "infra_error" for e in episodes)
    assert result.exit_code == (3 if infra else 0), result.output
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


def attempt_times(server) -> list[list[float]]:
    """When each call's attempts reached the server, one list per call."""
    calls: dict[str, list[float]] = {}
    for request, when in zip(server.requests, server.times, strict=True):
        calls.setdefault(json.dumps(request, sort_keys=True), []).append(when)
    return list(calls.values())


def check_failing_run(name: str, episodes: list[dict], server) -> None:
    """What every failing endpoint must give, whatever the suite: the two calls allowed by
    ``--max-calls 2`` fail with the behaviour's category, the third episode is refused by the
    budget before it calls, no tokens are counted, and retries follow the category: none for a
    final one, several (spaced by ``Retry-After`` for a 429) for a passing one."""
    hostile = BEHAVIOURS[name]
    categories = sorted(assert_classified(e) for e in episodes)
    assert categories == sorted([hostile.category] * 2 + ["budget"])
    attempts = attempt_times(server)
    assert len(attempts) == 2  # --max-calls held: the third episode's call was refused
    spent = sum(e["usage"]["prompt_tokens"] + e["usage"]["completion_tokens"] for e in episodes)
    assert spent <= MAX_TOKENS and sum(e["llm_calls"] for e in episodes) <= 2
    per_call = sorted(len(a) for a in attempts)
    failed = [e["error"] for e in episodes if not e["error"].startswith("agent: budget:")]
    if hostile.category not in RETRYABLE:
        assert per_call == [1, 1], per_call  # a 400, a 401 or a bad body is never retried
        assert not any("attempts" in error for error in failed), failed
    else:  # retried until the total deadline (2 s): the error says how often
        said = [int(m.group(1)) for e in failed if (m := re.search(r"after (\d+) attempts?", e))]
        assert len(said) == 2, failed
        if name in FAST_RETRYABLE:  # attempts that end at once: several of them in 2 s
            assert max(per_call) >= 2 and max(said) >= 2, (per_call, failed)
    if name == "rate_limit_429":  # the waits are the server's Retry-After, not the backoff's
        gaps = [b - a for times in attempts for a, b in zip(times, times[1:], strict=False)]
        assert gaps and min(gaps) >= RETRY_AFTER_S - 0.05, gaps


@pytest.mark.parametrize("name", FAILING)
def test_compass_failing_endpoint(name, tmp_path, compass_db):
    with hostile_server(name) as server:
        episodes, elapsed = run_cli("compass", "llm:fake-model", server.base_url, tmp_path,
                                    compass_db.parent.parent, "--concurrency", str(TASKS),
                                    "--max-turns", "2", "--max-calls", "2",
                                    "--max-tokens-total", str(MAX_TOKENS))  # fmt: skip
    check_failing_run(name, episodes, server)
    assert elapsed < 15


@pytest.mark.parametrize("name", FAILING)
def test_behavior2trip_failing_endpoint(name, tmp_path, trips_data_dir):
    with hostile_server(name) as server:
        episodes, elapsed = run_cli("behavior2trip", "b2t:fake-model", server.base_url,
                                    tmp_path, trips_data_dir, "--concurrency", str(TASKS),
                                    "--max-steps", "2", "--max-calls", "2",
                                    "--max-tokens-total", str(MAX_TOKENS))  # fmt: skip
    check_failing_run(name, episodes, server)
    assert elapsed < 15


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
