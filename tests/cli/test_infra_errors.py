"""Failures are never scores: a run against an endpoint that is down is counted as infra errors,
left out of the metrics, fails the command (exit 3) and is completed by ``--resume
--retry-errors`` once the endpoint is up; tokens and cost are counted by role."""

from __future__ import annotations

import json
import socket

import pytest
from click.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, Reply
from travelgym.cli import main
from travelgym.db import connect_readonly
from travelgym.runner.store import EPISODES
from travelgym.suites.compass.solver import solve
from travelgym.suites.compass.tasks import load_tasks

AGENT_USAGE, USER_USAGE = (1000, 100), (200, 20)
PRICES = {"fake-model": {"input": 2.0, "output": 8.0}}  # dollars per million tokens


@pytest.fixture(scope="module")
def task_and_plan(compass_db):
    """A level-1 task and its optimal plan (the fake model recommends it)."""
    conn = connect_readonly(compass_db)
    try:
        task = next(t for t in load_tasks() if t.level == 1)
        return task.task_id, solve(conn, task).optimal_plan
    finally:
        conn.close()


def closed_port_url() -> str:
    """A loopback URL nothing listens on: every connection is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def model(plan: dict):
    """The fake model: as the agent (tools offered) it recommends ``plan``; as the user, it
    agrees. Each reports its usage."""

    def respond(body: dict) -> Reply:
        if "tools" not in body:
            return Reply("That works for me, thanks.", usage=USER_USAGE)
        return Reply(json.dumps({"message": "Here is your trip.", "recommendation": plan}),
                     usage=AGENT_USAGE)  # fmt: skip

    return respond


def run(*args: str):
    return CliRunner().invoke(main, ["run", "compass", *args])


@pytest.mark.slow
def test_an_outage_is_counted_not_scored_then_retried(tmp_path, compass_db, task_and_plan):
    task_id, plan = task_and_plan
    data = ["--data-dir", str(compass_db.parent.parent), "--no-progress"]
    common = ["--agent", "llm:fake-model", "--tasks", task_id, "--trials", "2",
              "--max-turns", "4", *data]  # fmt: skip
    out = tmp_path / "runs"
    down = run(*common, "--base-url", closed_port_url(), "--out", str(out))
    assert down.exit_code == 3, down.output
    assert "Traceback" not in down.output
    assert "2 (100 %)" in down.stdout  # the outcome table under the metrics
    assert "warning: 2 of 2 episodes failed for reasons outside the model" in down.stderr
    assert "agent connection, 2x" in down.stderr and "--resume --retry-errors" in down.stderr
    run_dir = out / "llm-fake-model"

    as_json = run(*common, "--base-url", closed_port_url(), "--out", str(tmp_path / "j"),
                  "--json")  # fmt: skip
    assert as_json.exit_code == 3
    summary = json.loads(as_json.stdout)["llm:fake-model"]
    assert summary["overall"]["n"] == 0  # no metric mixes the outage in
    assert summary["outcomes"]["infra_errors"] == 2
    assert summary["outcomes"]["infra_causes"] == {"agent connection": 2}

    scored = CliRunner().invoke(main, ["score", str(run_dir), "--json", *data[:2]])
    assert scored.exit_code == 0, scored.output  # score warns, never fails
    result = json.loads(scored.stdout)
    assert result["overall"]["n"] == 0 and result["outcomes"]["infra_errors"] == 2
    assert "--retry-errors" in scored.stderr

    tolerated = run(*common, "--base-url", closed_port_url(), "--out", str(tmp_path / "t"),
                    "--max-error-rate", "1", "--count-errors-as-failures", "--json")  # fmt: skip
    assert tolerated.exit_code == 0, tolerated.output  # within the allowed rate
    old = json.loads(tolerated.stdout)["llm:fake-model"]
    assert old["overall"] == {"n": 2, "FR": 0.0, "OR5": 0.0, "OR10": 0.0, "OR20": 0.0,
                              "optimal": 0.0}  # the old figures: an outage as two failures  # fmt: skip
    manifest = json.loads((tmp_path / "t" / "llm-fake-model" / "manifest.json").read_text())
    assert manifest["count_errors_as_failures"] is True

    with FakeOpenAIServer(responder=model(plan)) as server:
        retried = run(*common, "--base-url", server.base_url, "--out", str(out), "--resume",
                      "--retry-errors", "--json")  # fmt: skip
        fresh = run(*common, "--base-url", server.base_url, "--out", str(tmp_path / "fresh"),
                    "--json")  # fmt: skip
    assert retried.exit_code == 0, retried.output
    summary = json.loads(retried.stdout)["llm:fake-model"]
    assert summary["outcomes"]["infra_errors"] == 0 and summary["outcomes"]["n"] == 2
    assert summary["overall"]["OR5"] == 100.0  # the optimal plan, scored
    assert summary["overall"] == json.loads(fresh.stdout)["llm:fake-model"]["overall"]
    lines = [json.loads(x) for x in (run_dir / EPISODES).read_text().splitlines()]
    assert sorted((e["task_id"], e["trial"]) for e in lines) == [(task_id, 0), (task_id, 1)]
    quarantined = (run_dir / "episodes.quarantine.jsonl").read_text().splitlines()
    assert len(quarantined) == 2  # the failed attempts are kept, not lost


def test_tokens_cost_and_pass_k_by_role(tmp_path, compass_db, task_and_plan):
    task_id, plan = task_and_plan
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    args = ["--agent", "llm:fake-model", "--user", "llm:fake-model", "--tasks", task_id,
            "--trials", "3", "--max-turns", "4", "--data-dir", str(compass_db.parent.parent),
            "--no-progress", "--pricing", str(prices)]  # fmt: skip
    with FakeOpenAIServer(responder=model(plan)) as server:
        table = run(*args, "--base-url", server.base_url, "--out", str(tmp_path / "a"))
        as_json = run(*args, "--base-url", server.base_url, "--out", str(tmp_path / "b"), "--json")
    assert table.exit_code == 0 and as_json.exit_code == 0, table.output
    summary = json.loads(as_json.stdout)["llm:fake-model"]
    episodes = [json.loads(x) for x in
                (tmp_path / "b" / "llm-fake-model" / EPISODES).read_text().splitlines()]  # fmt: skip
    agent_calls, user_calls = (sum(e["llm_calls"] for e in episodes),
                               sum(1 for e in episodes for t in e["turns"]
                                   if t["role"] == "user" and t["usage"]["prompt_tokens"]))  # fmt: skip
    assert agent_calls and user_calls
    usage = summary["usage"]
    assert usage["agent"] == {"input_tokens": AGENT_USAGE[0] * agent_calls,
                              "output_tokens": AGENT_USAGE[1] * agent_calls}  # fmt: skip
    assert usage["user"] == {"input_tokens": USER_USAGE[0] * user_calls,
                             "output_tokens": USER_USAGE[1] * user_calls}  # fmt: skip
    agent_cost = (AGENT_USAGE[0] * 2.0 + AGENT_USAGE[1] * 8.0) * agent_calls / 1e6
    user_cost = (USER_USAGE[0] * 2.0 + USER_USAGE[1] * 8.0) * user_calls / 1e6
    assert usage["cost_usd"]["agent"] == pytest.approx(agent_cost)
    assert usage["cost_usd"]["total"] == pytest.approx(agent_cost + user_cost)
    assert summary["pass_k"]["3"] == {"pass^k": 100.0, "pass@k": 100.0, "tasks": 1}
    header = next(line for line in table.stdout.splitlines() if "completed" in line)
    assert "pass^3" in header and "cost" in header and "user tokens in/out" in header
    assert f"${agent_cost + user_cost:,.4f}" in table.stdout
    # score and analyze read the same accounting from the run directory
    scored = CliRunner().invoke(main, ["score", str(tmp_path / "b" / "llm-fake-model"), "--json",
                                       "--data-dir", str(compass_db.parent.parent)])  # fmt: skip
    assert json.loads(scored.stdout)["usage"] == usage
    run_dir = str(tmp_path / "b" / "llm-fake-model")
    analyzed = CliRunner().invoke(main, ["analyze", run_dir, "--json", "--resamples", "100"])
    assert analyzed.exit_code == 0, analyzed.output
    assert json.loads(analyzed.stdout)["outcomes"][run_dir]["usage"] == usage
    report = tmp_path / "report.html"
    written = CliRunner().invoke(main, ["report", run_dir, "--out", str(report),
                                        "--data-dir", str(compass_db.parent.parent)])  # fmt: skip
    assert written.exit_code == 0, written.output
    html = report.read_text()
    assert 'id="outcomes"' in html and f"${agent_cost + user_cost:,.4f}" in html


def test_max_cost_stops_the_run_with_everything_saved(tmp_path, compass_db, task_and_plan):
    task_id, plan = task_and_plan
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    one_call = (AGENT_USAGE[0] * 2.0 + AGENT_USAGE[1] * 8.0) / 1e6
    args = ["--agent", "llm:fake-model", "--tasks", task_id, "--trials", "3", "--concurrency",
            "1", "--max-turns", "4", "--data-dir", str(compass_db.parent.parent), "--no-progress",
            "--pricing", str(prices), "--max-cost", str(one_call / 2), "--json",
            "--out", str(tmp_path / "c")]  # fmt: skip
    with FakeOpenAIServer(responder=model(plan)) as server:
        result = run(*args, "--base-url", server.base_url)
        calls = len(server.requests)
    assert result.exit_code == 3, result.output  # the budget's refusals are infra errors
    assert calls == 1  # the first call passed the cap, it refused every later one
    summary = json.loads(result.stdout)["llm:fake-model"]
    assert summary["outcomes"]["n"] == 3  # every episode saved
    # the first episode's next call and both others' first: refused by the budget
    assert summary["outcomes"]["infra_causes"] == {"agent budget": 3}
    assert summary["usage"]["cost_usd"]["total"] == pytest.approx(one_call)


def test_max_cost_without_a_price_is_refused_before_anything_runs(tmp_path, compass_db):
    result = run("--agent", "llm:unpriced-model", "--limit", "1", "--max-cost", "1",
                 "--base-url", closed_port_url(), "--data-dir", str(compass_db.parent.parent),
                 "--out", str(tmp_path / "x"))  # fmt: skip
    assert result.exit_code == 1
    assert "--max-cost needs a price for the model 'unpriced-model'" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "x").exists()
