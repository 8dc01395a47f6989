"""The last-resort guard on what an agent reads for a tool call: every suite's rendering
(native tool messages, the JSON observations of the step and ReAct formats) is a complete JSON
document within the size budget, never a prefix of one."""

from __future__ import annotations

import json

import pytest

from travelgym.agents.observation import observation_json
from travelgym.agents.tool_calling import run_tool_calls, tool_message_content
from travelgym.agents.tool_session import ToolSession
from travelgym.llm.protocol import ChatMessage, ToolCall
from travelgym.suites.behavior2trip.agents.base import MAX_RESULT_CHARS as B2T_CHARS
from travelgym.suites.travelplanner.session import MAX_RESULT_CHARS as TP_CHARS
from travelgym.toolkit import ToolRegistry
from travelgym.toolkit.budget import RESULT_BUDGET_CHARS, fit_json


def listing(count: int, width: int = 40) -> dict:
    """A tool-like document: a header and ``count`` items of about ``width`` characters."""
    return {"query": "q", "total": count,
            "results": [{"id": i, "text": f"{i:05d}" + "é" * width} for i in range(count)]}  # fmt: skip


def test_one_budget_for_every_suite():
    assert B2T_CHARS == TP_CHARS == RESULT_BUDGET_CHARS
    assert tool_message_content.__defaults__[0] == RESULT_BUDGET_CHARS


def test_a_short_payload_is_its_json_with_non_ascii_kept():
    payload = {"city": "Xi'an 西安", "n": 2}
    text = observation_json(payload, 100, "fewer")
    assert text == '{"city": "Xi\'an 西安", "n": 2}' and json.loads(text) == payload
    assert observation_json(["x" * 15], 19, "fewer") == json.dumps(["x" * 15])  # 19 chars: fits


@pytest.mark.parametrize("ensure_ascii", [True, False])
@pytest.mark.parametrize("limit", [700, 1000, 4321, RESULT_BUDGET_CHARS])
def test_a_long_list_keeps_the_whole_items_that_fit_and_says_so(limit, ensure_ascii):
    payload = listing(2000)
    text = fit_json(payload, limit, "ask for fewer", ensure_ascii=ensure_ascii)
    assert len(text) <= limit
    doc = json.loads(text)  # complete: not a prefix
    shown = doc["truncated"]["shown"]
    assert 0 < shown < 2000 and doc["truncated"]["total"] == 2000
    assert doc["truncated"]["field"] == "results" and "ask for fewer" in doc["truncated"]["message"]
    assert doc["results"] == payload["results"][:shown]  # whole items, in order
    assert {k: v for k, v in doc.items() if k not in ("results", "truncated")} == {
        "query": "q", "total": 2000}  # fmt: skip
    # as many as fit: one more item would not
    more = {**payload, "results": payload["results"][: shown + 1], "truncated": doc["truncated"]}
    assert len(json.dumps(more, ensure_ascii=ensure_ascii)) > limit


def test_a_top_level_list_is_shortened_too():
    text = observation_json([{"i": i} for i in range(5000)], 500, "fewer")
    doc = json.loads(text)
    shown = doc["truncated"]["shown"]
    assert len(text) <= 500 and doc["results"] == [{"i": i} for i in range(shown)]


@pytest.mark.parametrize("payload", [
    {"note": "x" * 50_000},  # no list
    {"results": ["y" * 50_000, "z"]},  # not even the first item fits
    "w" * 50_000,
    {"error": {"category": "content", "message": "no hotel named " + "'" * 30_000}},
])  # fmt: skip
def test_what_cannot_be_shortened_is_a_complete_error_naming_its_size(payload):
    text = observation_json(payload, RESULT_BUDGET_CHARS, "narrow it")
    assert len(text) <= RESULT_BUDGET_CHARS
    error = json.loads(text)["error"]
    assert error["category"] == "result_too_large" and error["limit"] == RESULT_BUDGET_CHARS
    assert error["chars"] == len(json.dumps(payload, ensure_ascii=False)) > RESULT_BUDGET_CHARS
    assert "narrow it" in error["message"]


def big(count: int) -> dict:
    """Return many items.

    Args:
        count: how many
    """
    return listing(count)


def test_native_tool_messages_are_complete_json_within_the_budget():
    session = ToolSession(ToolRegistry([big]), None, keep_results=False)
    message = ChatMessage(role="assistant", content=None, tool_calls=[
        ToolCall(id="a", name="big", arguments='{"count": 3}'),
        ToolCall(id="b", name="big", arguments='{"count": 5000}')])  # fmt: skip
    small, large = run_tool_calls(session, message)
    # the session keeps no results, yet the model reads each call's own
    assert json.loads(small.content) == listing(3)
    assert len(large.content) <= RESULT_BUDGET_CHARS and large.content.isascii()
    doc = json.loads(large.content)
    assert doc["results"] == listing(5000)["results"][: doc["truncated"]["shown"]]
    record = session.calls[1]
    assert json.loads(tool_message_content(record, 1000, listing(5000)))["truncated"]["shown"] >= 1
