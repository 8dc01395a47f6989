"""A damaged ``manifest.json`` is one line naming the file, in every command reading runs."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.suites.compass.analysis.test_metrics import three_episodes
from travelgym.cli import main
from travelgym.runner.run_manifest import read_manifest
from travelgym.runner.store import RunDirError, RunStore

DAMAGE = {
    "not JSON": (b"{oops", "not valid JSON"),
    "a list": (b"[]", "not a JSON object"),
    "nested": (b"[" * 100_000 + b"]" * 100_000, "JSON nested too deeply"),
    "not UTF-8": (b'{"agent": "\xff"}', "cannot read"),
}


@pytest.fixture
def run_dir(tmp_path):
    store = RunStore(tmp_path / "run")
    store.open({"suite": "compass", "agent": "a", "trials": 1}, resume=False)
    for e in three_episodes():
        store.append(e)
    return tmp_path / "run"


@pytest.mark.parametrize("damage", DAMAGE)
def test_damaged_manifests_are_named_by_every_reader(run_dir, tmp_path, damage):
    content, reason = DAMAGE[damage]
    (run_dir / "manifest.json").write_bytes(content)
    with pytest.raises(RunDirError, match=reason):
        read_manifest(run_dir)
    runner = CliRunner()
    for args in (["analyze", str(run_dir)],
                 ["report", str(run_dir), "--out", str(tmp_path / "r.html")],
                 ["annotate", "export", str(run_dir), "--out", str(tmp_path / "s.csv")]):  # fmt: skip
        result = runner.invoke(main, args)
        assert result.exit_code == 1, (args, result.output)
        line = result.output.strip()
        assert "\n" not in line and "Traceback" not in line, (args, line)
        assert line.startswith(f"Error: {run_dir / 'manifest.json'}") and reason in line, line


def test_a_missing_manifest_is_empty_unless_required(tmp_path):
    assert read_manifest(tmp_path) == {}
    with pytest.raises(RunDirError, match="is not a run directory: no manifest.json"):
        read_manifest(tmp_path, required=True)
