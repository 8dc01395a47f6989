"""Every command's ``--help``, verbatim (rendered 100 columns wide).

One snapshot per command in ``snapshots/help/`` (``travelgym.annotate.export.txt`` is
``travelgym annotate export --help``). Every snapshotted command must still exist with the same
help; a command that appears later is allowed. A group's help is compared verbatim, except that
when commands were added its "Commands:" listing (whose column widths follow the longest name)
only has to name every snapshotted subcommand.
"""

from __future__ import annotations

import warnings

import click
import pytest

from tests.golden.golden import HELP_SNAPSHOTS, UPDATE, check_text, invoke
from travelgym.cli import main


def live_commands() -> dict[tuple[str, ...], click.Command]:
    """Every command reachable from ``travelgym``, by its path of names (the root is ``()``)."""
    found: dict[tuple[str, ...], click.Command] = {}

    def walk(cmd: click.Command, path: tuple[str, ...]) -> None:
        found[path] = cmd
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                walk(sub, (*path, name))

    walk(main, ())
    return found


def snapshot_name(path: tuple[str, ...]) -> str:
    return ".".join(("travelgym", *path)) + ".txt"


def help_text(path: tuple[str, ...]) -> str:
    return invoke(*path, "--help").stdout


SNAPSHOTTED = sorted(
    tuple(p.name[: -len(".txt")].split(".")[1:]) for p in HELP_SNAPSHOTS.glob("*.txt")
)


def split_commands(text: str) -> tuple[str, list[str]]:
    """A group's help before its "Commands:" section, and the names that section lists."""
    head, sep, listing = text.partition("\nCommands:\n")
    assert sep, "a group's help has a Commands: section"
    names = [
        line.split()[0] for line in listing.splitlines() if line.startswith("  ") and line[2] != " "
    ]
    return head, names


def test_snapshots_cover_the_main_commands():
    """Guard against an emptied snapshot folder passing vacuously."""
    if UPDATE:
        pytest.skip("updating")
    names = {" ".join(p) for p in SNAPSHOTTED}
    assert {"", "run", "score", "report", "export", "export sft", "build", "train"} <= names


def test_new_commands_are_allowed_and_written_on_update():
    live = live_commands()
    new = sorted(set(live) - set(SNAPSHOTTED))
    if UPDATE:
        for path in live:
            check_text(HELP_SNAPSHOTS / snapshot_name(path), help_text(path))
        return
    if new:
        warnings.warn(f"commands without a help snapshot (allowed; TRAVELGYM_UPDATE_GOLDEN=1 "
                      f"adds them): {[' '.join(p) for p in new]}", stacklevel=1)  # fmt: skip


@pytest.mark.parametrize("path", SNAPSHOTTED, ids=lambda p: " ".join(p) or "travelgym")
def test_help_is_frozen(path):
    if UPDATE:
        pytest.skip("snapshots rewritten by test_new_commands_are_allowed_and_written_on_update")
    live = live_commands()
    assert path in live, f"`travelgym {' '.join(path)}` no longer exists"
    snapshot = HELP_SNAPSHOTS / snapshot_name(path)
    actual = help_text(path)
    if isinstance(live[path], click.Group):
        expected = snapshot.read_text(encoding="utf-8")
        old_head, old_names = split_commands(expected)
        new_head, new_names = split_commands(actual)
        if set(new_names) != set(old_names):  # commands were added (or removed: fails below)
            assert new_head == old_head
            missing = sorted(set(old_names) - set(new_names))
            assert not missing, f"subcommands gone from `travelgym {' '.join(path)}`: {missing}"
            return
    check_text(snapshot, actual)
