"""The user simulator's version is part of a COMPASS run's identity: a run written by another
simulator (or before the version was recorded: version 1) is never resumed with this one."""

from __future__ import annotations

import asyncio
import json

import pytest

from travelgym.runner.batch import RunConfig, run_suite
from travelgym.runner.errors import RunDirError
from travelgym.suites.compass.user.simulator import USER_SIMULATOR_VERSION


def test_the_simulator_version_is_recorded_and_guards_resume(compass_db, tmp_path):
    run_dir = tmp_path / "run"

    def run(resume: bool):
        return asyncio.run(run_suite(RunConfig("compass", "scripted:greedy", run_dir, limit=2,
                                               concurrency=1, resume=resume, progress=False,
                                               data_dir=compass_db.parent.parent)))  # fmt: skip

    run(resume=False)
    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    assert manifest["user_simulator_version"] == USER_SIMULATOR_VERSION != "1"
    assert run(resume=True)["overall"]["n"] == 2  # the same simulator resumes
    del manifest["user_simulator_version"]  # a run from before the version: simulator 1
    path.write_text(json.dumps(manifest))
    with pytest.raises(RunDirError, match=r"differs in: user_simulator_version"):
        run(resume=True)
