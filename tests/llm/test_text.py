"""The Unicode sanitiser at the model boundary (travelgym.llm.text) and its users that are not
clients: error messages, the cache key, tool arguments and whole episodes."""

from __future__ import annotations

import json

import pytest

from travelgym.llm import ChatMessage, LLMError
from travelgym.llm.cache import request_key
from travelgym.llm.text import clean_arguments, clean_text, clean_value, decode_body, serialisable
from travelgym.suites.compass.trajectory import Episode, Turn

LONE_HIGH, LONE_LOW = "\ud83d", "\ude00"


@pytest.mark.parametrize(
    ("text", "fixed", "replaced"),
    [
        ("plain text, café, 北京", "plain text, café, 北京", 0),
        (f"a{LONE_HIGH}b", "a\ufffdb", 1),
        (f"{LONE_LOW}{LONE_HIGH}", "\ufffd\ufffd", 2),  # wrong order: not a pair
        (f"{LONE_HIGH}{LONE_LOW}", "\U0001f600", 0),  # a pair: joined
        (f"\ufffd{LONE_HIGH}", "\ufffd\ufffd", 1),  # U+FFFD already there is not counted
        ("", "", 0),
    ],
)
def test_clean_text(text, fixed, replaced):
    assert clean_text(text) == (fixed, replaced)
    clean_text(text)[0].encode("utf-8")


def test_clean_value_cleans_keys_and_nested_values_and_keeps_clean_values():
    value = {f"k{LONE_HIGH}": [1, {"x": f"v{LONE_LOW}"}, ("t", LONE_HIGH)], "ok": None}
    cleaned, replaced = clean_value(value)
    assert replaced == 3
    assert cleaned == {"k\ufffd": [1, {"x": "v\ufffd"}, ("t", "\ufffd")], "ok": None}
    clean = {"a": ["b", 1.5]}
    assert clean_value(clean)[0] is clean


def test_undecodable_bytes_become_replaced_characters():
    text = decode_body(b"ok \xff \xe2\x82 \xc3\xa9")
    assert clean_text(text) == ("ok \ufffd \ufffd\ufffd é", 3)


@pytest.mark.parametrize(
    ("arguments", "to_run", "replaced"),
    [
        # JSON escapes of a lone surrogate: only parsing reveals them; the tool gets clean data
        ('{"city": "Paris\\ud83d"}', {"city": "Paris\ufffd"}, 1),
        (f'{{"city": "Paris{LONE_HIGH}"}}', '{"city": "Paris\ufffd"}', 1),  # raw in the text
        ({"city": [f"Paris{LONE_LOW}"]}, {"city": ["Paris\ufffd"]}, 1),  # an object
        ('{"city": "\\ud83d\\ude00"}', '{"city": "\\ud83d\\ude00"}', 0),  # an escaped pair
        ('{"city": "\\ud83d', '{"city": "\\ud83d', 0),  # bad JSON: left to the tool layer
    ],
)
def test_clean_arguments(arguments, to_run, replaced):
    run, record, count = clean_arguments(arguments)
    assert (run, count) == (to_run, replaced)
    json.dumps(record, ensure_ascii=False).encode("utf-8")


def test_llm_error_messages_are_clean():
    err = LLMError("server", f"provider said {LONE_HIGH}")
    assert str(err) == "server: provider said \ufffd" and err.category == "server"


def test_cache_key_of_a_request_with_invalid_unicode():
    clean = request_key("m", [ChatMessage(role="user", content="hi")], None, {})
    assert request_key("m", [ChatMessage(role="user", content=f"hi{LONE_HIGH}")], None, {})
    assert clean == request_key("m", [ChatMessage(role="user", content="hi")], None, {})


def test_serialisable_repairs_a_record_that_cannot_be_written():
    episode = Episode(episode_id="t#0", task_id="t", agent="a", user="u", seed=0,
                      turns=[Turn(index=0, role="agent", text=f"x{LONE_HIGH}")],
                      messages=[{"role": "assistant", "content": LONE_LOW}])  # fmt: skip
    with pytest.raises(ValueError):
        episode.model_dump_json()
    fixed, replaced = serialisable(episode)
    assert replaced == 2
    assert fixed.turns[0].text == "x\ufffd" and fixed.messages[0]["content"] == "\ufffd"
    assert serialisable(fixed) == (fixed, 0)
