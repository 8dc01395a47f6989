"""A Behavior2Trip run records the versions its scores depend on (the checks, the instance
files, the database), resuming or re-scoring it under other ones is refused with a message
naming them, and a current run scores again to the same result."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.runner.store import MANIFEST
from travelgym.suites.behavior2trip.checks import CHECKS_VERSION
from travelgym.suites.behavior2trip.instance_sets import versions
from travelgym.suites.behavior2trip.instances import ensure_instances


@pytest.fixture(scope="module")
def run_dir(trips_database, tmp_path_factory):
    data_dir = trips_database.path.parent.parent
    ensure_instances(trips_database, data_dir, splits=("test",))
    out = tmp_path_factory.mktemp("versions")
    done = CliRunner().invoke(main, ["run", "behavior2trip", "--limit", "2", "--out", str(out),
                                     "--no-progress", "--data-dir", str(data_dir)])  # fmt: skip
    assert done.exit_code == 0, done.output
    return out / "scripted", str(data_dir)


def _score(run, data_dir):
    return CliRunner().invoke(main, ["score", str(run), "--data-dir", data_dir, "--json"])


def _edited(run, tmp_path, **changes):
    """A copy of the run directory with its manifest changed (``None`` removes a key)."""
    copy = tmp_path / "scripted"  # where `run --out tmp_path` keeps the scripted agent's run
    copy.mkdir()
    for f in run.iterdir():
        if f.is_file():
            (copy / f.name).write_bytes(f.read_bytes())
    manifest = json.loads((copy / MANIFEST).read_text())
    for key, value in changes.items():
        if value is None:
            manifest.pop(key, None)
        else:
            manifest[key] = value
    (copy / MANIFEST).write_text(json.dumps(manifest))
    return copy


def test_the_manifest_records_the_versions(run_dir):
    manifest = json.loads((run_dir[0] / MANIFEST).read_text())
    assert manifest["checks_version"] == CHECKS_VERSION == versions()["checks_version"]
    assert manifest["instances_version"] == versions()["instances_version"]


def test_a_current_run_scores_again(run_dir):
    done = _score(*run_dir)
    assert done.exit_code == 0, done.output


@pytest.mark.parametrize("changes", [{"checks_version": "1"}, {"checks_version": None}])
def test_a_run_of_other_checks_keeps_its_stored_scores(run_dir, tmp_path, changes):
    """Checks this install does not ship: the run's stored scores are shown, not re-derived,
    and ``score`` says the digest chain alone vouches for them (a run from before versions
    were recorded used checks version 1)."""
    edited = _edited(run_dir[0], tmp_path, **changes)
    done = CliRunner().invoke(main, ["score", str(edited), "--data-dir", str(run_dir[1]),
                                     "--json"])  # fmt: skip
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    assert result["recheck"]["version_gone"] is True
    assert result["recheck"]["scorer_version"] == "1"
    assert result["recheck"]["scores_rederived"] == 0
    assert "scorer version 1" in done.stderr and "digest chain only" in done.stderr
    stored = [json.loads(x)["score"]["final"] for x in (edited / "episodes.jsonl").open()]
    assert result["overall"]["n"] == len(stored)


@pytest.mark.parametrize(
    "changes, named",
    [
        ({"instances_version": "0/0.9.0"}, "instances version 0/0.9.0"),
        ({"db_content_hash": "0" * 64}, "another database (content hash 000000000000"),
    ],
)
def test_a_run_of_other_versions_is_refused(run_dir, tmp_path, changes, named):
    done = _score(_edited(run_dir[0], tmp_path, **changes), run_dir[1])
    assert done.exit_code != 0
    assert named in done.output and "refused" in done.output and "Traceback" not in done.output


def test_resuming_under_other_checks_is_refused(run_dir, tmp_path):
    _edited(run_dir[0], tmp_path, checks_version="1")
    done = CliRunner().invoke(main, ["run", "behavior2trip", "--limit", "2", "--out",
                                     str(tmp_path), "--no-progress", "--data-dir", run_dir[1],
                                     "--resume"])  # fmt: skip
    assert done.exit_code != 0 and "checks_version" in done.output, done.output
