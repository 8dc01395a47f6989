"""``--cache-dir`` reports what the response cache did: a first run misses every call and
writes the replies, a second run hits every one with no request; both print one line of hits,
misses and bytes and record them in the manifest (``llm_cache``), which the run's digest chain
still vouches for."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer
from tests.runner.test_multi_url_run import responder
from travelgym.cli import main
from travelgym.db import connect_readonly
from travelgym.llm.cache import ResponseCache, format_stats
from travelgym.runner.integrity import verify_run
from travelgym.runner.store import RunStore
from travelgym.suites.compass.solver import solve
from travelgym.suites.compass.tasks import load_tasks

AGENT = "llm:fake-model"
LINE = re.compile(r"^cache: (\d+) hits, (\d+) misses, (.+) read, (.+) written$", re.M)


@pytest.fixture(scope="module")
def setup(compass_db):
    conn = connect_readonly(compass_db)
    task = next(t for t in load_tasks() if t.level == 2)
    return compass_db.parent.parent, task.task_id, solve(conn, task).optimal_plan


def _run(out: Path, cache: Path, setup, url: str) -> tuple[str, dict]:
    data_dir, task_id, _ = setup
    args = ["run", "compass", "--agent", AGENT, "--tasks", task_id, "--trials", "2",
            "--max-turns", "6", "--no-progress", "--out", str(out), "--data-dir", str(data_dir),
            "--base-url", url, "--cache-dir", str(cache)]  # fmt: skip
    ran = CliRunner().invoke(main, args, env={"TRAVELGYM_TIMEOUT_S": "5"})
    assert ran.exit_code == 0, ran.output
    (manifest,) = out.rglob("manifest.json")
    return ran.output, json.loads(manifest.read_text())


def test_a_replayed_run_hits_every_call_and_both_runs_report_it(setup, tmp_path):
    cache = tmp_path / "cache"
    with FakeOpenAIServer(responder=responder(setup[2])) as server:
        first_out, first = _run(tmp_path / "first", cache, setup, server.base_url)
        calls = len(server.requests)
        second_out, second = _run(tmp_path / "second", cache, setup, server.base_url)
        assert len(server.requests) == calls  # the replay sent nothing
    assert calls >= 2
    written = sum(p.stat().st_size for p in cache.rglob("*.json"))
    assert first["llm_cache"] == {"hits": 0, "misses": calls, "bytes_read": 0,
                                  "bytes_written": written}  # fmt: skip
    assert second["llm_cache"] == {"hits": calls, "misses": 0, "bytes_read": written,
                                   "bytes_written": 0}  # fmt: skip
    for output, manifest in ((first_out, first), (second_out, second)):
        assert LINE.findall(output) and format_stats(manifest["llm_cache"]) in output
    assert LINE.search(second_out).groups()[:2] == (str(calls), "0")
    for out in (tmp_path / "first", tmp_path / "second"):
        (run_dir,) = (p.parent for p in out.rglob("manifest.json"))
        assert verify_run(run_dir).status == "verified"


def test_a_run_without_a_cache_records_and_prints_none(setup, tmp_path):
    data_dir, task_id, _ = setup
    args = ["run", "compass", "--agent", "scripted:greedy", "--tasks", task_id, "--no-progress",
            "--out", str(tmp_path / "out"), "--data-dir", str(data_dir)]  # fmt: skip
    ran = CliRunner().invoke(main, args)
    assert ran.exit_code == 0, ran.output
    assert "cache:" not in ran.output
    (manifest,) = (tmp_path / "out").rglob("manifest.json")
    assert "llm_cache" not in json.loads(manifest.read_text())


def _closed_run(directory: Path) -> tuple[bytes, bytes]:
    """A run directory whose session amended its manifest: (the manifest before, after)."""
    from tests.suites.compass.analysis.test_metrics import three_episodes

    store = RunStore(directory)
    store.open({"suite": "compass", "agent": "a", "trials": 1}, resume=False)
    before = (directory / "manifest.json").read_bytes()
    for e in three_episodes():
        store.append(e)
    store.amend_manifest({"llm_cache": {"hits": 1, "misses": 2, "bytes_read": 3,
                                        "bytes_written": 4}})  # fmt: skip
    store.close()
    return before, (directory / "manifest.json").read_bytes()


def test_the_chain_vouches_for_the_amended_manifest_and_a_kill_before_it(tmp_path):
    before, after = _closed_run(tmp_path / "run")
    assert json.loads(after)["llm_cache"]["misses"] == 2
    assert json.loads(after) == {**json.loads(before), "llm_cache": json.loads(after)["llm_cache"]}
    assert verify_run(tmp_path / "run").status == "verified"
    # killed between the close entry and the manifest's replacement: the old one is accepted
    (tmp_path / "run" / "manifest.json").write_bytes(before)
    verdict = verify_run(tmp_path / "run")
    assert verdict.status == "verified"
    assert any("killed as it ended" in note for note in verdict.notes)
    # any other manifest is tampering
    edited = json.loads(after)
    edited["llm_cache"]["hits"] = 100
    (tmp_path / "run" / "manifest.json").write_text(json.dumps(edited, indent=2, sort_keys=True))
    assert verify_run(tmp_path / "run").status == "tampered"


def test_a_resumed_session_starts_from_the_manifest_it_writes(tmp_path):
    """After an amended session, resuming writes a new manifest and the chain follows it."""
    _closed_run(tmp_path / "run")
    store = RunStore(tmp_path / "run")
    store.open({"suite": "compass", "agent": "a", "trials": 1}, resume=True)
    store.close()
    assert "llm_cache" not in json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert verify_run(tmp_path / "run").status == "verified"


def test_the_cache_counts_hits_misses_and_bytes(tmp_path):
    from travelgym.llm.protocol import ChatMessage, ChatResponse

    cache = ResponseCache(tmp_path)
    response = ChatResponse(message=ChatMessage(role="assistant", content="hi"), model="m")
    assert cache.get("ab" * 32) is None
    cache.put("ab" * 32, response)
    size = cache.path_for("ab" * 32).stat().st_size
    assert cache.get("ab" * 32) == response
    cache.path_for("cd" * 32).parent.mkdir(parents=True)
    cache.path_for("cd" * 32).write_text("{corrupt")
    assert cache.get("cd" * 32) is None  # a corrupt entry is a miss
    assert cache.stats() == {"hits": 1, "misses": 2, "bytes_read": size, "bytes_written": size}
    assert format_stats({"hits": 120, "misses": 3, "bytes_read": 1_234_567,
                         "bytes_written": 40_000}) == (
        "cache: 120 hits, 3 misses, 1.2 MB read, 40 kB written")  # fmt: skip
    assert format_stats({"hits": 0, "misses": 0, "bytes_read": 999_999,
                         "bytes_written": 12}) == (
        "cache: 0 hits, 0 misses, 1.0 MB read, 12 B written")  # fmt: skip
