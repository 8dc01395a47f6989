"""The command a published file records names every option given, and no local path."""

from __future__ import annotations

from pathlib import Path

import click
from click.testing import CliRunner

from travelgym.clikit import OutputPath
from travelgym.clikit.recorded_command import recorded_command


def recorded(*args: str, env: dict[str, str] | None = None) -> str:
    seen: list[str] = []

    @click.group()
    def tool() -> None:
        pass

    @tool.command("export")
    @click.argument("suite")
    @click.option("--out", type=OutputPath("dir"), required=True)
    @click.option("--tasks-file", type=click.Path(dir_okay=False, path_type=Path))
    @click.option("--run", type=click.Path(path_type=Path), multiple=True)
    @click.option("--limit", type=int, envvar="TOOL_LIMIT")
    @click.option("--seed", type=int, default=0)
    @click.option("--progress/--no-progress", default=True)
    @click.option("--truth", is_flag=True)
    @click.option("--level", type=click.Choice(["easy", "hard"]))
    def export(**_: object) -> None:
        seen.append(recorded_command(click.get_current_context()))

    result = CliRunner().invoke(tool, list(args), env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return seen[0]


def test_paths_are_placeholders_and_the_rest_is_kept(tmp_path):
    line = recorded("export", "compass", "--out", str(tmp_path / "alice" / "ds"), "--limit", "3",
                    "--tasks-file", str(tmp_path / "t.jsonl"), "--run", str(tmp_path / "r1"),
                    "--run", str(tmp_path / "r 2"), "--no-progress", "--truth", "--level",
                    "hard")  # fmt: skip
    assert str(tmp_path) not in line and "alice" not in line
    assert line == ("travelgym export compass --out DIR --tasks-file FILE --run PATH --run PATH "
                    "--limit 3 --no-progress --truth --level hard")  # fmt: skip


def test_defaults_are_left_out_and_environment_values_are_kept(tmp_path):
    line = recorded("export", "x y", f"--out={tmp_path}", env={"TOOL_LIMIT": "7"})
    assert line == "travelgym export 'x y' --out DIR --limit 7"
