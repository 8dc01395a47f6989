"""InspectChatClient (``inspect:NAME``): travelgym's chat messages and tool schemas become
inspect's and inspect's model output comes back as the reply the agents read; outside an
inspect_ai eval a call is a clear error, not a crash."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.training.support import need_extra
from travelgym.core.registry import all_suites
from travelgym.llm.base import parse_completion
from travelgym.llm.factory import make_client
from travelgym.llm.protocol import ChatMessage, LLMError


@pytest.fixture(autouse=True)
def _inspect_installed():
    need_extra("inspect", ("inspect_ai",))


CHAT = [
    {"role": "system", "content": "plan trips"},
    {"role": "user", "content": "a trip to Yosemite"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "search_airports", "arguments": '{"park_name": "Yosemite"}'}},
        {"id": "c2", "type": "function",
         "function": {"name": "get_weekday", "arguments": '{"date_str": "2025-08-0'}},
    ]},
    {"role": "tool", "tool_call_id": "c1", "content": '{"airports": ["FAT"]}'},
    {"role": "tool", "tool_call_id": "c2", "content": '{"error": "bad JSON"}'},
    {"role": "assistant", "content": [{"type": "text", "text": "Fly "}, {"type": "text", "text": "to FAT."}]},
]  # fmt: skip


def test_messages_become_inspect_messages_with_their_tool_calls():
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool

    from travelgym.llm.inspect_client import to_inspect_messages

    out = to_inspect_messages(CHAT)
    assert [m.role for m in out] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    call, broken = out[2].tool_calls
    assert isinstance(out[2], ChatMessageAssistant) and out[2].text == ""
    assert (call.id, call.function, call.arguments, call.parse_error) == (
        "c1", "search_airports", {"park_name": "Yosemite"}, None)  # fmt: skip
    assert broken.arguments == {} and '"date_str": "2025-08-0' in broken.parse_error
    tool = out[3]
    assert isinstance(tool, ChatMessageTool) and tool.function == "search_airports"
    assert tool.tool_call_id == "c1" and "FAT" in tool.text
    assert out[4].function == "get_weekday" and out[5].text == "Fly to FAT."


def test_every_suites_tool_schemas_become_tool_infos():
    from travelgym.llm.inspect_client import to_tool_info

    for suite in all_suites():
        for schema in suite.tool_registry().openai_schemas():
            info = to_tool_info(schema)
            fn = schema["function"]
            assert info.name == fn["name"] and info.description == fn.get("description", "")
            assert set(info.parameters.properties) == set(fn["parameters"].get("properties", {}))
            assert info.parameters.required == fn["parameters"].get("required", [])


def test_model_output_comes_back_as_the_reply_agents_read():
    from inspect_ai.model import ChatMessageAssistant, ModelOutput, ModelUsage
    from inspect_ai.tool import ToolCall as InspectCall

    from travelgym.llm.inspect_client import completion_of

    message = ChatMessageAssistant(content="checking", tool_calls=[
        InspectCall(id="t1", function="search_hotels", arguments={"park": "yose", "page": 2}),
        InspectCall(id="t2", function="get_weekday", arguments={}, parse_error="not JSON: {x"),
    ])  # fmt: skip
    output = ModelOutput.from_message(message, stop_reason="tool_calls")
    output.usage = ModelUsage(input_tokens=90, output_tokens=12, total_tokens=112,
                              input_tokens_cache_read=10)  # fmt: skip
    reply = parse_completion(completion_of(output), "m")
    assert reply.message.content == "checking" and reply.finish_reason == "tool_calls"
    first, second = reply.message.tool_calls
    assert (first.id, first.name) == ("t1", "search_hotels")
    assert json.loads(first.arguments) == {"park": "yose", "page": 2}
    assert second.arguments == "not JSON: {x"  # the tool layer reports it as malformed
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (100, 12)
    with pytest.raises(LLMError, match="bad_response"):
        parse_completion(completion_of(ModelOutput(model="m", choices=[], error="refused")))


def test_outside_an_inspect_eval_a_call_is_a_clear_error():
    client = make_client("inspect:mockllm/model")
    assert client.model == "mockllm/model"
    messages = [ChatMessage(role="user", content="hi")]
    with pytest.raises(LLMError) as caught:
        asyncio.run(client.complete(messages))
    assert caught.value.category == "bad_request"
    assert "inspect eval travelgym/SUITE" in str(caught.value)
    assert client.stats.failed_calls == 1


def test_parameters_inspect_cannot_take_are_refused():
    from inspect_ai.model import GenerateConfig

    from travelgym.llm.inspect_client import CONFIG_FIELDS

    client = make_client("inspect:mockllm/model", default_params={"logit_bias": {"1": 2}})
    with pytest.raises(LLMError, match="bad_request: inspect models take no logit_bias"):
        asyncio.run(client.complete([ChatMessage(role="user", content="hi")]))
    assert set(CONFIG_FIELDS.values()) <= set(GenerateConfig.model_fields)


def test_inspect_failures_map_to_travelgym_categories():
    from inspect_ai.util import LimitExceededError
    from tenacity import Future, RetryError

    client = make_client("inspect:mockllm/model")

    class APIStatusError(Exception):
        status_code = 429

    cases = {
        LimitExceededError("token", value=10, limit=5): "budget",
        TimeoutError("slow"): "timeout",
        ConnectionError("down"): "connection",
        APIStatusError("slow down"): "rate_limit",
        RuntimeError("provider exploded"): "bad_response",
    }
    # inspect gives up on a call that kept failing with the last attempt's error inside
    gave_up = Future(attempt_number=2)
    gave_up.set_exception(ConnectionError("still down"))
    cases[RetryError(gave_up)] = "connection"
    for exc, category in cases.items():
        assert client._classify(exc).category == category, exc


def test_a_call_inspect_could_not_parse_keeps_the_models_own_text():
    from travelgym.llm.inspect_client import unparsed_arguments

    raw = '{"date_str": "2025-08-0'
    worded = (f"Error parsing the following tool call arguments:\n\n{raw}\n\n"
              "Error details: Unterminated string starting at: line 1 column 14 (char 13)")  # fmt: skip
    assert unparsed_arguments(worded) == raw
    assert unparsed_arguments("not JSON: {x") == "not JSON: {x"  # another wording: as it is
