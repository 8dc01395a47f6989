"""The solve-once agents (the scripted baseline, ReAct) are played by the one episode loop
(:func:`travelgym.runner.loop.play`) over the training environment: their one message goes
through the loop's body (the ``applied`` spy), and the stored episode is the one their direct
``solve`` over a fresh tool session records and scores."""

from __future__ import annotations

import asyncio

import pytest

from travelgym.llm.protocol import LLMError
from travelgym.suites.travelplanner.agents.llm import ReactPlanner
from travelgym.suites.travelplanner.agents.scripted import ScriptedPlanner
from travelgym.suites.travelplanner.episode import run_planner_episode
from travelgym.suites.travelplanner.planner_episode import safe_score
from travelgym.suites.travelplanner.session import PlannerRequest, PlannerSession
from travelgym.suites.travelplanner.source import PlannerData


@pytest.fixture
def planner_data(tp_suite_data, tmp_path):
    dataset, database = tp_suite_data
    data = PlannerData.open(str(dataset), str(database), tmp_path / "ingested", "validation")
    yield data
    data.close()


def direct(query, mode, tools, check):
    """``(score, answer, session)`` of the scripted baseline's own solve, outside the loop."""
    session = PlannerSession(tools)
    answer = asyncio.run(ScriptedPlanner().solve(PlannerRequest.of(query, mode), session))
    return safe_score(query, answer, check), answer, session


@pytest.mark.parametrize("mode", ["sole-planning", "two-stage"])
def test_a_scripted_episode_is_played_by_the_loop_as_its_solve(planner_data, applied, mode):
    for query in planner_data.queries("validation"):
        tools, check = planner_data.database, planner_data.sandbox_for(query)
        applied.clear()
        episode = asyncio.run(run_planner_episode(query, ScriptedPlanner(), mode, tools, check,
                                                  seed=3, trial=1))  # fmt: skip
        assert applied == ["PlannerTrainingEnv"]  # one message, the answer
        score, answer, session = direct(query, mode, tools, check)
        assert episode.score == score and episode.score["delivered"]
        assert (episode.termination, episode.outcome, episode.error) == ("answered", "completed",
                                                                          None)  # fmt: skip
        assert episode.final_answer == answer and episode.messages == session.messages == []
        assert episode.tool_calls == sum(len(s.tool_calls) for s in session.steps)
        assert [c.name for s in episode.steps for c in s.tool_calls] == \
            [c.name for s in session.steps for c in s.tool_calls]  # fmt: skip
        assert [s.text for s in episode.steps] == [s.text for s in session.steps]
        assert episode.notebook == session.notebook and episode.usage == session.usage
        assert (episode.agent, episode.seed, episode.trial) == ("scripted", 3, 1)
        assert (episode.tool_calls > 0) == (mode == "two-stage")
        assert all(c.result is not None for s in episode.steps for c in s.tool_calls)


class Failing:
    """A model whose every call fails with ``exc``."""

    model = "fake"

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    async def complete(self, *args, **kwargs):
        raise self.exc


class GivingUp:
    """A solver that searches once and answers nothing."""

    name = "giving-up"
    keep_results = False

    async def solve(self, request, env):
        env.call("accommodation_search", {"city": "Rockford"})
        env.add_step(text="nothing found")


def test_a_solver_failure_or_no_answer_ends_the_episode_as_before(planner_data, applied):
    query = planner_data.queries("validation")[0]
    tools, check = planner_data.database, planner_data.sandbox_for(query)

    def episode_of(agent):
        return asyncio.run(run_planner_episode(query, agent, "two-stage", tools, check))

    down = episode_of(ReactPlanner(Failing(LLMError("server", "down"))))
    assert (down.termination, down.error, down.outcome) == ("error", "agent: server: down",
                                                            "infra_error")  # fmt: skip
    assert down.score["delivered"] is False
    bug = episode_of(ReactPlanner(Failing(ValueError("bad"))))
    assert bug.termination == "error" and bug.error.startswith("ValueError: bad\nTraceback")
    assert bug.cause == "internal: ValueError"
    applied.clear()
    gave_up = episode_of(GivingUp())
    assert applied == ["PlannerTrainingEnv"]
    assert (gave_up.termination, gave_up.outcome, gave_up.error) == ("step_limit", "model_error",
                                                                      None)  # fmt: skip
    assert gave_up.tool_calls == 1 and gave_up.score["delivered"] is False
    assert gave_up.steps[0].tool_calls[0].result is None  # keep_results = False honoured
