"""Shared fixtures: one small Behavior2Trip database per test session (a few seconds)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def trips_database(tmp_path_factory):
    """The default (small, seed 0) database as ``ensure_database`` returns it."""
    from travelgym.trips.build import ensure_database

    return ensure_database(data_dir=tmp_path_factory.mktemp("trips-data"))


@pytest.fixture(scope="session")
def trips_db(trips_database):
    """Path to the default (small, seed 0) Behavior2Trip database."""
    return trips_database.path
