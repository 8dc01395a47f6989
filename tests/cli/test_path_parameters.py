"""Every path a command takes goes through the checks of :mod:`travelgym.clikit.paths`: an empty
value is refused (it meant the current directory: `train grpo --data-dir ''` built its data
there) and an input that is no regular file is refused before it is read (`train grpo
--config FIFO` and `train sft FIFO` waited forever)."""

from __future__ import annotations

import os

import click
import pytest

from tests.clikit.test_progress_switches import _leaf_commands
from travelgym.cli import main
from travelgym.clikit import DataDirPath, InputPath, OutputPath

COMMANDS = _leaf_commands(main)
CHECKED = (InputPath, OutputPath, DataDirPath)


def path_parameters() -> list[tuple[str, click.Command, click.Parameter]]:
    found = []
    for name, command in COMMANDS.items():
        for param in command.params:
            if isinstance(param.type, click.Path):
                found.append((name, command, param))
    return found


def test_every_path_parameter_is_checked():
    found = path_parameters()
    assert {"train grpo", "train sft", "runs", "run", "export dataset"} <= {n for n, _, _ in found}
    bare = [f"{n} {p.name}" for n, _, p in found if not isinstance(p.type, CHECKED)]
    assert bare == []


@pytest.mark.parametrize("value", ["", " ", "\t"])
def test_an_empty_path_is_refused_everywhere(value):
    for name, command, param in path_parameters():
        with pytest.raises(click.BadParameter, match="an empty path"):
            param.type.convert(value, param, click.Context(command))
        assert name


def test_a_fifo_is_refused_where_a_file_or_directory_is_read(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    inputs = [(n, c, p) for n, c, p in path_parameters()
              if isinstance(p.type, (InputPath, DataDirPath))]  # fmt: skip
    assert {"train grpo", "train sft", "run", "runs"} <= {n for n, _, _ in inputs}
    assert {n for n, _, p in inputs if p.name == "data_dir"} >= {"run", "solve", "train grpo"}
    for name, command, param in inputs:
        with pytest.raises(click.BadParameter, match="a FIFO"):
            param.type.convert(str(fifo), param, click.Context(command))
        assert name
