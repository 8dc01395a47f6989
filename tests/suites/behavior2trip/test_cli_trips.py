"""The CLI commands that accept ``behavior2trip``: build, stats, tools (serve-mcp: test_mcp_trips)."""

from __future__ import annotations

import json
import shutil
import sys
import types

from click.testing import CliRunner

from travelgym.cli import main


def test_build_reports_the_current_database(trips_database, tmp_path, monkeypatch):
    monkeypatch.delenv("TRAVELGYM_DATA_DIR", raising=False)
    target = tmp_path / "behavior2trip" / "behavior2trip-small-seed0.sqlite"
    target.parent.mkdir()
    shutil.copy(trips_database.path, target)
    runner = CliRunner()
    result = runner.invoke(main, ["build", "behavior2trip", "--json", "--data-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["path"] == str(target) and out["built"] is False
    assert out["content_hash"] == trips_database.metadata["content_hash"]
    assert out["scale"] == "small"
    result = runner.invoke(main, ["build", "behavior2trip", "--scale", "huge"])
    assert result.exit_code == 2 and "huge" in result.output


def test_stats_json_has_database_and_instance_statistics(trips_db, monkeypatch):
    runner = CliRunner()
    import travelgym.suites.behavior2trip

    # the instance statistics come from the instances module (stood in for: building the
    # 11,400 instances is not this test's subject)
    fake = types.ModuleType("travelgym.suites.behavior2trip.instances")
    fake.instance_stats = lambda **kwargs: {"train": 9000, "test": 2400}
    monkeypatch.setitem(sys.modules, "travelgym.suites.behavior2trip.instances", fake)
    monkeypatch.setattr(travelgym.suites.behavior2trip, "instances", fake, raising=False)
    result = runner.invoke(main, ["stats", "behavior2trip", "--json", "--db", str(trips_db)])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["counts"]["hotels"] == 1920 and out["coverage"]["complete"] is True
    assert out["per_city"]["Beijing"]["restaurants"] == 120
    assert out["instances"] == {"train": 9000, "test": 2400}
    text = runner.invoke(main, ["stats", "behavior2trip", "--db", str(trips_db)]).output
    assert "hotels" in text and "covered in every city: True" in text


def test_tools_lists_the_9_tools():
    result = CliRunner().invoke(main, ["tools", "behavior2trip"])
    assert result.exit_code == 0, result.output
    names = [t["function"]["name"] for t in json.loads(result.output)]
    assert names[0] == "AccommodationSearch" and names[-1] == "Python" and len(names) == 9
