"""The same searches made natively and through ``run_python`` measure the same in ``analyze``.

A tool-calling agent and a code agent make the same tool calls (some valid, some with parameter
and content errors) and recommend the same plan; search effort, search yield and the Table 4
tool-error counts and rates must be equal, because calls made from code are recorded as calls.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, Reply, tool_call
from travelgym.cli import main

CALLS = [
    ("search_hotel", {"location": "Zion", "start_date": "2025-08-10", "end_date": "2025-08-12",
                      "num_guests": 2}),
    ("search_hotel", {"location": "Zion", "start_date": "2025-08-10", "end_date": "2025-08-12",
                      "num_guests": 2}),  # the same signature again: effort counts it once
    ("get_weekday", {"date_str": "2025-08-15"}),
    ("get_weekday", {"date_str": "not a date"}),  # content error
    ("search_hotel", {"location": "Zion"}),  # parameter error: missing dates
    ("search_airports", {"park_name": "Atlantis"}),  # content error: no such park
    ("search_airports", {"park_name": "Zion", "bogus": 1}),  # parameter error: extra argument
]  # fmt: skip
FINAL = json.dumps({"message": "Done.", "recommendation": {"hotel": None}})


def _native(body):
    if not any(m["role"] == "tool" for m in body["messages"]):
        return Reply(tool_calls=[tool_call(name, args) for name, args in CALLS])
    return Reply(FINAL)


def _code(body):
    if not any(m["role"] == "tool" for m in body["messages"]):
        lines = ["import tools"] + [f"tools.{n}(**{a!r})" for n, a in CALLS]
        return Reply(tool_calls=[tool_call("run_python", {"code": "\n".join(lines)})])
    return Reply(FINAL)


@pytest.fixture()
def two_runs(compass_db, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    data_dir = compass_db.parent.parent
    dirs = {}
    for kind, responder in (("llm", _native), ("code", _code)):
        with FakeOpenAIServer(responder=responder) as server:
            result = CliRunner().invoke(main, [
                "run", "compass", "--agent", f"{kind}:fake-model", "--base-url", server.base_url,
                "--tasks", "compass-001", "--max-turns", "2", "--out", str(tmp_path / kind),
                "--data-dir", str(data_dir), "--no-progress"])  # fmt: skip
        assert result.exit_code == 0, result.output
        dirs[kind] = tmp_path / kind / f"{kind}-fake-model"
    return dirs


def test_native_and_code_searches_measure_the_same(two_runs):
    result = CliRunner().invoke(main, ["analyze", str(two_runs["llm"]), str(two_runs["code"]),
                                       "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    runs = json.loads(result.output)["runs"]
    native, code = runs["llm:fake-model"], runs["code:fake-model"]
    assert native["tool_errors"] == code["tool_errors"]
    assert native["tool_errors"]["calls"] == len(CALLS)
    assert native["tool_errors"]["counts"]["parameter"] == 2
    assert native["tool_errors"]["counts"]["content"] == 2
    assert native["search"]["effort"] == code["search"]["effort"]
    assert native["search"]["yield"] == code["search"]["yield"]
    assert native["search"]["effort"]["mean"] == 2  # unique ok signatures
    assert native["search"]["yield"]["mean"] > 0
