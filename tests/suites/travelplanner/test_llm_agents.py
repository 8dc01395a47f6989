"""The LLM agents on the shared loops (native tool calls, ReAct, the B2T format) in both modes,
driven by a scripted fake model: one tool call (two-stage), then the scripted baseline's plan."""

from __future__ import annotations

import asyncio
import json

import pytest

from travelgym.llm.protocol import ChatMessage, ChatResponse, ToolCall
from travelgym.suites.travelplanner.agents.llm import B2TPlanner, ReactPlanner, ToolCallingAgent
from travelgym.suites.travelplanner.agents.planner import build_plan
from travelgym.suites.travelplanner.agents.scripted import reference_cities
from travelgym.suites.travelplanner.dataset import read_dataset
from travelgym.suites.travelplanner.episode import run_planner_episode
from travelgym.suites.travelplanner.plans import plan_json
from travelgym.suites.travelplanner.source import reference_sandbox

SEARCH = {"name": "accommodation_search", "arguments": {"city": "Rockford"}}


class FakeModel:
    """Replies in turn from ``replies`` (text, or a ToolCall list for native calls)."""

    model = "fake"

    def __init__(self, replies: list) -> None:
        self.replies, self.seen = list(replies), []

    async def complete(self, messages, tools=None, **params) -> ChatResponse:
        self.seen.append((messages, tools))
        reply = self.replies.pop(0)
        if isinstance(reply, list):
            return ChatResponse(message=ChatMessage(role="assistant", tool_calls=reply))
        return ChatResponse(message=ChatMessage(role="assistant", content=reply))


def replies(kind: str, mode: str, plan: str) -> list:
    call = json.dumps(SEARCH)
    answers = {"tool": f"```json\n{plan}\n```", "react": f"Thought: done\nAction: Finish[{plan}]",
               "b2t": f"<think>done</think><answer>{plan}</answer>"}  # fmt: skip
    if mode == "sole-planning":
        return [plan if kind == "react" else answers[kind]]
    first = {"tool": [ToolCall(id="c1", name=SEARCH["name"], arguments=json.dumps(
                 SEARCH["arguments"]))],
             "react": f"Thought: rooms first\nAction: {call}",
             "b2t": f"<tool_call>{call}</tool_call>"}[kind]  # fmt: skip
    return [first, answers[kind]]


@pytest.mark.parametrize("mode", ["sole-planning", "two-stage"])
@pytest.mark.parametrize(("kind", "cls"), [("tool", ToolCallingAgent), ("react", ReactPlanner),
                                           ("b2t", B2TPlanner)])  # fmt: skip
def test_llm_agents_deliver_through_the_shared_loops(tp_suite_data, kind, cls, mode):
    dataset, _ = tp_suite_data
    query = read_dataset(dataset, "validation")["validation"][0]
    sandbox = reference_sandbox(query)
    plan = plan_json(build_plan(query, sandbox, reference_cities(sandbox, query.org)))
    model = FakeModel(replies(kind, mode, plan))
    episode = asyncio.run(run_planner_episode(query, cls(model), mode, sandbox, sandbox))
    assert episode.termination == "answered", episode.error
    assert episode.score["delivered"] and episode.score["final"]
    assert episode.llm_calls == (1 if mode == "sole-planning" else 2)
    prompt = model.seen[0][0]
    assert ("Given information" in prompt[1].content) == (mode == "sole-planning")
    if mode == "two-stage":
        assert episode.tool_calls == 1 and episode.invalid_actions == 0
        assert episode.steps[0].tool_calls[0].name == "accommodation_search"
    if kind == "tool":
        assert (model.seen[0][1] is None) == (mode == "sole-planning")


def test_a_tool_call_in_sole_planning_is_an_invalid_action(tp_suite_data):
    dataset, _ = tp_suite_data
    query = read_dataset(dataset, "validation")["validation"][0]
    sandbox = reference_sandbox(query)
    model = FakeModel([f"<tool_call>{json.dumps(SEARCH)}</tool_call>", "<answer>nothing</answer>"])
    episode = asyncio.run(run_planner_episode(query, B2TPlanner(model), "sole-planning",
                                              sandbox, sandbox))  # fmt: skip
    assert episode.invalid_actions == 1 and episode.tool_calls == 0
    assert episode.score["delivered"] is False
