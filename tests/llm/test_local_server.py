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


def test_llama_cpp_reads_the_command_as_meant():
    """The server's own argument parser (the local extra) reads every option as set, flash
    attention on."""
    pytest.importorskip("llama_cpp.server.cli", reason="the local extra is not installed")
    import argparse

    from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
    from llama_cpp.server.settings import ModelSettings, Settings

    parser = argparse.ArgumentParser()
    add_args_from_model(parser, Settings)  # as python -m llama_cpp.server does
    cmd = _command(n_threads=2, n_ctx=4096)
    args = cmd[cmd.index("--model") :]
    settings = parse_model_from_args(ModelSettings, parser.parse_args(args))
    assert settings.flash_attn is True
    assert (settings.n_ctx, settings.n_threads, settings.n_threads_batch) == (4096, 2, 2)
    assert settings.model == "/models/m.gguf" and settings.model_alias == "m"
