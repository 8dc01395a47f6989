"""Each suite's episodes end in the right outcome, decided where the failure happened: an
unparseable model reply is a model error that is scored; a server answering 503 for good is an
infra error that the summary leaves out; where model code runs (COMPASS's code agent,
Behavior2Trip's Python tool), a sandbox that cannot start is an infra error. TravelPlanner's
case is in ``tests/suites/travelplanner/test_outcomes.py`` (its data fixture lives there)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, HTTPError, Reply
from travelgym.core.registry import get_suite
from travelgym.core.summary import summarize_episodes
from travelgym.db import connect_readonly
from travelgym.llm.openai_client import OpenAIChatClient

FAST = {"backoff_base_s": 0.01, "backoff_max_s": 0.05, "timeout_s": 2.0, "max_retries": 2}
GARBAGE = "Sure! I would love to help with that trip."  # no action, no answer, no JSON


def client(server) -> OpenAIChatClient:
    return OpenAIChatClient("fake-model", base_url=server.base_url, **FAST)


def play(responder, episode_of):
    """The episode ``episode_of(client)`` plays against a fake model answering ``responder``."""
    with FakeOpenAIServer(responder=responder) as server:
        return asyncio.run(episode_of(client(server)))


def check(suite: str, unparsed, outage) -> None:
    """The unparseable run is a scored model error, the outage an infra error left out."""
    assert unparsed.outcome == "model_error" and unparsed.score is not None
    assert outage.outcome == "infra_error" and outage.cause == "agent server"
    episodes = [json.loads(e.model_dump_json()) for e in (unparsed, outage)]
    summary = summarize_episodes(get_suite(suite), episodes)
    assert summary["outcomes"]["infra_errors"] == 1 and summary["outcomes"]["model_errors"] == 1
    counted = summarize_episodes(get_suite(suite), episodes[:1])
    assert {k: v for k, v in summary.items() if k not in ("outcomes", "usage")} == \
        {k: v for k, v in counted.items() if k not in ("outcomes", "usage")}  # fmt: skip


@pytest.fixture(scope="module")
def compass(compass_db):
    from travelgym.suites.compass.solver import solve
    from travelgym.suites.compass.tasks import load_tasks

    conn = connect_readonly(compass_db)
    task = next(t for t in load_tasks() if t.level == 1)
    yield conn, task, solve(conn, task)
    conn.close()


def compass_episode(compass, agent_class, **kwargs):
    from travelgym.suites.compass.episode import run_episode
    from travelgym.suites.compass.user.template import TemplateUserBackend

    conn, task, truth = compass
    return lambda c: run_episode(task, agent_class(c, **kwargs), TemplateUserBackend(), conn,
                                 truth, max_turns=3)  # fmt: skip


def test_compass(compass):
    from travelgym.suites.compass.agents.llm_agent import LLMToolAgent

    episode_of = compass_episode(compass, LLMToolAgent)
    unparsed = play(lambda body: Reply(GARBAGE), episode_of)
    outage = play(lambda body: HTTPError(503), episode_of)
    assert unparsed.termination == "turn_limit"
    check("compass", unparsed, outage)


def test_compass_code_agent_without_a_sandbox(compass, no_bwrap):
    from travelgym.suites.compass.agents.code_agent import CodeAgent

    code = json.dumps({"code": "print(1)"})
    call = {"id": "c1", "type": "function", "function": {"name": "run_python", "arguments": code}}

    def respond(body):
        return {"id": "x", "object": "chat.completion", "model": "fake-model", "choices": [
            {"index": 0, "finish_reason": "tool_calls",
             "message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}  # fmt: skip

    episode = play(respond, compass_episode(compass, CodeAgent))
    assert (episode.outcome, episode.cause) == ("infra_error", "sandbox")
    assert "bubblewrap" in episode.error


@pytest.fixture(scope="module")
def trips(trips_database):
    from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances

    paths = ensure_instances(trips_database, trips_database.path.parent.parent, splits=("test",))
    conn = connect_readonly(trips_database.path)
    yield conn, load_instances(paths["test"], check=False)[0]
    conn.close()


def trip_episode(trips):
    from travelgym.suites.behavior2trip.agents.b2t_agent import B2TAgent
    from travelgym.suites.behavior2trip.episode import run_trip_episode

    conn, instance = trips
    return lambda c: run_trip_episode(instance, B2TAgent(c, max_steps=2), conn)


def test_behavior2trip(trips):
    unparsed = play(lambda body: Reply(GARBAGE), trip_episode(trips))
    outage = play(lambda body: HTTPError(503), trip_episode(trips))
    assert unparsed.termination == "step_limit" and unparsed.invalid_actions
    check("behavior2trip", unparsed, outage)


def test_behavior2trip_python_tool_without_a_sandbox(trips, no_bwrap):
    python = '<tool_call>{"name": "Python", "arguments": {"code": "print(1)"}}</tool_call>'
    episode = play(lambda body: Reply(python), trip_episode(trips))
    assert (episode.outcome, episode.cause) == ("infra_error", "sandbox")
    assert "bubblewrap" in episode.error
