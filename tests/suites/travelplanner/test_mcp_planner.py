"""``travelgym serve-mcp travelplanner`` over real stdio, checked against direct registry calls
on the ingested database."""

from __future__ import annotations

import pytest

from tests.fakes.mcp_check import check_served_suite
from travelgym.suites.travelplanner.ingest import ingest
from travelgym.suites.travelplanner.sandbox_db import DatabaseSandbox
from travelgym.suites.travelplanner.tools import TOOLS_INTRO, PlannerContext, planner_registry


@pytest.fixture
def anyio_backend():
    return "asyncio"


class ClosingContext(PlannerContext):
    """A context whose sandbox's connection the check closes at the end."""

    def close(self) -> None:
        self.sandbox.close()


@pytest.mark.anyio
async def test_serve_mcp_travelplanner_matches_the_registry(tp_dataset_dir, tp_database_dir,
                                                            tmp_path):  # fmt: skip
    path = ingest(tp_dataset_dir, tp_database_dir, tmp_path / "data")["path"]
    direct = ClosingContext(DatabaseSandbox.from_path(path))
    calls = [
        ("flight_search", {"departure_city": "St. Petersburg", "destination_city": "Rockford",
                           "date": "2022-03-16"}),
        ("accommodation_search", {"city": "Rockford"}),
        ("restaurant_search", {"city": "Chicago"}),
        ("attraction_search", {"city": "Rockford"}),
        ("google_distance_matrix", {"origin": "Rockford", "destination": "Chicago",
                                    "mode": "taxi"}),
        ("city_search", {"state": "Illinois"}),
    ]  # fmt: skip
    failures = [
        ("flight_search", {"departure_city": "A", "destination_city": "B", "date": "2022-02-30"},
         "content"),
        ("google_distance_matrix", {"origin": "A", "destination": "B", "mode": "walk"},
         "parameter"),
        ("FlightSearch", {}, "tool_name"),
    ]  # fmt: skip
    assert len(planner_registry()) == 7
    await check_served_suite("travelplanner", path, planner_registry(), direct, TOOLS_INTRO,
                             calls, failures, tmp_path)  # fmt: skip


def test_serve_mcp_refuses_data_ingested_without_the_database(tp_dataset_dir, tmp_path):
    from click.testing import CliRunner

    from travelgym.cli import main

    ingest(tp_dataset_dir, None, tmp_path / "data")
    done = CliRunner().invoke(main, ["serve-mcp", "travelplanner", "--data-dir",
                                     str(tmp_path / "data")])  # fmt: skip
    assert done.exit_code == 1
    assert done.output.strip().endswith("was ingested without its database: run `travelgym "
                                         "ingest travelplanner --dataset PATH --database DIR`")  # fmt: skip
