"""TravelPlanner's outcomes: an unparseable model reply is a scored model error, a server
answering 503 for good an infra error left out (see ``tests/core/test_outcome_per_suite.py``)."""

from __future__ import annotations

from tests.core.test_outcome_per_suite import GARBAGE, check, play
from tests.fakes.openai_server import HTTPError, Reply


def test_travelplanner(tp_suite_data):
    from travelgym.suites.travelplanner.agents.llm import B2TPlanner
    from travelgym.suites.travelplanner.dataset import read_dataset
    from travelgym.suites.travelplanner.episode import run_planner_episode
    from travelgym.suites.travelplanner.source import reference_sandbox

    dataset, _ = tp_suite_data
    query = read_dataset(dataset, "validation")["validation"][0]
    box = reference_sandbox(query)

    def episode_of(c):
        return run_planner_episode(query, B2TPlanner(c, max_steps=2), "two-stage", box, box)

    unparsed = play(lambda body: Reply(GARBAGE), episode_of)
    outage = play(lambda body: HTTPError(503), episode_of)
    assert unparsed.termination == "step_limit"
    check("travelplanner", unparsed, outage)
