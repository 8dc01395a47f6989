"""Shared fixtures: one built COMPASS database per test session (about 3 s) and one small
Behavior2Trip database (a few seconds)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def compass_db(tmp_path_factory):
    """Path to a full COMPASS database built with the default seed."""
    from travelgym.suites.compass.build import ensure_database

    data_dir = tmp_path_factory.mktemp("data")
    return ensure_database(seed=0, data_dir=data_dir).path


@pytest.fixture(scope="session")
def trips_database(tmp_path_factory):
    """The default (small, seed 0) Behavior2Trip database as ``ensure_database`` returns it."""
    from travelgym.suites.behavior2trip.build import ensure_database

    return ensure_database(data_dir=tmp_path_factory.mktemp("trips-data"))


@pytest.fixture(scope="session")
def trips_db(trips_database):
    """Path to the default (small, seed 0) Behavior2Trip database."""
    return trips_database.path
