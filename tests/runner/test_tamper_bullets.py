"""Issue 34's first two attacks through the commands alone (no module of the chain imported, so
the tests state the behaviour a user sees): a hand-edited ``episodes.jsonl`` and a deleted
integrity log of an ``--unsafe-sandbox`` run are shown by ``score``, ``analyze`` and ``report``,
each with one variant the issue does not list."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, Reply, tool_call
from tests.runner.conftest import copy_run
from travelgym.cli import main

EPISODES, INTEGRITY, MANIFEST = "episodes.jsonl", "integrity.jsonl", "manifest.json"


def _invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _edit_line(run: Path, index: int, edit) -> None:
    lines = (run / EPISODES).read_bytes().splitlines()
    episode = json.loads(lines[index])
    edit(episode)
    lines[index] = json.dumps(episode).encode()
    (run / EPISODES).write_bytes(b"\n".join(lines) + b"\n")


def _scored(run: Path, data_dir: Path) -> dict:
    result = _invoke("score", run, "--data-dir", data_dir, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _optimal(episode: dict) -> None:
    """The issue's attack: the final recommendation and the score set to an optimal plan's."""
    episode["final_recommendation"] = {"hotel": "pkg_1", "flight": "flight_1", "permit": None}
    episode["score"].update(optimal=True, optimality_gap=0.0, feasible=True)


def _answer_only(episode: dict) -> None:
    """The issue's second form: the final recommendation alone (``score`` re-scores it)."""
    episode["final_recommendation"] = {"hotel": "pkg_1", "flight": "flight_1", "permit": None}


@pytest.mark.parametrize("edit", [_optimal, _answer_only], ids=["answer and score", "answer"])
def test_a_hand_edited_episode_is_tampered_in_score_and_analyze(greedy_run, data_dir, tmp_path,
                                                                 edit):  # fmt: skip
    run = copy_run(greedy_run, tmp_path)
    assert _scored(run, data_dir)["tampered"] is None
    _edit_line(run, 1, edit)
    assert "line 2" in (_scored(run, data_dir)["tampered"] or "")
    assert "TAMPERED" in _invoke("score", run, "--data-dir", data_dir).output
    analyzed = _invoke("analyze", run, "--json")
    assert analyzed.exit_code == 0, analyzed.output
    assert "line 2" in (json.loads(analyzed.stdout)["tampered"][str(run)] or "")
    assert "TAMPERED" in _invoke("analyze", run).output


def test_a_deleted_episode_with_the_others_untouched_is_tampering(greedy_run, data_dir, tmp_path):
    # variant: no line is edited, the worst episode is dropped (a better mean, every line valid)
    run = copy_run(greedy_run, tmp_path)
    lines = (run / EPISODES).read_bytes().splitlines(keepends=True)
    (run / EPISODES).write_bytes(b"".join(lines[:-1]))
    assert _scored(run, data_dir)["tampered"]
    for command in ("score", "analyze"):
        assert "TAMPERED" in _invoke(command, run).output, command
    page = tmp_path / "page.html"
    _invoke("report", run, "--out", page, "--no-analysis")
    assert "TAMPERED" in page.read_text()


@pytest.fixture(scope="module")
def unsafe_run(tmp_path_factory, data_dir) -> Path:
    """A code-agent COMPASS run made with ``--unsafe-sandbox`` where bubblewrap is missing (its
    model code ran with no operating-system boundary)."""
    from travelgym import sandbox
    from travelgym.sandbox import boundary

    mp = pytest.MonkeyPatch()
    mp.setenv("PATH", str(tmp_path_factory.mktemp("nobwrap")))  # as the no_bwrap fixture does
    mp.setenv("OPENAI_API_KEY", "test-key")
    boundary._bubblewrap.cache_clear()

    def respond(body):
        if not any(m["role"] == "tool" for m in body["messages"]):
            return Reply(tool_calls=[tool_call("run_python", {"code": "print(6 * 7)"})])
        return Reply(json.dumps({"message": "ok", "recommendation": {"hotel": None}}))

    out = tmp_path_factory.mktemp("unsafe") / "runs"
    try:
        with FakeOpenAIServer(responder=respond) as server:
            result = _invoke("run", "compass", "--agent", "code:fake-model", "--base-url",
                             server.base_url, "--tasks", "compass-001", "--max-turns", 2, "--out",
                             out, "--data-dir", data_dir, "--no-progress", "--unsafe-sandbox")  # fmt: skip
    finally:
        sandbox.allow_unsafe(False)
        mp.undo()
        boundary._bubblewrap.cache_clear()
    assert result.exit_code == 0, result.output
    run = out / "code-fake-model"
    assert json.loads((run / MANIFEST).read_text())["sandbox"]["boundary"] == "unsafe"
    return run


def _every_output(run: Path, data_dir: Path, tmp_path: Path) -> dict[str, str]:
    page = tmp_path / "unsafe.html"
    scored = json.loads(_invoke("score", run, "--data-dir", data_dir, "--json").stdout)
    analyzed = json.loads(_invoke("analyze", run, "--json").stdout)
    shown = {
        "score": _invoke("score", run, "--data-dir", data_dir).output,
        "score --json": scored.get("tampered") or "",
        "analyze": _invoke("analyze", run).output,
        "analyze --json": (analyzed.get("tampered") or {}).get(str(run)) or "",
    }
    _invoke("report", run, "--out", page, "--no-analysis")
    shown["report page"] = page.read_text() if page.exists() else ""
    return shown


@pytest.mark.parametrize("how", ["deleted", "emptied"])  # emptied: the variant
def test_an_unsafe_run_is_marked_in_every_output_whatever_happens_to_the_log(unsafe_run, data_dir,
                                                                             tmp_path, how):  # fmt: skip
    run = copy_run(unsafe_run, tmp_path)
    if how == "deleted":
        (run / INTEGRITY).unlink()
    else:
        (run / INTEGRITY).write_bytes(b"")
    for output, text in _every_output(run, data_dir, tmp_path).items():
        assert "--unsafe-sandbox" in text, (how, output, text[-2000:])
