"""The llama.cpp server's command line (no server is started here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from travelgym.core.errors import UserError
from travelgym.llm.local_server import LocalModel, LocalServer, env_options


def _command(**options) -> list[str]:
    model = LocalModel(path=Path("/models/m.gguf"), alias="m")
    return LocalServer(model, **options).command(8080)


def _flag(cmd: list[str], name: str) -> str | None:
    return cmd[cmd.index(name) + 1] if name in cmd else None


def test_threads_set_both_generation_and_prompt_reading():
    cmd = _command(n_threads=1)
    assert _flag(cmd, "--n_threads") == "1"
    assert _flag(cmd, "--n_threads_batch") == "1"


def test_without_threads_llama_cpp_chooses():
    cmd = _command()
    assert "--n_threads" not in cmd and "--n_threads_batch" not in cmd


def test_the_variable_reaches_the_options(monkeypatch):
    monkeypatch.setenv("TRAVELGYM_LOCAL_THREADS", "3")
    assert env_options()["n_threads"] == 3
    for bad in ("three", "0", "-2"):
        monkeypatch.setenv("TRAVELGYM_LOCAL_THREADS", bad)
        with pytest.raises(UserError, match="TRAVELGYM_LOCAL_THREADS must be a positive integer"):
            env_options()
