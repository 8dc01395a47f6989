"""Prompted tool calling (the local provider's tool path) and local-model references."""

from __future__ import annotations

import json

import pytest

from travelgym.core.registry import get_suite
from travelgym.llm.base import parse_completion
from travelgym.llm.local_server import resolve_model
from travelgym.llm.prompted_tools import attach_tool_calls, split_tool_calls, to_prompted_messages
from travelgym.runner.specs import SpecError, parse_agent_spec
from travelgym.suites.compass.specs import parse_user_spec

TOOLS = [{"type": "function", "function": {"name": "search_hotel", "description": "Hotels",
          "parameters": {"type": "object", "properties": {"park": {"type": "string"}}}}}]  # fmt: skip


def test_blocks_become_openai_tool_calls_and_bad_json_is_kept_for_the_tool_layer():
    text = ('Let me look.\n<tool_call>\n{"name": "search_hotel", "arguments": {"park": "Zion"}}\n'
            '</tool_call>\n<tool_call>{"name": "search_hotel", "arguments": {"park": "Arches"}}'
            '</tool_call><tool_call>{not json</tool_call>')  # fmt: skip
    rest, calls = split_tool_calls(text)
    assert rest == "Let me look."
    assert [c["function"]["name"] for c in calls] == ["search_hotel", "search_hotel", ""]
    assert json.loads(calls[0]["function"]["arguments"]) == {"park": "Zion"}
    assert json.loads(calls[1]["function"]["arguments"]) == {"park": "Arches"}
    assert calls[2]["function"]["arguments"] == "{not json"  # an unknown-tool error, not lost
    assert len({c["id"] for c in calls}) == 3


def test_unterminated_block_at_the_end_of_a_reply_is_a_call():
    _, calls = split_tool_calls('<tool_call>{"name": "search_hotel", "arguments": {}}')
    assert calls[0]["function"]["name"] == "search_hotel"
    assert split_tool_calls("just text") == ("just text", [])


def test_completion_gets_tool_calls_that_the_shared_parser_reads():
    completion = {"choices": [{"message": {"role": "assistant", "content":
                  '<tool_call>{"name": "search_hotel", "arguments": {"park": "Zion"}}</tool_call>'},
                  "finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 4}}  # fmt: skip
    response = parse_completion(attach_tool_calls(completion))
    assert response.message.content is None
    assert [(c.name, json.loads(c.arguments)) for c in response.message.tool_calls] == [
        ("search_hotel", {"park": "Zion"})
    ]


def test_tool_history_is_rendered_as_text_turns():
    messages = [
        {"role": "system", "content": "Plan trips."},
        {"role": "user", "content": "Find a hotel."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "search_hotel", "arguments": '{"park": "Zion"}'}},
            {"id": "b", "type": "function", "function": {"name": "search_hotel", "arguments": "{bad"}}]},
        {"role": "tool", "tool_call_id": "a", "content": '{"hotels": []}'},
        {"role": "tool", "tool_call_id": "b", "content": '{"error": "bad json"}'},
    ]  # fmt: skip
    out = to_prompted_messages(messages, TOOLS)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert out[0]["content"].startswith("Plan trips.") and '"search_hotel"' in out[0]["content"]
    assert out[2]["content"].count("<tool_call>") == 2 and '"{bad"' in out[2]["content"]
    assert out[3]["content"].count("<tool_response>") == 2 and '{"hotels": []}' in out[3]["content"]
    assert all(set(m) == {"role", "content"} for m in out)


def test_local_model_references(tmp_path):
    with pytest.raises(ValueError, match="local:smollm2"):
        resolve_model("")
    with pytest.raises(ValueError, match="local:PATH.gguf"):
        resolve_model("model.bin")
    with pytest.raises(ValueError, match="not found"):
        resolve_model(str(tmp_path / "missing.gguf"))
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    assert resolve_model(str(gguf)).alias == "tiny"


def test_local_specs():
    assert parse_agent_spec(get_suite("compass"), "local:smollm2").text == "local:smollm2"
    assert parse_agent_spec(get_suite("compass"), "local:smollm2").dirname == "local-smollm2"
    assert parse_user_spec("local:smollm2") == ("llm", "local:smollm2")
    assert parse_agent_spec(get_suite("behavior2trip"), "local:smollm2").text == "local:smollm2"
    with pytest.raises(SpecError, match="local:smollm2"):
        parse_agent_spec(get_suite("compass"), "local:")
    with pytest.raises(SpecError):
        parse_user_spec("local:")
