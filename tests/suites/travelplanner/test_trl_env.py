"""TravelPlanner as a TRL ``environment_factory`` environment on the hand-made data: the tool
methods come from the registry (names and schemas), a scripted drive (tool calls, then
``submit_plan``) earns the suite's reward of the plan, calls after the submission are refused
and bad arguments are a one-line error."""

from __future__ import annotations

import inspect
import json

import pytest

from tests.training.support import need_train_extra
from travelgym.core.registry import get_suite
from travelgym.suites.travelplanner.agents.planner import build_plan
from travelgym.suites.travelplanner.agents.scripted import reference_cities
from travelgym.suites.travelplanner.ingest import ingest
from travelgym.suites.travelplanner.plans import plan_json, score_plan
from travelgym.suites.travelplanner.prompts import TOOL_SYSTEM
from travelgym.suites.travelplanner.source import PlannerData, reference_sandbox
from travelgym.suites.travelplanner.tools import planner_registry
from travelgym.training.trl_env import environment_factory, trl_rows

SUITE = get_suite("travelplanner")


def tool_methods(env) -> list[str]:
    """The methods TRL exposes as tools (its own selection rule)."""
    return [name for name, _ in inspect.getmembers(env, predicate=inspect.ismethod)
            if name not in ("reset", "get_reward") and not name.startswith("_")]  # fmt: skip


@pytest.fixture
def data_dir(tp_suite_data, tmp_path):
    """The hand-made dataset and database, ingested."""
    dataset, database = tp_suite_data
    ingest(dataset, database, tmp_path / "data")
    return tmp_path / "data"


def known_plan(data_dir, task_id: str) -> tuple[str, float]:
    """The scripted baseline's plan of ``task_id`` and the suite's reward of it."""
    data = PlannerData.open(None, None, data_dir, "validation")
    try:
        query = next(q for q in data.queries("validation") if q.task_id == task_id)
        sandbox = reference_sandbox(query)
        plan = plan_json(build_plan(query, sandbox, reference_cities(sandbox, query.org)))
        score = score_plan(query, plan, data.sandbox_for(query))
    finally:
        data.close()
    return plan, SUITE.reward({"score": score}).total


def test_tool_methods_are_the_registry_tools(data_dir):
    registry = planner_registry()
    env = environment_factory("travelplanner", split="validation", data_dir=data_dir)()
    assert set(tool_methods(env)) == set(registry.names) | {"submit_plan"}
    for name in registry.names:
        ours = registry[name].json_schema()
        signature = inspect.signature(getattr(env, name))
        assert set(signature.parameters) == set(ours["properties"])
        required = {p.name for p in signature.parameters.values()
                    if p.default is inspect.Parameter.empty}  # fmt: skip
        assert required == set(ours.get("required", []))
    env._env.close()


@pytest.mark.train
def test_every_tool_has_a_json_schema(data_dir):
    need_train_extra()
    from transformers.utils import get_json_schema

    registry = planner_registry()
    env = environment_factory("travelplanner", split="validation", data_dir=data_dir)()
    for name in tool_methods(env):
        schema = get_json_schema(getattr(env, name))["function"]
        assert schema["name"] == name and schema["description"]
        params = schema["parameters"]
        assert all(p.get("description") for p in params["properties"].values())
        if name in registry:
            ours = registry[name].json_schema()
            assert set(params["properties"]) == set(ours["properties"])
            assert set(params.get("required", [])) == set(ours.get("required", []))
            for key, prop in ours["properties"].items():
                if "enum" in prop:
                    assert params["properties"][key]["enum"] == prop["enum"]


def test_planner_tool_env_drive(data_dir):
    plan, expected = known_plan(data_dir, "validation-3")
    assert 0.0 < expected < 1.0  # every constraint but the budget
    env = environment_factory("travelplanner", split="validation", data_dir=data_dir)()
    query = env.reset(task_id="validation-3")
    assert query.startswith("Query: A 5-day trip for 3")
    assert env.get_reward() == 0.0  # nothing delivered yet
    cities = json.loads(env.city_search(state="Illinois"))
    assert {"Chicago", "Rockford"} <= set(cities["cities"])
    rooms = json.loads(env.accommodation_search(city="Chicago"))
    assert rooms["count"] >= 1
    flights = env.flight_search(departure_city="St. Petersburg", destination_city="Chicago",
                                date="2022-03-20")  # fmt: skip
    assert "F1000001" in flights
    assert "error" not in json.loads(env.notebook_write(short_description="Flights"))
    bad = env.flight_search(departure_city="St. Petersburg")  # no destination, no date
    assert "\n" not in bad and json.loads(bad)["error"]
    bad = env.accommodation_search(city=["Chicago"], nonsense=1)
    assert "\n" not in bad and json.loads(bad)["error"]
    assert env.submit_plan(plan=plan) == "The task is over (answered)."
    refused = env.accommodation_search(city="Chicago")
    assert "\n" not in refused and "(answered)" in json.loads(refused)["error"]
    assert "task is over" in env.submit_plan(plan=plan)
    assert env.get_reward() == pytest.approx(expected)
    episode = env._env.episode()
    assert episode.mode == "two-stage" and episode.tool_calls == 6
    assert episode.invalid_actions == 2 and episode.termination == "answered"
    env.reset(task_id="validation-1")
    assert env.get_reward() == 0.0
    env._env.close()


def test_a_full_plan_earns_one_and_the_call_limit_ends_the_task(data_dir):
    plan, expected = known_plan(data_dir, "validation-1")
    assert expected == 1.0  # passes every constraint
    factory = environment_factory("travelplanner", split="validation", data_dir=data_dir,
                                  max_turns=2)  # fmt: skip
    env = factory()
    env.reset(task_id="validation-1")
    assert json.loads(env.restaurant_search(city="Rockford"))["count"] >= 1
    assert (
        env.submit_plan(plan=json.loads(plan)) == "The task is over (answered)."
    )  # a list is fine
    assert env.get_reward() == 1.0
    env.reset(task_id="validation-1")
    env.restaurant_search(city="Rockford")
    assert env.restaurant_search(city="Rockford") == "The task is over (step_limit)."
    assert "(step_limit)" in json.loads(env.submit_plan(plan=plan))["error"]
    assert env.get_reward() == 0.0  # nothing delivered
    env._env.close()


def test_rows_and_prompt(data_dir):
    rows = trl_rows("travelplanner", ["validation-1"], split="validation", data_dir=data_dir)
    assert rows[0]["task_id"] == "validation-1"
    system = rows[0]["prompt"][0]
    assert system["role"] == "system" and system["content"].startswith(TOOL_SYSTEM)
    assert "submit_plan" in system["content"] and "<answer>" not in system["content"]
    every = trl_rows("travelplanner", split="validation", data_dir=data_dir)
    assert [r["task_id"] for r in every][:2] == ["validation-1", "validation-2"]
