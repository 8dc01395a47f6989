"""The LLM agent and the LLM user against a local OpenAI-compatible server started by the test:
tool calls (parallel, malformed, unknown), 429/500/timeouts, provider failure; nothing is lost."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.fakes.openai_server import Delay, FakeOpenAIServer, HTTPError, Reply, tool_call
from travelgym.db import connect_readonly
from travelgym.llm.openai_client import OpenAIChatClient
from travelgym.runner.batch import RunConfig, run_suite
from travelgym.runner.store import read_episodes
from travelgym.suites.compass.agents.llm_agent import LLMToolAgent
from travelgym.suites.compass.episode import run_episode
from travelgym.suites.compass.solver import solve
from travelgym.suites.compass.tasks import load_tasks
from travelgym.suites.compass.user.llm_backend import LLMUserBackend
from travelgym.suites.compass.user.template import TemplateUserBackend

FAST = {"backoff_base_s": 0.01, "backoff_max_s": 0.05, "timeout_s": 1.0, "max_retries": 3}


@pytest.fixture(scope="module")
def setup(compass_db):
    conn = connect_readonly(compass_db)
    task = next(t for t in load_tasks() if t.level == 2)
    return conn, task, solve(conn, task)


def responder(plan: dict):
    """A fake model: agent requests (with tools) search, then recommend; user requests chat."""

    def respond(body: dict):
        if "tools" not in body:  # the LLM user simulator
            return Reply(content="Thanks - here is what I need, it's a must-have.")
        if body["messages"][-1]["role"] == "user":
            return Reply(tool_calls=[
                tool_call("search_airports", {"park_name": "Yosemite"}),
                tool_call("get_weekday", '{"date_str": "2025-08-0'),  # malformed JSON
                tool_call("book_everything", {}),  # unknown tool
            ])  # fmt: skip
        return Reply(content=json.dumps({"message": "Here you go.", "recommendation": plan}))

    return respond


def test_llm_agent_and_llm_user_complete_an_episode_through_errors(setup):
    conn, task, truth = setup
    script = [HTTPError(429, retry_after=0.01), HTTPError(500), Delay(3.0, Reply(content="late"))]
    with FakeOpenAIServer(script, responder=responder(truth.optimal_plan)) as server:
        agent_client = OpenAIChatClient("fake-model", base_url=server.base_url, **FAST)
        user_client = OpenAIChatClient("fake-model", base_url=server.base_url, **FAST)
        episode = asyncio.run(run_episode(task, LLMToolAgent(agent_client), LLMUserBackend(user_client),
                                          conn, truth, seed=1, user_name="llm:fake-model"))  # fmt: skip
        requests = server.requests
    assert episode.termination == "accepted", episode.error
    assert episode.final_recommendation == truth.optimal_plan
    assert episode.score["feasible"] and episode.score["optimal"]
    calls = [c for turn in episode.turns for c in turn.tool_calls]
    by_name = {c.name: c for c in calls}
    assert by_name["search_airports"].ok and by_name["search_airports"].result["airports"]
    assert by_name["get_weekday"].error_category == "parameter"
    assert "JSON" in by_name["get_weekday"].error_message
    assert by_name["book_everything"].error_category == "tool_name"
    assert episode.llm_calls >= 2 and episode.usage.total_tokens > 0
    # the three parallel results went back to the model in one request
    after_tools = [r for r in requests if "tools" in r and r["messages"][-1]["role"] == "tool"]
    assert after_tools and sum(m["role"] == "tool" for m in after_tools[0]["messages"][-3:]) == 3
    assert any(m["role"] == "tool" for m in episode.messages)
    assert all(t.text for t in episode.turns if t.role == "user")


def test_unparseable_reply_is_recorded_not_fatal(setup):
    conn, task, truth = setup
    with FakeOpenAIServer(
        responder=lambda body: Reply(content="I think the best is the cheap one")
    ) as server:
        client = OpenAIChatClient("fake-model", base_url=server.base_url, **FAST)
        episode = asyncio.run(run_episode(task, LLMToolAgent(client), TemplateUserBackend(), conn, truth,
                                          max_turns=4))  # fmt: skip
    agent_turns = [t for t in episode.turns if t.role == "agent"]
    assert agent_turns and all(t.error and "JSON" in t.error for t in agent_turns)
    assert episode.termination == "turn_limit"
    assert episode.outcome == "model_error" and episode.cause == "turn_limit"  # scored
    assert episode.score["feasible"] is False


def test_provider_failure_is_recorded_by_the_runner(tmp_path, compass_db):
    with FakeOpenAIServer(responder=lambda body: HTTPError(500)) as server:
        cfg = RunConfig("compass", "llm:fake-model", out=tmp_path / "run", limit=3,
                        concurrency=3, base_url=server.base_url, data_dir=compass_db.parent.parent,
                        progress=False, client_options=FAST)  # fmt: skip
        summary = asyncio.run(run_suite(cfg))
    episodes = read_episodes(tmp_path / "run")
    # an outage is no score of the model's: counted apart, left out of the metrics
    assert len(episodes) == 3 and summary["overall"]["n"] == 0
    assert summary["outcomes"]["infra_errors"] == 3
    assert summary["outcomes"]["infra_causes"] == {"agent server": 3}
    for episode in episodes:
        assert episode.termination == "error" and episode.outcome == "infra_error"
        assert "server" in episode.error and episode.cause == "agent server"
        assert episode.score["feasible"] is False


@pytest.mark.slow
def test_run_caps_are_shared_and_error_episodes_can_be_retried(tmp_path, compass_db):
    data_dir = compass_db.parent.parent
    out = tmp_path / "capped"
    with FakeOpenAIServer(responder=responder({"hotel": "pkg_1_1_2_1"})) as server:
        cfg = RunConfig("compass", "llm:fake-model", out=out, limit=3, concurrency=1,
                        base_url=server.base_url, data_dir=data_dir, progress=False,
                        client_options={**FAST, "max_calls": 2})  # fmt: skip
        asyncio.run(run_suite(cfg))
        agent_calls = sum("tools" in r for r in server.requests)
    assert agent_calls == 2  # one budget for the whole run
    episodes = read_episodes(out)
    assert [e.termination for e in episodes].count("error") >= 2
    assert all("budget" in e.error for e in episodes if e.termination == "error")
    with FakeOpenAIServer(responder=responder({"hotel": "pkg_1_1_2_1"})) as server:
        retry = RunConfig("compass", "llm:fake-model", out=out, limit=3, concurrency=3,
                          base_url=server.base_url, data_dir=data_dir, progress=False, resume=True,
                          retry_errors=True, client_options=FAST)  # fmt: skip
        asyncio.run(run_suite(retry))
    again = read_episodes(out)
    assert len(again) == 3 and not any(e.termination == "error" for e in again)
