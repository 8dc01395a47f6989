"""The LLM backend of the quality control end to end through ``travelgym quality assess`` and
``apply`` against the local OpenAI-compatible test server: a reply wrapped in prose is read, a
malformed one is retried, one malformed twice and a failed call are recorded as errors (never a
crash), a ``correct_preference`` reply's preferences are applied with the witness re-scored."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, HTTPError, Reply
from travelgym.cli import main
from travelgym.datafiles import read_manifest
from travelgym.suites.behavior2trip.quality_llm import parse_reply

GOOD = {"scores": {"completeness": 1, "clarity": 1, "constraints": 1},
        "reasons": {"completeness": "clicks to bookings", "clarity": "consistent",
                    "constraints": "meets all"}, "operation": "no_action"}  # fmt: skip


@pytest.fixture(scope="module")
def data_dir(trips_database):
    return str(trips_database.path.parent.parent)


def _stated(prompt: str) -> dict:
    block = prompt.split("# Stated preferences\n", 1)[1].split("\n", 1)[0]
    return json.loads(block)


@pytest.mark.slow
def test_llm_backend_end_to_end(data_dir, tmp_path):
    replies = iter([
        lambda body: Reply("Here is my review: " + json.dumps(GOOD)),  # 1: prose around JSON
        lambda body: Reply("The record looks fine to me."),  # 2: malformed, retried ...
        lambda body: Reply(json.dumps({  # ... then a correction (the stated preferences)
            "scores": {"completeness": 1, "clarity": 0, "constraints": 1},
            "reasons": {"clarity": "a cuisine is never booked"},
            "operation": "correct preference",
            "corrected_preferences": _stated(body["messages"][0]["content"])})),
        lambda body: Reply(json.dumps({**GOOD, "scores": {**GOOD["scores"], "clarity": 2}})),
        lambda body: Reply(json.dumps({**GOOD, "operation": "fix_everything"})),  # 3: error
        lambda body: HTTPError(400, "bad request"),  # 4: a failed call
    ])  # fmt: skip
    qc = tmp_path / "qc.jsonl"
    with FakeOpenAIServer(responder=lambda body: next(replies)(body)) as server:
        done = CliRunner().invoke(main, [
            "quality", "assess", "--backend", "qc-model", "--base-url", server.base_url,
            "--split", "test", "--limit", "4", "--concurrency", "1", "--out", str(qc),
            "--data-dir", data_dir, "--json"])  # fmt: skip
        requests = list(server.requests)
    assert done.exit_code == 0, done.output
    assert len(requests) == 6 and {r["model"] for r in requests} == {"qc-model"}
    prompt = requests[0]["messages"][0]["content"]
    assert "Operation codes" in prompt and "# Trajectory" in prompt and "witness" in prompt
    records = [json.loads(line) for line in qc.read_text().splitlines()]
    assert [r["operation"] for r in records] == ["no_action", "correct_preference", None, None]
    assert records[0]["clarity"]["reason"] == "consistent"
    assert "malformed QC reply: unknown operation code" in records[2]["error"]
    assert records[3]["error"].startswith("QC call failed")
    meta = read_manifest(qc)
    assert meta["backend"] == "llm:qc-model" and meta["count"] == 4
    assert meta["counts"] == {"no_action": 1, "correct_preference": 1, "mark_incomplete": 0,
                              "delete": 0, "error": 2}  # fmt: skip

    out = tmp_path / "filtered"
    applied = CliRunner().invoke(main, ["quality", "apply", str(qc), "--out", str(out),
                                        "--data-dir", data_dir, "--json"])  # fmt: skip
    assert applied.exit_code == 0, applied.output
    result = json.loads(applied.output)["splits"]["test"]
    assert result["input"] == 4 and result["kept"] == 4 and result["corrected"] == 1
    assert result["counts"]["unjudged"] == 2
    report = json.loads((out / "report.json").read_text())["test"]
    assert report["corrected"][0]["witness"] == "the witness is unchanged"
    target = out / "instances-small-test-llm-qc-model.jsonl"
    assert read_manifest(target)["qc_backend"] == "llm:qc-model"
    assert len(target.read_text().splitlines()) == 4


@pytest.mark.parametrize(
    "text, message",
    [("no json here", "not a JSON object"),
     ('{"scores": {"completeness": 1, "clarity": 1}, "operation": "delete"}', "constraints"),
     ('{"scores": {"completeness": 1, "clarity": "yes", "constraints": 1}, '
      '"operation": "delete"}', "0 or 1"),
     (json.dumps({**GOOD, "operation": "correct_preference"}), "without corrected"),
     (json.dumps({**GOOD, "operation": "purge"}), "unknown operation")],
)  # fmt: skip
def test_malformed_replies_are_refused(text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_reply(text)


def test_bad_input_is_one_line(tmp_path, data_dir):
    runner = CliRunner()
    missing = runner.invoke(main, ["quality", "apply", str(tmp_path / "nope.jsonl"), "--out",
                                   str(tmp_path / "o")])  # fmt: skip
    assert missing.exit_code == 2 and "Traceback" not in missing.output
    bare = tmp_path / "qc.jsonl"
    bare.write_text("{}\n")
    result = runner.invoke(main, ["quality", "apply", str(bare), "--out", str(tmp_path / "o"),
                                  "--data-dir", data_dir])  # fmt: skip
    assert result.exit_code == 1 and "no manifest beside it" in result.output
    blank = runner.invoke(main, ["quality", "assess", "--backend", " ", "--out", str(bare)])
    assert blank.exit_code == 2 and "--backend" in blank.output
