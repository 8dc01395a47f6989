"""Several base URLs serving one run (``--base-url`` repeated): two local servers share the
requests, balanced by requests in flight, and one of them failing mid-run (a reset, then
refused connections) costs nothing but retries: every episode completes with the scores of a
single-server run given the same replies. The manifest records the URLs order-free."""

from __future__ import annotations

import json
import threading

import pytest
from click.testing import CliRunner

from tests.fakes.openai_server import Delay, FakeOpenAIServer, Reply, Reset, tool_call
from travelgym.cli import main
from travelgym.db import connect_readonly
from travelgym.runner.store import read_episodes
from travelgym.suites.compass.solver import solve
from travelgym.suites.compass.tasks import load_tasks

ENV = {"TRAVELGYM_TIMEOUT_S": "5"}
CONCURRENCY = 4
TRIALS = 8
AGENT = "llm:fake-model"


class CountingServer(FakeOpenAIServer):
    """A fake server that also counts the requests it holds at once (the most: ``peak``)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.in_flight = self.peak = 0

    async def _chat(self, request):
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            return await super()._chat(request)
        finally:
            self.in_flight -= 1


@pytest.fixture(scope="module")
def setup(compass_db):
    conn = connect_readonly(compass_db)
    task = next(t for t in load_tasks() if t.level == 2)
    return compass_db.parent.parent, task.task_id, solve(conn, task).optimal_plan


def responder(plan: dict):
    """The agent's model: a search first, then the optimal plan (a pure function of the
    request, so any server gives the same reply); each reply held a moment, so requests
    overlap."""

    def respond(body: dict):
        if body["messages"][-1]["role"] == "user" and len(body["messages"]) <= 2:
            reply = Reply(tool_calls=[tool_call("search_airports", {"park_name": "Zion"})],
                          usage=(100, 10))  # fmt: skip
        else:
            text = json.dumps({"message": "Here you go.", "recommendation": plan})
            reply = Reply(content=text, usage=(200, 20))
        return Delay(0.1, reply)

    return respond


def failing_after(server: FakeOpenAIServer, plan: dict, answered: int):
    """``responder`` for ``answered`` requests, then a connection reset mid-reply, and the
    server goes away (later attempts are refused). ``respond.resets`` counts the resets: more
    than one when another attempt reached the server while it was going away."""
    good = responder(plan)

    def respond(body: dict):
        if len(server.requests) <= answered:
            return good(body)
        respond.resets += 1
        threading.Thread(target=server.stop, daemon=True).start()
        return Reset(b'{"id": "chatcmpl-1", "choices": [')

    respond.resets = 0
    return respond


def run(out, data_dir, task_id, *urls):
    flags = [x for url in urls for x in ("--base-url", url)]
    args = ["run", "compass", "--agent", AGENT, "--tasks", task_id, "--trials", str(TRIALS),
            "--max-turns", "6", "--concurrency", str(CONCURRENCY), "--no-progress", "--json",
            "--out", str(out), "--data-dir", str(data_dir), *flags]  # fmt: skip
    ran = CliRunner().invoke(main, args, env=ENV)
    assert ran.exit_code == 0, ran.output
    summary = json.loads(ran.output)[AGENT]
    summary.pop("episodes_wall_s", None)
    return summary, read_episodes(out / "llm-fake-model")


def outcomes(episodes) -> dict:
    return {(e.task_id, e.trial): (e.score, e.termination, e.error, e.usage.total_tokens,
                                   e.llm_calls) for e in episodes}  # fmt: skip


@pytest.mark.slow
def test_two_servers_share_a_run_and_one_failing_mid_run_costs_only_retries(setup, tmp_path):
    data_dir, task_id, plan = setup
    with CountingServer(responder=responder(plan)) as single:
        alone, alone_episodes = run(tmp_path / "single", data_dir, task_id, single.base_url)
    assert len(alone_episodes) == TRIALS
    assert all(e.error is None and e.score["optimal"] for e in alone_episodes)

    with (
        CountingServer(responder=responder(plan)) as a,
        CountingServer(responder=responder(plan)) as b,
    ):
        shared, shared_episodes = run(tmp_path / "shared", data_dir, task_id, b.base_url,
                                      a.base_url)  # fmt: skip
    assert a.requests and b.requests  # both served the run
    assert len(a.requests) + len(b.requests) == len(single.requests)
    # least in flight first: no server ever held more than its share of the run's concurrency
    assert max(a.peak, b.peak) <= CONCURRENCY // 2 < single.peak
    assert shared == alone and outcomes(shared_episodes) == outcomes(alone_episodes)
    manifest = json.loads((tmp_path / "shared" / "llm-fake-model" / "manifest.json").read_text())
    assert manifest["base_url"] == sorted([a.base_url, b.base_url])

    good = CountingServer(responder=responder(plan))
    bad = CountingServer(abortive_close=True)
    bad.responder = failing_after(bad, plan, answered=3)
    with good, bad:
        failed, failed_episodes = run(tmp_path / "failover", data_dir, task_id, bad.base_url,
                                      good.base_url)  # fmt: skip
    # three answered, the fourth reset (with any attempt already sent to the server while it
    # went away: a race of the concurrent episodes), then refused
    assert len(bad.requests) == 3 + bad.responder.resets and bad.responder.resets >= 1
    # the failed attempt was retried on the other server; nothing else changed
    assert failed == alone and outcomes(failed_episodes) == outcomes(alone_episodes)
    # the good server answered every call the bad one did not (and the retries of attempts the
    # bad one dropped while it went away, which never reached its handler)
    assert len(single.requests) - 3 <= len(good.requests) <= len(single.requests)


def test_resume_with_the_urls_in_another_order_is_the_same_run(setup, tmp_path):
    data_dir, task_id, plan = setup
    with (
        CountingServer(responder=responder(plan)) as a,
        CountingServer(responder=responder(plan)) as b,
    ):
        run(tmp_path, data_dir, task_id, a.base_url, b.base_url)
        args = ["run", "compass", "--agent", AGENT, "--tasks", task_id, "--trials",
                str(TRIALS), "--max-turns", "6", "--no-progress", "--json", "--resume",
                "--out", str(tmp_path), "--data-dir", str(data_dir), "--base-url", b.base_url,
                "--base-url", a.base_url]  # fmt: skip
        before = len(a.requests) + len(b.requests)
        again = CliRunner().invoke(main, args, env=ENV)
        assert again.exit_code == 0, again.output
        assert len(a.requests) + len(b.requests) == before  # nothing left to run
    manifest = json.loads((tmp_path / "llm-fake-model" / "manifest.json").read_text())
    assert manifest["base_url"] == sorted([a.base_url, b.base_url])


@pytest.mark.parametrize(
    ("urls", "message"),
    [
        ([""], "base URL is empty"),
        (["ftp://models.local/v1"], "is not an http:// or https:// URL"),
        (["http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"], "is given twice"),
    ],
)
def test_bad_base_urls_are_one_line_usage_errors(tmp_path, urls, message):
    flags = [x for url in urls for x in ("--base-url", url)]
    ran = CliRunner().invoke(main, ["run", "compass", "--agent", AGENT, "--out", str(tmp_path),
                                    *flags])  # fmt: skip
    assert ran.exit_code == 2
    errors = [line for line in ran.output.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and "--base-url" in errors[0] and message in errors[0], ran.output
