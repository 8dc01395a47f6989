"""The MCP stdio transport under bad input: invalid Unicode, undecodable lines, stdin closing
with requests in flight. Pure parts in-process; the behaviour through real server processes
(the toy server of ``test_mcp_server.py`` and ``travelgym serve-mcp``)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import anyio
import pytest

from tests.fakes.mcp_check import raw_session, tool_call
from travelgym.toolkit.mcp_stdio import (
    PendingRequests,
    parse_line,
    read_line,
    replace_lone_surrogates,
)

TOY_SERVER = [str(Path(__file__).with_name("test_mcp_server.py").resolve())]
PARSE_ERROR, INVALID_REQUEST = -32700, -32600


# ------------------------------------------------------------------------------ pure parts


def test_lone_surrogates_are_replaced_in_strings_and_keys_and_pairs_survive():
    value = json.loads('{"a\\udc00": ["x\\ud83d", {"k": "\\ud83d\\ude00 ok"}], "n": 1}')
    cleaned, changed = replace_lone_surrogates(value)
    assert changed
    assert cleaned == {"a\ufffd": ["x\ufffd", {"k": "\U0001f600 ok"}], "n": 1}
    assert replace_lone_surrogates({"k": ["plain", 2, None]}) == ({"k": ["plain", 2, None]}, False)


def test_parse_line_flags_invalid_utf8_and_surrogates_and_keeps_the_request():
    parsed = parse_line(b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"t":"a\xff\\ud83d"}}')
    assert parsed.reply is None and parsed.replaced
    assert parsed.message.id == 7 and parsed.message.params == {"t": "a\ufffd\ufffd"}
    clean = parse_line(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"t":"\xef\xbf\xbd"}}')
    assert clean.message.params == {"t": "\ufffd"} and not clean.replaced  # a real U+FFFD
    assert parse_line(b"   \n") is None


def short_id(value: object) -> str | None:
    """Test ids of a readable length for long byte strings."""
    return repr(value)[:40] if isinstance(value, bytes) else None


@pytest.mark.parametrize(
    ("line", "code", "request_id"),
    [
        (b"not json at all", PARSE_ERROR, None),
        (b'{"jsonrpc": "2.0", "id": 3, "method": ', PARSE_ERROR, None),
        (b"[" * 100_000 + b"]" * 100_000, PARSE_ERROR, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"n":' + b"9" * 10_000 + b"}}",
         PARSE_ERROR, None),
        (b"[]", INVALID_REQUEST, None),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', INVALID_REQUEST, None),
        (b'"ping"', INVALID_REQUEST, None),
        (b'{"jsonrpc":"1.0","id":5,"method":"ping"}', INVALID_REQUEST, 5),
        (b'{"jsonrpc":"2.0","id":"abc","method":12}', INVALID_REQUEST, "abc"),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST, None),
    ],
    ids=short_id,
)  # fmt: skip
def test_parse_line_answers_what_it_cannot_pass_on(line, code, request_id):
    parsed = parse_line(line)
    assert parsed.message is None
    assert parsed.reply.error.code == code and parsed.reply.id == request_id
    assert len(parsed.reply.error.message) < 300  # one readable line, not the whole input


def test_read_line_skips_an_oversized_line_and_goes_on():
    stream = io.BytesIO(b"short\n" + b"x" * 100 + b"\nnext\nlast")
    assert read_line(stream, limit=10) == (b"short\n", False)
    assert read_line(stream, limit=10) == (b"", True)
    assert read_line(stream, limit=10) == (b"next\n", False)
    assert read_line(stream, limit=10) == (b"last", False)
    assert read_line(stream, limit=10) is None


def test_pending_requests_wait_for_every_answer():
    async def scenario() -> list[str]:
        pending, log = PendingRequests(), []
        for request_id in (1, "1", 2, 2):  # "1" and 1 correlate, as in the SDK; 2 is repeated
            pending.add(request_id)
        assert len(pending) == 4

        async def answer() -> None:
            for request_id in (1, 1, 2, 2):
                await anyio.sleep(0.01)
                log.append(f"answered {request_id}")
                pending.settle(request_id)

        async with anyio.create_task_group() as tg:
            tg.start_soon(answer)
            await pending.wait_empty()
            log.append("drained")
        return log

    assert anyio.run(scenario)[-1] == "drained"


# -------------------------------------------------------------------- real server processes


def _by_id(responses: list[dict]) -> dict:
    ids = [r.get("id") for r in responses if r.get("id") is not None]
    assert len(ids) == len(set(map(str, ids))), f"a request answered twice: {ids}"
    return {r["id"]: r for r in responses if r.get("id") is not None}


def test_toy_server_answers_invalid_unicode_garbage_and_everything_after_stdin_closes():
    calls = 60
    lines = [
        tool_call(1, "split_words", {"text": "a \ud83d b"}),
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"split_words",'
        b'"arguments":{"text":"x \xff\xfe y"}}}',
        b"this is not json",
        b"[" * 100_000,
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"split_\\udc00words",'
        b'"arguments":{"text":"z"}}}',
        b'{"id": 4}',
        *[tool_call(100 + i, "increment", {"by": 1}) for i in range(calls)],
    ]
    responses, stderr = raw_session(TOY_SERVER, lines)
    answers = _by_id(responses)
    assert json.loads(answers[1]["result"]["content"][0]["text"]) == ["a", "\ufffd", "b"]
    assert json.loads(answers[2]["result"]["content"][0]["text"]) == ["x", "\ufffd\ufffd", "y"]
    assert answers[3]["result"]["isError"]  # an unknown tool name (with U+FFFD in it)
    assert "split_\ufffdwords" in answers[3]["result"]["content"][0]["text"]
    assert answers[4]["error"]["code"] == INVALID_REQUEST
    anonymous = [r["error"]["code"] for r in responses if r.get("id") is None]
    assert anonymous == [PARSE_ERROR, PARSE_ERROR]
    # every call written before stdin closed got its real answer, in the session's order
    counts = [json.loads(answers[100 + i]["result"]["content"][0]["text"])["count"]
              for i in range(calls)]  # fmt: skip
    assert sorted(counts) == list(range(1, calls + 1))
    assert "invalid Unicode replaced with U+FFFD" in stderr


def test_serve_mcp_compass_answers_a_lone_surrogate_and_every_request(compass_db):
    lines = [
        tool_call(1, "notebook", {"action": "write", "input_data": "fly \ud83d into FAT"}),
        tool_call(2, "search_location_name", {"query": "yos\udc00emite"}),
        b"{broken",
        *[
            tool_call(10 + i, "get_weekday", {"date_str": f"2025-08-{i + 1:02d}"})
            for i in range(25)
        ],  # fmt: skip
        tool_call(3, "notebook", {"action": "list_all"}),
    ]
    args = ["-m", "travelgym.cli", "serve-mcp", "compass", "--db", str(compass_db)]
    responses, _ = raw_session(args, lines)
    answers = _by_id(responses)
    assert set(answers) == {"init", 1, 2, 3, *range(10, 35)}
    assert all("result" in answers[k] for k in answers)
    assert "fly \ufffd into FAT" in answers[3]["result"]["content"][0]["text"]
    assert [r["error"]["code"] for r in responses if r.get("id") is None] == [PARSE_ERROR]


def test_serve_mcp_behavior2trip_answers_a_lone_surrogate_and_every_request(trips_db):
    lines = [
        tool_call(1, "AccommodationSearch", {"city": "Bei\ud83djing"}),
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"WeatherSearch",'
        b'"arguments":{"city":"\xc3\x28"}}}',
        *[tool_call(10 + i, "AttractionSearch", {"city": "Hangzhou", "n": 1}) for i in range(20)],
    ]
    args = ["-m", "travelgym.cli", "serve-mcp", "behavior2trip", "--db", str(trips_db)]
    responses, stderr = raw_session(args, lines)
    answers = _by_id(responses)
    assert set(answers) == {"init", 1, 2, *range(10, 30)}
    assert all("result" in answers[k] for k in answers)
    assert not any(answers[10 + i]["result"]["isError"] for i in range(20))
    assert stderr.count("invalid Unicode replaced") == 2
