"""Where bubblewrap cannot run: a clear refusal, or an explicit and recorded --unsafe-sandbox;
and the integrity log that marks a run whose database changed as tampered."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, Reply, tool_call
from travelgym.cli import main
from travelgym.runner.integrity import INTEGRITY, IntegritySession, tampering
from travelgym.sandbox import SandboxUnavailable, run_code
from travelgym.suites.behavior2trip.tools import TripsContext, trips_registry


def test_refusal_names_the_requirement(no_bwrap):
    with pytest.raises(SandboxUnavailable) as caught:
        run_code("print(1)")
    message = str(caught.value)
    assert "bubblewrap" in message and "bwrap is not on the PATH" in message
    assert "--unsafe-sandbox" in message and "\n" not in message


def test_python_tool_without_a_sandbox_is_an_infra_error(no_bwrap, trips_db):
    """No result the model could act on: the error leaves the tool layer and ends the episode
    as an infra error (core.outcomes), naming the requirement."""
    from travelgym.core.outcomes import InfraError, classify

    context = TripsContext.from_path(trips_db)
    with pytest.raises(InfraError) as caught:
        trips_registry().call("Python", {"code": "print(1)"}, context)
    assert "bubblewrap" in str(caught.value)
    assert classify(caught.value) == ("infra_error", "sandbox")


def test_a_code_agent_run_refuses_before_any_episode(no_bwrap, compass_db, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    out = tmp_path / "runs"
    result = CliRunner().invoke(main, [
        "run", "compass", "--agent", "code:fake-model", "--base-url", "http://127.0.0.1:9",
        "--limit", "1", "--out", str(out), "--data-dir", str(compass_db.parent.parent),
        "--no-progress"])  # fmt: skip
    assert result.exit_code == 1
    assert "bubblewrap" in result.output and "Traceback" not in result.output
    assert not (out / "code-fake-model" / "episodes.jsonl").exists()


def test_unsafe_sandbox_is_recorded_and_flagged(no_bwrap, compass_db, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    data_dir = compass_db.parent.parent

    def respond(body):
        if not any(m["role"] == "tool" for m in body["messages"]):
            return Reply(tool_calls=[tool_call("run_python", {"code": "print(6 * 7)"})])
        return Reply(json.dumps({"message": "ok", "recommendation": {"hotel": None}}))

    out = tmp_path / "runs"
    with FakeOpenAIServer(responder=respond) as server:
        result = CliRunner().invoke(main, [
            "run", "compass", "--agent", "code:fake-model", "--base-url", server.base_url,
            "--tasks", "compass-001", "--max-turns", "2", "--out", str(out),
            "--data-dir", str(data_dir), "--no-progress", "--unsafe-sandbox"])  # fmt: skip
    assert result.exit_code == 0, result.output
    run_dir = out / "code-fake-model"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["sandbox"]["boundary"] == "unsafe"
    assert "bwrap is not on the PATH" in manifest["sandbox"]["reason"]
    episode = json.loads((run_dir / "episodes.jsonl").read_text().splitlines()[0])
    container = next(c for t in episode["turns"] for c in t["tool_calls"] if c.get("container"))
    assert container["result"]["stdout"] == "42\n"
    assert "--unsafe-sandbox" in tampering(run_dir)
    scored = CliRunner().invoke(main, ["score", str(run_dir), "--data-dir", str(data_dir),
                                       "--json"])  # fmt: skip
    assert scored.exit_code == 0, scored.output
    assert "--unsafe-sandbox" in json.loads(scored.stdout)["tampered"]


def test_serve_mcp_warns_at_start_up(no_bwrap, trips_db):
    result = CliRunner().invoke(main, ["serve-mcp", "behavior2trip", "--db", str(trips_db)],
                                input="")  # fmt: skip
    assert "the Python tool will refuse every call" in result.output
    unsafe = CliRunner().invoke(main, ["serve-mcp", "behavior2trip", "--db", str(trips_db),
                                       "--unsafe-sandbox"], input="")  # fmt: skip
    assert "WITHOUT a sandbox" in unsafe.output


def test_a_database_changed_during_a_session_is_tampering(tmp_path):
    db = tmp_path / "tools.sqlite"
    db.write_bytes(b"SQLite format 3\x00" + bytes(1000))
    session = IntegritySession.start(tmp_path, db, {"boundary": "bubblewrap"})
    with open(db, "r+b") as fh:  # one byte anywhere in the file: a float, a trigger, a view
        fh.seek(500)
        fh.write(b"\x01")
    session.finish()
    reason = tampering(tmp_path)
    assert reason and "changed during session 1" in reason


def test_a_database_changed_between_sessions_is_tampering(tmp_path):
    db = tmp_path / "tools.sqlite"
    db.write_bytes(bytes(100))
    IntegritySession.start(tmp_path, db, {"boundary": "bubblewrap"}).finish()
    assert tampering(tmp_path) is None
    db.write_bytes(bytes(101))
    IntegritySession.start(tmp_path, db, {"boundary": "bubblewrap"}).finish()
    assert "between sessions 1 and 2" in tampering(tmp_path)
    with open(tmp_path / INTEGRITY, "a") as fh:
        fh.write("not json\n")
    assert "line 3 is unreadable" in tampering(tmp_path)


def test_an_untouched_run_is_not_tampered(compass_db, tmp_path):
    out = tmp_path / "runs"
    result = CliRunner().invoke(main, [
        "run", "compass", "--agent", "scripted:greedy", "--limit", "2", "--out", str(out),
        "--data-dir", str(compass_db.parent.parent), "--no-progress"])  # fmt: skip
    assert result.exit_code == 0, result.output
    run_dir = out / "scripted-greedy"
    (line,) = [
        x for x in (run_dir / INTEGRITY).read_text().splitlines() if '"chain"' not in x
    ]  # the session line; the digest chain's entries aside
    entry = json.loads(line)
    assert entry["sha256_start"] == entry["sha256_end"] and len(entry["sha256_start"]) == 64
    assert tampering(run_dir) is None
