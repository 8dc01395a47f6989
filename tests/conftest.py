"""Shared fixtures: one built COMPASS database per test session (about 3 s)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def compass_db(tmp_path_factory):
    """Path to a full COMPASS database built with the default seed."""
    from travelgym.parks.build import ensure_database

    data_dir = tmp_path_factory.mktemp("data")
    return ensure_database(seed=0, data_dir=data_dir).path
