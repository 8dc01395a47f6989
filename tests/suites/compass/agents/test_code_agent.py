"""The code agent against a local OpenAI-compatible server: its Python runs in the sandbox with the
tools importable; a runaway program is stopped and the episode goes on."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, Reply, tool_call
from travelgym.db import connect_readonly
from travelgym.llm.openai_client import OpenAIChatClient
from travelgym.sandbox import SandboxLimits
from travelgym.suites.compass.agents.code_agent import CodeAgent
from travelgym.suites.compass.episode import run_episode
from travelgym.suites.compass.solver import solve
from travelgym.suites.compass.tasks import load_tasks
from travelgym.suites.compass.user.template import TemplateUserBackend

SEARCH = """
from tools import search_airports, get_weekday
print(search_airports(park_name="Zion")["airports"][0]["airport_code"])
print(get_weekday(date_str="2025-08-08")["weekday"])
"""
RUNAWAY = "while True:\n    pass\n"
ESCAPE = "import socket\nsocket.create_connection(('127.0.0.1', 9))\n"


@pytest.mark.slow
def test_code_agent_runs_sandboxed_python_and_recommends(compass_db):
    conn = connect_readonly(compass_db)
    task = next(t for t in load_tasks() if t.level == 1)
    truth = solve(conn, task)
    final = json.dumps({"message": "Done.", "recommendation": truth.optimal_plan})

    def respond(body):
        tools_seen = sum(m["role"] == "tool" for m in body["messages"])
        if body["messages"][-1]["role"] == "user" and tools_seen == 0:
            return Reply(tool_calls=[tool_call("run_python", {"code": SEARCH}),
                                     tool_call("run_python", {"code": RUNAWAY}),
                                     tool_call("run_python", {"code": ESCAPE}),
                                     tool_call("run_python", '{"code": ')])  # fmt: skip
        return Reply(content=final)

    with FakeOpenAIServer(responder=respond) as server:
        client = OpenAIChatClient(
            "fake-model", base_url=server.base_url, timeout_s=30, max_retries=0
        )
        agent = CodeAgent(client, limits=SandboxLimits(wall_seconds=4, cpu_seconds=2))
        episode = asyncio.run(run_episode(task, agent, TemplateUserBackend(), conn, truth))
    assert episode.termination == "accepted", episode.error
    assert episode.score["optimal"]
    calls = [c for t in episode.turns for c in t.tool_calls]
    search, runaway, escape, malformed = [c for c in calls if c.parent is None][:4]
    assert search.ok and search.result["stdout"].split() == ["SGU", "Friday"]
    assert search.container and runaway.container and not malformed.container
    inner = [(c.name, c.ok) for c in calls if c.parent == search.id]
    assert inner == [("search_airports", True), ("get_weekday", True)]
    assert calls.index(search) < min(calls.index(c) for c in calls if c.parent == search.id)
    assert not runaway.ok and runaway.result["error"] in ("cpu_limit", "timeout")
    assert not escape.ok and escape.result["error"] in ("refused", "exception")
    assert malformed.error_category == "parameter"
