"""Helpers of the golden tests: the CLI as a user runs it, key structures, snapshots.

Only the public surface is used: ``travelgym.cli.main`` (through click's ``CliRunner``) and
files on disk. ``TRAVELGYM_UPDATE_GOLDEN=1`` rewrites the snapshots instead of comparing.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from travelgym.cli import main

HERE = Path(__file__).parent
SNAPSHOTS = HERE / "snapshots"
HELP_SNAPSHOTS = SNAPSHOTS / "help"
RUNS = HERE / "runs"
ANSWERS = HERE / "answers"

UPDATE = os.environ.get("TRAVELGYM_UPDATE_GOLDEN") == "1"
if UPDATE and os.environ.get("CI"):  # rewriting the snapshots would make every golden test pass
    raise RuntimeError("TRAVELGYM_UPDATE_GOLDEN=1 is for updating snapshots by hand, not for CI")
WIDTH = 100  # help is rendered at this terminal width, whatever the real terminal

# The checked-in run directories were written by the release before the Suite refactor with
# exactly these arguments (``--out`` aside); the fresh runs of the tests use them too.
RUN_ARGS = {
    "compass": ["--agent", "scripted:greedy", "--limit", "3", "--concurrency", "1",
                "--no-progress"],
    "behavior2trip": ["--agent", "scripted", "--limit", "3", "--concurrency", "1",
                      "--no-progress"],
}  # fmt: skip
AGENT_DIRS = {"compass": "scripted-greedy", "behavior2trip": "scripted"}
CHECKED_IN = {"compass": RUNS / "compass_small", "behavior2trip": RUNS / "behavior2trip_small"}


def invoke(*args: Any, data_dir: Path | None = None, ok: bool = True) -> Result:
    """Run ``travelgym ARGS`` in-process (``--data-dir`` appended when given)."""
    argv = [str(a) for a in args]
    env = {"COLUMNS": str(WIDTH)}
    if data_dir is not None:
        argv += ["--data-dir", str(data_dir)]
        env["TRAVELGYM_DATA_DIR"] = str(data_dir)
    result = CliRunner(env=env).invoke(main, argv, prog_name="travelgym", terminal_width=WIDTH)
    if ok:
        assert result.exit_code == 0, (
            f"travelgym {' '.join(argv)} exited {result.exit_code}:\n{result.output}"
            + (f"\n{result.exception!r}" if result.exception else "")
        )
    return result


def invoke_json(*args: Any, data_dir: Path | None = None) -> Any:
    """``invoke`` a command that prints JSON on stdout; its parsed value."""
    return json.loads(invoke(*args, data_dir=data_dir).stdout)


# -- structures ------------------------------------------------------------------------------


def key_paths(obj: Any, maps: tuple[str, ...] = (), prefix: str = "") -> list[str]:
    """Every key path of ``obj``, sorted: ``a``, ``a.b``, ``a.list[].c`` (lists contribute the
    union of their elements' keys). Dicts at a path named in ``maps`` are free-form maps (ids,
    tool arguments): their keys are written ``*`` and their values merged."""
    found: set[str] = set()

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            collapse = path in maps
            for key, sub in value.items():
                name = "*" if collapse else str(key)
                child = f"{path}.{name}" if path else name
                found.add(child)
                walk(sub, child)
        elif isinstance(value, list):
            for item in value:
                walk(item, f"{path}[]")

    walk(obj, prefix)
    return sorted(found)


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "bool", int: "int", float: "float", str: "str"}.get(
        type(value), type(value).__name__
    )


def skeleton(obj: Any) -> Any:
    """``obj`` with every scalar replaced by its JSON type (``int``, ``float``, ``str``, ``bool``,
    ``null``); a list becomes the sorted distinct skeletons of its elements."""
    if isinstance(obj, dict):
        return {k: skeleton(v) for k, v in obj.items()}
    if isinstance(obj, list):
        shapes = {canonical(skeleton(x)): skeleton(x) for x in obj}
        return [shapes[k] for k in sorted(shapes)]
    return type_name(obj)


def mask(obj: Any, paths: tuple[str, ...]) -> Any:
    """A copy of ``obj`` with the values at the dotted ``paths`` replaced by ``<TYPE>`` (a
    missing path fails: the key is part of the format)."""
    out = json.loads(json.dumps(obj))
    for path in paths:
        *parents, last = path.split(".")
        node = out
        for part in parents:
            node = node[part]
        assert last in node, f"{path} is missing"
        node[last] = f"<{type_name(node[last])}>"
    return out


_ID = re.compile(r"^(compass-\d+|b2t-(train|test)-(easy|medium|hard)-\d+)$")


def ids_as_star(paths: list[str]) -> list[str]:
    """Key paths with task / instance ids (keys of id-keyed maps) written ``<id>``."""
    return sorted(
        {".".join("<id>" if _ID.match(p) else p for p in path.split(".")) for path in paths}
    )


# -- snapshots -------------------------------------------------------------------------------


def canonical(obj: Any) -> str:
    """JSON text that tells ``1`` from ``1.0`` and ignores key order."""
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def check_text(path: Path, actual: str) -> None:
    """``actual`` equals the snapshot at ``path`` (rewritten instead under UPDATE)."""
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    assert path.is_file(), f"no snapshot {path}: run with TRAVELGYM_UPDATE_GOLDEN=1 to write it"
    expected = path.read_text(encoding="utf-8")
    assert actual.splitlines() == expected.splitlines(), f"{path.name} differs from the snapshot"
    assert actual == expected, f"{path.name}: only line endings / trailing newline differ"


def check_json(name: str, actual: Any) -> None:
    """``actual`` (any JSON value) equals ``snapshots/NAME`` exactly: values, types, keys."""
    check_text(SNAPSHOTS / name, canonical(actual))


def load_snapshot(name: str) -> Any:
    return json.loads((SNAPSHOTS / name).read_text(encoding="utf-8"))


def read_jsonl(path: Path) -> list[Any]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
