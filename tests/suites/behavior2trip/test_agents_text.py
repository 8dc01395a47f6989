"""Invalid Unicode reaching Behavior2Trip agents: in the model's text and, as JSON escapes, in
the arguments of a ``<tool_call>``. The step is flagged, the tool runs on repaired text, and the
episode can be written (today the escaped surrogate reached the invalid-action record and the
episode could not be serialised)."""

from __future__ import annotations

import asyncio

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, Reply
from travelgym.db import connect_readonly
from travelgym.llm.openai_client import OpenAIChatClient
from travelgym.suites.behavior2trip.agents.b2t_agent import B2TAgent
from travelgym.suites.behavior2trip.agents.base import TripToolSession
from travelgym.suites.behavior2trip.episode import run_trip_episode
from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances

FAST = {"backoff_base_s": 0.01, "backoff_max_s": 0.05, "timeout_s": 2.0, "max_retries": 0}


@pytest.fixture(scope="module")
def instance(trips_database):
    paths = ensure_instances(trips_database, trips_database.path.parent.parent, splits=("test",))
    return load_instances(paths["test"], check=False)[0]


@pytest.fixture(scope="module")
def conn(trips_db):
    return connect_readonly(trips_db)


def test_b2t_episode_with_invalid_unicode_is_flagged_and_writable(instance, conn):
    escaped = (
        '<tool_call>{"name": "AccommodationSearch", "arguments": {"city": "\\ud83d"}}</tool_call>'
    )
    script = [Reply(f"<think>hotels \ud83d</think>{escaped}"), Reply("<answer>[]</answer>")]
    with FakeOpenAIServer(script) as server:
        client = OpenAIChatClient("fake-model", base_url=server.base_url, **FAST)
        episode = asyncio.run(run_trip_episode(instance, B2TAgent(client), conn))
    episode.model_dump_json().encode("utf-8")  # what the run store writes
    first = episode.steps[0]
    assert first.think == "hotels \ufffd"
    assert [(r.kind, r.where) for r in first.repairs] == [("invalid_unicode", "content")]
    (call,) = first.tool_calls
    assert call.arguments == {"city": "\ufffd"}
    assert [(r.where, r.count) for r in call.repairs] == [("arguments", 1)]
    assert not call.ok and "\ufffd" in call.error_message  # the tool saw the repaired text
    assert episode.repairs == {"invalid_unicode": 2}
    assert episode.termination == "answered"


def test_trips_env_repairs_tool_names_and_argument_text(conn):
    env = TripToolSession(conn)
    named = env.call("Accommodation\udc00Search", {"city": "Beijing"})
    text = env.call("AccommodationSearch", '{"city": "Bei\ud83djing", "n": 1}')
    assert named.name == "Accommodation\ufffdSearch" and named.error_category == "tool_name"
    assert [r.where for r in named.repairs] == ["name"]
    assert text.arguments == '{"city": "Bei\ufffdjing", "n": 1}'
    assert [r.where for r in text.repairs] == ["arguments"]
    step = env.add_step(text="two calls")
    step.model_dump_json().encode("utf-8")
