"""``travelgym run behavior2trip --scale full --limit 20`` works end to end: it builds the full
(Table 6) database and its test instances beside the small ones, runs the scripted baseline on
20 instances of all three levels and records the scale; the oracle then passes every one of 60
full-scale instances (they are satisfiable by construction at this scale too)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.runner.store import EPISODES, MANIFEST
from travelgym.suites.behavior2trip.instances import store_path


@pytest.mark.slow  # builds the full-scale database and runs 80 episodes on it
def test_a_full_scale_run_of_20_instances(tmp_path):
    data, out = tmp_path / "data", tmp_path / "out"
    done = CliRunner().invoke(main, ["run", "behavior2trip", "--scale", "full", "--limit", "20",
                                     "--out", str(out), "--no-progress", "--json",
                                     "--data-dir", str(data)])  # fmt: skip
    assert done.exit_code == 0, done.output
    summary = json.loads(done.output[done.output.index("{") :])["scripted"]
    assert summary["overall"]["n"] == 20 and summary["overall"]["DR"] >= 90.0  # v4: slots
    assert {level: s["n"] for level, s in summary["by_difficulty"].items()} == {
        "easy": 7, "medium": 7, "hard": 6}  # fmt: skip
    run = out / "scripted"
    manifest = json.loads((run / MANIFEST).read_text())
    assert manifest["db_scale"] == "full"
    assert len((run / EPISODES).read_text().splitlines()) == 20
    files = sorted(p.name for p in (data / "behavior2trip").iterdir())
    assert any(name.startswith("behavior2trip-full") for name in files), files
    # only the instances the run needs are built, into a store named after its scale (no
    # instance file of a whole split is written)
    instance_files = [n for n in files if n.startswith("instances-")]
    assert instance_files == [store_path(data, "full").name]
    oracle = CliRunner().invoke(main, ["run", "behavior2trip", "--scale", "full", "--limit", "60",
                                       "--agent", "oracle", "--out", str(out), "--no-progress",
                                       "--json", "--data-dir", str(data)])  # fmt: skip
    assert oracle.exit_code == 0, oracle.output
    passed = json.loads(oracle.output[oracle.output.index("{") :])["oracle"]
    assert passed["overall"]["n"] == 60 and passed["overall"]["final"] == 100.0
    assert all(level["final"] == 100.0 for level in passed["by_difficulty"].values())
