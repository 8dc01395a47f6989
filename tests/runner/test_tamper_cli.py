"""A tool database changed during a run is shown by ``score`` and ``report``, end to end.

Real runs through the CLI (scripted agents, no model) on private copies of the test databases;
the copy is then changed in a way the content hash of the tables does not see (the header's
``user_version``), so only the integrity log's byte hash can tell.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.runner import integrity
from travelgym.runner.integrity import INTEGRITY, file_sha256, tampering


def _invoke(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def _touch_header(db: Path) -> None:
    """Change the database file's bytes without changing any table's content."""
    before = file_sha256(db)
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 7")
    conn.close()
    assert file_sha256(db) != before


def _sessions(run_dir: Path) -> list[dict]:
    lines = (run_dir / INTEGRITY).read_text().splitlines()
    return [json.loads(line) for line in lines if '"chain"' not in line]  # not the digest chain


def test_compass_tampering_between_sessions_is_shown_by_score_and_report(compass_db, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(compass_db.parent, data / compass_db.parent.name)
    db = data / compass_db.parent.name / compass_db.name
    out = tmp_path / "runs"
    run = ["run", "compass", "--agent", "scripted:greedy", "--limit", "1", "--out", out,
           "--data-dir", data, "--no-progress"]  # fmt: skip
    first = _invoke(*run)
    assert first.exit_code == 0, first.output
    run_dir = out / "scripted-greedy"
    clean = _invoke("score", run_dir, "--data-dir", data, "--json")
    assert clean.exit_code == 0, clean.output
    assert json.loads(clean.stdout)["tampered"] is None and "TAMPERED" not in clean.output

    _touch_header(db)  # between session 1 and session 2 (the --resume)
    second = _invoke(*run, "--resume")
    assert second.exit_code == 0, second.output
    one, two = _sessions(run_dir)
    assert one["sha256_end"] != two["sha256_start"] == two["sha256_end"] == file_sha256(db)

    scored = _invoke("score", run_dir, "--data-dir", data)
    assert scored.exit_code == 0, scored.output
    assert "TAMPERED: the database changed between sessions 1 and 2" in scored.stdout
    as_json = _invoke("score", run_dir, "--data-dir", data, "--json")
    assert as_json.exit_code == 0, as_json.output
    assert "between sessions 1 and 2" in json.loads(as_json.stdout)["tampered"]

    page = tmp_path / "x.html"
    reported = _invoke("report", run_dir, "--out", page, "--data-dir", data)
    assert reported.exit_code == 0, reported.output
    notes = [x for x in reported.output.splitlines() if x.startswith("note: TAMPERED ")]
    assert len(notes) == 1 and notes[0].endswith("the database changed between sessions 1 and 2")
    assert "TAMPERED " in page.read_text() and "between sessions 1 and 2" in page.read_text()


@pytest.fixture(scope="module")
def trips_data(trips_database, tmp_path_factory) -> Path:
    """A data directory with a private copy of the trips database and its instance files."""
    from tests.conftest import private_data_dir
    from travelgym.suites.behavior2trip.instances import ensure_instances

    shared = trips_database.path.parent
    ensure_instances(trips_database, shared.parent, splits=("test",))
    data = tmp_path_factory.mktemp("trips-tamper") / "data"
    # instance files: read only, hard-linked, not copied (100+ MB); the rest copied
    return private_data_dir(
        data, shared.parent, (shared.name,), link=lambda p: p.suffix == ".jsonl"
    )


def test_behavior2trip_tampering_during_a_session_is_logged_and_scored(trips_data, trips_database,
                                                                       tmp_path, monkeypatch):  # fmt: skip
    db = trips_data / trips_database.path.parent.name / trips_database.path.name
    finish = integrity.IntegritySession.finish
    touched: list[str] = []

    def tamper_then_finish(self):  # the database changes after the session's start hash
        _touch_header(self.database)
        touched.append(str(self.database))
        return finish(self)

    monkeypatch.setattr(integrity.IntegritySession, "finish", tamper_then_finish)
    out = tmp_path / "runs"
    result = _invoke("run", "behavior2trip", "--agent", "scripted", "--limit", "1", "--out", out,
                     "--data-dir", trips_data, "--no-progress")  # fmt: skip
    monkeypatch.undo()
    assert result.exit_code == 0, result.output
    assert touched == [str(db)]  # the run's own database was the one changed
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    (session,) = _sessions(run_dir)
    assert session["sha256_start"] != session["sha256_end"] == file_sha256(db)
    assert "the database changed during session 1" in tampering(run_dir)
    scored = _invoke("score", run_dir, "--data-dir", trips_data, "--json")
    assert scored.exit_code == 0, scored.output
    assert "changed during session 1" in json.loads(scored.stdout)["tampered"]
