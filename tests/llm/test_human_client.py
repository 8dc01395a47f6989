"""HumanChatClient: what a person types becomes the model's reply (a message or typed tool
calls); mistakes are answered with one line and read again; only new messages are shown;
``/quit`` and end of input end the episode as a PlayerQuit (an LLMError)."""

from __future__ import annotations

import asyncio
import io
import json

import pytest

from travelgym.llm.factory import make_client
from travelgym.llm.human_client import PLAYER_QUIT, HumanChatClient, PlayerQuit, Terminal
from travelgym.llm.human_input import InputError, parse_line, tools_by_name, typed_value
from travelgym.llm.protocol import ChatMessage, LLMError

TOOLS = [
    {"type": "function", "function": {
        "name": "search_rooms", "description": "Find rooms.\nMore text.",
        "parameters": {"type": "object", "required": ["city", "nights"], "properties": {
            "city": {"type": "string", "description": "Where."},
            "nights": {"type": "integer"},
            "budget": {"anyOf": [{"type": "number"}, {"type": "null"}]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "sort": {"type": "string", "enum": ["price", "rating"]}}}}},
    {"type": "function", "function": {"name": "get_weekday", "parameters": {
        "type": "object", "required": [], "properties": {"date": {"type": "string"}}}}},
]  # fmt: skip
CHAT = [ChatMessage(role="system", content="SYSTEM PROMPT"),
        ChatMessage(role="user", content="I need a room.")]  # fmt: skip


def play(lines: list[str], messages=CHAT, tools=TOOLS, client=None):
    """One completion with ``lines`` typed; (client, response or exception, screen)."""
    out = io.StringIO()
    client = client or HumanChatClient("ann")
    client.terminal = Terminal(io.StringIO("".join(f"{x}\n" for x in lines)), out)
    try:
        result = asyncio.run(client.complete(list(messages), tools=tools))
    except LLMError as exc:
        result = exc
    return client, result, out.getvalue()


def test_the_factory_makes_a_human_client_and_ignores_run_options():
    client = make_client("human:ann", base_url="http://x", budget=object(), default_params={})
    assert isinstance(client, HumanChatClient) and client.model == "human:ann"


def test_a_tool_call_gets_arguments_typed_by_the_schema():
    _, response, screen = play(['search_rooms city=2 nights=3 budget=99.5 tags=["a b"] '
                                'sort=price'])  # fmt: skip
    assert "SYSTEM PROMPT" in screen and "I need a room." in screen
    (call,) = response.message.tool_calls
    assert call.name == "search_rooms" and response.message.content is None
    assert json.loads(call.arguments) == {"city": "2", "nights": 3, "budget": 99.5,
                                          "tags": ["a b"], "sort": "price"}  # fmt: skip
    assert response.finish_reason == "tool_calls" and response.model == "human:ann"


def test_several_calls_json_arguments_and_quoted_values():
    _, response, _ = play(['search_rooms {"city": "Rome; Italy", "nights": 2}; '
                           "get_weekday date='2025-08-01'; get_weekday"])  # fmt: skip
    calls = [(c.name, json.loads(c.arguments)) for c in response.message.tool_calls]
    assert calls == [("search_rooms", {"city": "Rome; Italy", "nights": 2}),
                     ("get_weekday", {"date": "2025-08-01"}), ("get_weekday", {})]  # fmt: skip
    assert len({c.id for c in response.message.tool_calls}) == 3


def test_mistakes_are_one_line_errors_and_the_person_types_again():
    typed = ["searh_rooms city=Rome", 'search_rooms {"city": ', "search_rooms city=Rome",
             "search_rooms Rome", "/nope", "get_weekday date=x"]  # fmt: skip
    _, response, screen = play(typed)
    errors = [line for line in screen.splitlines() if "error: " in line]
    assert len(errors) == 5, screen
    assert "unknown tool 'searh_rooms'" in errors[0]
    assert "bad JSON arguments for search_rooms" in errors[1]
    assert "search_rooms needs nights" in errors[2]
    assert "not key=value" in errors[3] and "unknown command /nope" in errors[4]
    assert [c.name for c in response.message.tool_calls] == ["get_weekday"]


def test_a_message_ends_the_step_and_say_sends_text_that_looks_like_a_call():
    _, response, _ = play(["", '{"message": "Here you go", "plan": null}'])
    assert response.message.content == '{"message": "Here you go", "plan": null}'
    assert not response.message.tool_calls and response.finish_reason == "stop"
    _, response, _ = play(["/say get_weekday date=now"])
    assert response.message.content == "get_weekday date=now"
    _, response, _ = play(["/multi", "line one", "line two", "/end"])
    assert response.message.content == "line one\nline two"


def test_commands_list_tools_and_show_the_system_prompt():
    _, _, screen = play(["/tools", "/tools search_rooms", "/system", "plain message"])
    assert "search_rooms(city: string, nights: integer, budget?: null|number" in screen
    assert "Find rooms." in screen and "More text." in screen  # the full description
    assert "city: string, required. Where." in screen
    assert screen.count("SYSTEM PROMPT") == 2


def test_only_new_messages_are_shown_and_results_are_cut_on_screen():
    client, first, _ = play(["get_weekday"])
    big = json.dumps({"items": [{"n": i, "text": "x" * 50} for i in range(200)]})
    chat = [
        *CHAT,
        first.message,
        ChatMessage(role="tool", tool_call_id="call_1", name="get_weekday", content=big),
    ]
    _, _, screen = play(["/full", "done"], messages=chat, client=client)
    assert "SYSTEM PROMPT" not in screen.split("/full")[0] and "I need a room." not in screen
    assert "--- result of get_weekday ---" in screen and "more characters: /full" in screen
    assert '  {"n": 199' in screen  # /full printed the whole result, one item a line


def test_without_tools_every_line_is_the_message():
    _, response, screen = play(["<tool_call>{}</tool_call> search_rooms city=x"], tools=None)
    assert response.message.content == "<tool_call>{}</tool_call> search_rooms city=x"
    assert "offers no native tool calls" in screen


@pytest.mark.parametrize("typed, how", [(["/quit"], "/quit"), ([], "end of input")])
def test_quit_and_end_of_input_end_the_episode(typed, how):
    _, result, _ = play(typed)
    assert isinstance(result, PlayerQuit) and result.category == PLAYER_QUIT
    assert str(result) == f"{PLAYER_QUIT}: the player ended the episode ({how})"


def test_values_are_typed_as_the_schema_allows():
    assert typed_value("2", {"type": "string"}) == "2"
    assert typed_value("2", {"type": "integer"}) == 2
    assert typed_value("true", {"type": "boolean"}) is True
    assert typed_value("null", {"anyOf": [{"type": "integer"}, {"type": "null"}]}) is None
    assert typed_value("2", {"anyOf": [{"type": "string"}, {"type": "boolean"}]}) == "2"
    assert typed_value('"7"', {"type": "integer"}) == "7"  # quoted: a string, always
    assert typed_value("[1, 2]", {}) == [1, 2] and typed_value("Rome", {}) == "Rome"


def test_lines_that_read_as_sentences_are_messages():
    tools = tools_by_name(TOOLS)
    for line in ("Hello there", "Sure", "OK: booked", "search rooms in Rome please"):
        assert parse_line(line, tools).kind == "message", line
    assert parse_line("get_weekday", tools).kind == "calls"
    with pytest.raises(InputError, match="search_rooms needs city, nights"):
        parse_line("search_rooms", tools)
    for line in ("book_room", "book_room id=1", 'book_room {"id": 1}'):
        with pytest.raises(InputError, match="unknown tool 'book_room'"):
            parse_line(line, tools)
