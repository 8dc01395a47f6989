"""Invalid Unicode in COMPASS tool calls (from the LLM agent, the code agent or a training
environment): the tool runs on repaired text, the call is flagged, the record can be written,
and the run's Episode counts the repairs."""

from __future__ import annotations

import pytest

from travelgym.db import connect_readonly
from travelgym.suites.compass.env import CompassToolSession


@pytest.fixture(scope="module")
def env(compass_db):
    return CompassToolSession(connect_readonly(compass_db))


@pytest.mark.parametrize(
    "arguments",
    [{"park_name": "\ud83d"}, '{"park_name": "\\ud83d"}', '{"park_name": "\ud83d"}'],
    ids=["object", "json_escape", "raw_text"],
)
def test_surrogate_arguments_are_repaired_and_flagged(env, arguments):
    record = env.call("search_airports", arguments, "c1")
    record.model_dump_json().encode("utf-8")
    assert [(r.kind, r.where, r.count) for r in record.repairs] == [
        ("invalid_unicode", "arguments", 1)
    ]
    assert record.error_category == "content"
    assert "unknown national park '\ufffd'" in record.error_message


def test_surrogate_in_a_tool_name(env):
    record = env.call("search_airports\ud800", {})
    record.model_dump_json().encode("utf-8")
    assert record.name == "search_airports\ufffd" and record.error_category == "tool_name"
    assert [r.where for r in record.repairs] == ["name"]


def test_clean_arguments_are_untouched(env):
    record = env.call("search_airports", '{"park_name": "Zion 🏜"}')
    assert record.repairs == [] and record.arguments == '{"park_name": "Zion 🏜"}'
