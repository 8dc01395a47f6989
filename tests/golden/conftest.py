"""The session fixture of the golden tests: ``golden``, lazily per suite.

The databases come from the shared session fixtures of ``tests/conftest.py`` (``compass_db``,
``trips_db``): the test data directory built once per machine, with the COMPASS ground truth
and the Behavior2Trip instances; the golden tests reach them only through ``--data-dir``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.golden.golden import AGENT_DIRS, CHECKED_IN, RUN_ARGS, invoke_json

DB_FIXTURES = {"compass": "compass_db", "behavior2trip": "trips_db"}


@dataclass
class FreshRun:
    suite: str
    out: Path  # the --out parent
    run_dir: Path  # the one agent's run directory inside it
    json: Any  # what ``run --json`` printed


class Golden:
    """Per-suite data directory, copies of the checked-in runs, fresh runs and scores, each
    made on first use and kept for the session."""

    def __init__(self, request: pytest.FixtureRequest, factory: pytest.TempPathFactory) -> None:
        self._request = request
        self._factory = factory
        self._cache: dict[tuple[str, str], Any] = {}

    def _once(self, key: tuple[str, str], make):
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def data_dir(self, suite: str) -> Path:
        """The data directory holding the session's database of SUITE (DIR/SUITE/FILE)."""
        return self._once(("data", suite), lambda: Path(
            self._request.getfixturevalue(DB_FIXTURES[suite])).parents[1])  # fmt: skip

    def checked_in(self, suite: str) -> Path:
        """A copy of the checked-in run directory (commands never touch the original)."""
        src = CHECKED_IN[suite]
        return self._once(("copy", suite), lambda: Path(
            shutil.copytree(src, self._factory.mktemp("checked-in") / src.name)))  # fmt: skip

    def fresh(self, suite: str) -> FreshRun:
        """``travelgym run SUITE ... --json`` with the checked-in run's arguments."""

        def make() -> FreshRun:
            data_dir = self.data_dir(suite)
            out = self._factory.mktemp(f"fresh-{suite}")
            printed = invoke_json("run", suite, *RUN_ARGS[suite], "--out", out, "--json",
                                  data_dir=data_dir)  # fmt: skip
            return FreshRun(suite, out, out / AGENT_DIRS[suite], printed)

        return self._once(("fresh", suite), make)

    def score(self, suite: str, path: Path, *args: str) -> Any:
        """``travelgym score PATH --json ARGS`` against SUITE's data directory."""
        return invoke_json("score", path, "--json", *args, data_dir=self.data_dir(suite))

    def checked_in_score(self, suite: str) -> Any:
        return self._once(("score", suite), lambda: self.score(suite, self.checked_in(suite)))


@pytest.fixture(scope="session")
def golden(request, tmp_path_factory) -> Golden:
    return Golden(request, tmp_path_factory)
