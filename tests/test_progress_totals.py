"""A build's bar counts up to the total it announced: the Behavior2Trip database's bar was one
step short of its count, so it never showed 100 % and ended without a total."""

from __future__ import annotations

import pytest

from travelgym import progress


class _Recorded(progress.Step):
    """A hidden step that remembers what it announced and counted."""

    seen: list[tuple[str, int | None, int]] = []

    def __init__(self, desc: str, total: int | None, unit: str, initial: int = 0) -> None:
        self.desc, self.total, self.count, self._bar = desc, total, initial, None

    def advance(self, n: int = 1) -> None:
        self.count += n

    def close(self) -> None:
        self.seen.append((self.desc, self.total, self.count))


@pytest.mark.slow
def test_database_builds_count_up_to_their_totals(tmp_path, monkeypatch):
    from travelgym.suites.behavior2trip.generate import build_database as build_trips
    from travelgym.suites.compass.generate import build_database as build_compass

    monkeypatch.setattr(progress, "Step", _Recorded)
    _Recorded.seen = []
    build_trips(tmp_path / "trips.sqlite", seed=0)
    build_compass(tmp_path / "compass.sqlite", seed=0)
    assert [desc for desc, _, _ in _Recorded.seen] == ["behavior2trip: database",
                                                       "compass: database"]  # fmt: skip
    for desc, total, count in _Recorded.seen:
        assert count == total, desc
