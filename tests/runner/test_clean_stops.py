"""Clean stops of a real ``travelgym run``: SIGTERM and SIGINT finish (or abandon) the episodes
in flight, release the lock, print one line with the command that continues the run and exit
128 + the signal, without a traceback; ``--resume`` then completes the run with every
(task, trial) exactly once. A spec that cannot start leaves no run directory behind."""

from __future__ import annotations

import importlib.util
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.fakes.openai_server import Delay, FakeOpenAIServer, Reply
from tests.runner.faults import child_env, cli_command, raw_episodes
from travelgym.runner.lock import RunLock
from travelgym.runner.stopping import GRACE_ENV
from travelgym.runner.store import EPISODES

TASKS = 12
AGENT = "llm:fake-model"
REPLY_S = 0.4  # each model reply: episodes are in flight when the signal comes
HANG_S = 60.0  # a reply that only abandoning the episode ends in time


class SlowModel:
    """A fake model's replies: slow, or hanging (for ``hang_s``) while :attr:`hanging` is set."""

    def __init__(self) -> None:
        self.hanging = threading.Event()

    def __call__(self, body: dict) -> Delay:
        seconds = HANG_S if self.hanging.is_set() else REPLY_S
        return Delay(seconds, Reply("Here is my recommendation."))


def run_command(compass_db: Path, out: Path, base_url: str, *extra: str) -> list[str]:
    return cli_command("run", "compass", "--agent", AGENT, "--limit", str(TASKS),
                       "--max-turns", "2", "--concurrency", "3", "--no-progress",
                       "--data-dir", str(compass_db.parent.parent), "--base-url", base_url,
                       "--out", str(out), *extra)  # fmt: skip


def wait_for_episodes(path: Path, process: subprocess.Popen, at_least: int) -> None:
    deadline = time.monotonic() + 60
    while len(raw_episodes(path)) < at_least:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no episode saved in time"
        time.sleep(0.02)


def stop_and_resume(tmp_path: Path, compass_db: Path, signals: list[int], grace: str,
                    hang: bool = False) -> tuple[str, float]:  # fmt: skip
    """Start a run, send ``signals`` once an episode is saved (``hang``: the model's replies
    hang from then on), check the stop, then resume the run to the end; return the stopped
    run's stderr and the seconds from the first signal to its exit."""
    out = tmp_path / "runs"
    episodes = out / "llm-fake-model" / EPISODES
    env = {**child_env(), GRACE_ENV: grace}
    model = SlowModel()
    with FakeOpenAIServer(responder=model) as server:
        command = run_command(compass_db, out, server.base_url)
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=env, text=True)  # fmt: skip
        wait_for_episodes(episodes, process, 1)
        if hang:
            model.hanging.set()
        signalled = time.monotonic()
        for sig in signals:
            process.send_signal(sig)
            time.sleep(0.05)
        stdout, stderr = process.communicate(timeout=30)
        took = time.monotonic() - signalled
        model.hanging.clear()
        assert process.returncode == 128 + signals[0], stderr
        assert "Traceback" not in stdout + stderr
        saved = raw_episodes(episodes)
        assert 0 < len(saved) < TASKS
        last = stderr.strip().splitlines()[-1]
        resume = shlex.join([*command[3:], "--resume"])
        assert last == (f"{len(saved)} of {TASKS} episodes saved in {out / 'llm-fake-model'}; "
                        f"continue with: python -m travelgym.cli {resume}")  # fmt: skip
        with RunLock(out / "llm-fake-model") as lock:  # released
            assert lock.held
        done = subprocess.run(command + ["--resume"], capture_output=True, text=True, env=env,
                              timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    keys = [(e["task_id"], e["trial"]) for e in raw_episodes(episodes)]
    assert len(keys) == len(set(keys)) == TASKS  # none lost, none twice
    assert keys[: len(saved)] == [(e["task_id"], e["trial"]) for e in saved]  # kept as they were
    return stderr, took


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP],
                         ids=["SIGTERM", "SIGINT", "SIGHUP"])  # fmt: skip
def test_a_signal_finishes_the_episodes_in_flight_then_resume_completes(tmp_path, compass_db,
                                                                         sig):  # fmt: skip
    stderr, _ = stop_and_resume(tmp_path, compass_db, [sig], grace="20")
    assert "stopping: the episodes in flight have 20 s to finish" in stderr


@pytest.mark.slow
def test_a_second_signal_abandons_the_episodes_in_flight_at_once(tmp_path, compass_db):
    _, took = stop_and_resume(tmp_path, compass_db, [signal.SIGINT, signal.SIGTERM], grace="60",
                              hang=True)  # fmt: skip
    assert took < 10  # neither the 60 s grace nor the hanging replies were waited for


@pytest.mark.slow
def test_the_grace_period_running_out_abandons_the_episodes_in_flight(tmp_path, compass_db):
    _, took = stop_and_resume(tmp_path, compass_db, [signal.SIGTERM], grace="1", hang=True)
    assert took < 10


@pytest.mark.skipif(importlib.util.find_spec("litellm") is not None, reason="litellm installed")
def test_a_missing_extra_is_one_line_and_leaves_no_run_directory(tmp_path, compass_db):
    out = tmp_path / "runs"
    done = subprocess.run(cli_command("run", "compass", "--agent", "llm:litellm/gpt-4o",
                                      "--limit", "1", "--no-progress", "--data-dir",
                                      str(compass_db.parent.parent), "--out", str(out)),
                          capture_output=True, text=True, env=child_env(), timeout=60)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: LiteLLM backends need the optional dependency 'litellm': "
        "pip install 'travelgym[litellm]' (or: pip install litellm)"
    ]
    assert not out.exists()


def test_a_checkpoint_that_cannot_load_leaves_no_run_directory(tmp_path, compass_db):
    out = tmp_path / "runs"
    env = {k: v for k, v in child_env().items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    for agent, message in [(f"hf:{tmp_path / 'none'}", "not a checkpoint directory"),
                           ("llm:gpt-4o", "no API key")]:  # fmt: skip
        done = subprocess.run(cli_command("run", "compass", "--agent", agent, "--limit", "1",
                                          "--no-progress", "--data-dir",
                                          str(compass_db.parent.parent), "--out", str(out)),
                              capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
        assert done.returncode == 1
        [line] = done.stderr.strip().splitlines()
        assert line.startswith("Error: ") and message in line
        assert not out.exists()


def test_the_resume_command_quotes_and_adds_resume():
    from travelgym.cli.running import resume_command

    argv = ["/usr/bin/travelgym", "run", "compass", "--out", "my runs"]
    assert resume_command(argv) == "/usr/bin/travelgym run compass --out 'my runs' --resume"
    assert resume_command([*argv, "--resume"]).count("--resume") == 1
    assert resume_command(["tg", "run", "x", "--", "y"]) == "tg run x --resume -- y"


@pytest.mark.slow
def test_a_signal_stops_episodes_that_never_wait(tmp_path, compass_db):
    """Scripted episodes never wait, so every episode of a run ran in one step of the event
    loop and a signal was handled only after the last one: SIGINT did not stop the run."""
    out = tmp_path / "runs"
    episodes = out / "scripted-greedy" / EPISODES
    command = cli_command("run", "compass", "--agent", "scripted:greedy", "--trials", "8",
                          "--no-progress", "--data-dir", str(compass_db.parent.parent),
                          "--out", str(out))  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=child_env(), text=True)  # fmt: skip
    wait_for_episodes(episodes, process, 1)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stdout + stderr and "stopping:" in stderr
    assert 0 < len(raw_episodes(episodes)) < 8 * 281


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP],
                         ids=["SIGINT", "SIGTERM", "SIGHUP"])  # fmt: skip
def test_a_signal_while_a_run_builds_its_data_leaves_no_run_directory(tmp_path, trips_database,
                                                                      sig):  # fmt: skip
    """Ctrl-C while ``run`` built its data (no episode yet) let the run create an empty run
    directory, then ended with click's "Aborted!" and status 1; SIGTERM ended it with 143 and
    no word: now nothing is created, the status is the shell's (128 + the signal) and one line
    names the signal. The signal is sent from inside the build, as a terminal's Ctrl-C reaches
    a foreground process (SIGINT handled by Python, not ignored)."""
    data_dir = trips_database.path.parents[1]
    code = (
        "import os, signal, sys\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from travelgym.suites.behavior2trip import run\n"
        "real = run.load_split\n"
        "def building(*a, **k):\n"
        f"    os.kill(os.getpid(), {int(sig)})\n"
        "    return real(*a, **k)\n"
        "run.load_split = building\n"
        "from travelgym.cli import main\n"
        f"main(['run', 'behavior2trip', '--limit', '2', '--data-dir', {str(data_dir)!r},\n"
        f"      '--out', {str(tmp_path / 'runs')!r}, '--no-progress'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=child_env(), timeout=120)  # fmt: skip
    assert done.returncode == 128 + sig, done.stderr
    assert f"interrupted ({sig.name})" in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.count("interrupted") == 1
    assert not (tmp_path / "runs").exists()
