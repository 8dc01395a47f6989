"""The TRL ``environment_factory`` environments, one class for every suite over the suite's own
environment in its tools-only mode: every public method is a tool whose schema
``transformers.utils.get_json_schema`` reads, matching the registry's; a short drive of each
(reset, tool calls, the final action, get_reward)."""

from __future__ import annotations

import inspect
import json

import pytest

from tests.training.support import need_train_extra
from travelgym.suites.behavior2trip.environment import TripTrainingEnv
from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances
from travelgym.suites.behavior2trip.tools import trips_registry
from travelgym.suites.compass.environment import CompassTrainingEnv
from travelgym.suites.compass.solver import solve
from travelgym.suites.compass.tasks import load_tasks
from travelgym.suites.compass.tools import compass_registry
from travelgym.training.trl_env import ToolEnvironment, tool_environment, type_hint


def tool_methods(env: ToolEnvironment) -> list[str]:
    """The methods TRL exposes as tools (its own selection rule)."""
    return [name for name, _ in inspect.getmembers(env, predicate=inspect.ismethod)
            if name not in ("reset", "get_reward") and not name.startswith("_")]  # fmt: skip


@pytest.fixture(scope="module")
def compass_case(compass_db):
    from travelgym.db import connect_readonly

    task = next(t for t in load_tasks() if t.level == 1)
    conn = connect_readonly(compass_db)
    truth = solve(conn, task)
    conn.close()
    return task, truth


def compass_env(compass_db, compass_case, **kwargs) -> ToolEnvironment:
    task, truth = compass_case
    return tool_environment(CompassTrainingEnv(compass_db, [task], {task.task_id: truth},
                                               tools_only=True, **kwargs))  # fmt: skip


def trips_env(trips_db, trips_instances, **kwargs) -> ToolEnvironment:
    instances = load_instances(trips_instances["train"], check=False)[:2]
    return tool_environment(TripTrainingEnv(trips_db, instances, tools_only=True, **kwargs))


def check_schemas(env: ToolEnvironment, registry, extra: set[str]) -> None:
    """Every tool method has a JSON schema; the registry's tools have the registry's."""
    from transformers.utils import get_json_schema

    names = tool_methods(env)
    assert set(names) == set(registry.names) | extra
    for name in names:
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


@pytest.mark.slow
@pytest.mark.train
def test_every_tool_has_a_json_schema(compass_db, compass_case, trips_db, trips_instances):
    need_train_extra()
    check_schemas(trips_env(trips_db, trips_instances), trips_registry(), {"memory", "submit_plan"})
    check_schemas(trips_env(trips_db, trips_instances, memory=False), trips_registry(),
                  {"submit_plan"})  # fmt: skip
    check_schemas(compass_env(compass_db, compass_case), compass_registry(), {"reply_to_user"})
    assert type_hint({"anyOf": [{"type": "string"}, {"type": "integer"}]}) == str | int
    assert type_hint({"type": "array", "items": {"type": "string"}}) == list[str]


@pytest.mark.slow
def test_a_tool_method_keeps_the_tool_signature(trips_db, trips_instances):
    env = trips_env(trips_db, trips_instances)
    registry = trips_registry()
    for name in registry.names:
        ours = registry[name].json_schema()
        params = inspect.signature(getattr(env, name)).parameters
        assert set(params) == set(ours["properties"])
        required = {p.name for p in params.values() if p.default is inspect.Parameter.empty}
        assert required == set(ours.get("required", []))


@pytest.mark.slow
def test_trip_tool_env_drive(trips_database, trips_db, trips_instances):
    paths = ensure_instances(trips_database, trips_database.path.parent.parent)
    instances = load_instances(paths["train"], check=False)[:2]
    env = tool_environment(TripTrainingEnv(trips_db, instances, max_turns=10, tools_only=True))
    task = env.reset(instance_id=instances[1].instance_id)
    assert task.startswith("Behavior trajectory:") and "Instruction:" in task
    found = json.loads(env.AttractionSearch(city="Beijing", n=2))
    assert found["count"] == 2 and found["city"] == "Beijing"
    assert json.loads(env.AttractionSearch(city="Atlantis"))["error"]["category"] == "content"
    assert "Data saved" in env.memory(action="write", key="city", value="Beijing")
    assert json.loads(env.memory(action="read", key="city")) == "Beijing"
    assert env.submit_plan(plan='[{"day": 1}]') == "The task is over (answered)."
    assert "over" in json.loads(env.AttractionSearch(city="Beijing"))["error"]
    assert env.get_reward() == -1.0  # the failed search is an invalid action
    episode = env._env.episode()  # the evaluation's episode record, its steps the calls made
    assert episode.termination == "answered" and len(episode.steps) == 5
    env.reset(instance_id=instances[0].instance_id)
    assert env.get_reward() == 0.0  # nothing done yet, nothing delivered


def test_compass_tool_env_drive(compass_db, compass_case):
    task, truth = compass_case
    env = compass_env(compass_db, compass_case, max_turns=3)
    opening = env.reset(task_id=task.task_id)
    assert isinstance(opening, str) and opening
    airports = json.loads(env.search_airports(park_name=task.park.park_ids[0]))
    assert airports["airports"]
    said = ""
    for _ in range(3):
        said = env.reply_to_user(message="Here is the best plan.", **truth.optimal_plan)
        if "over" in said:
            break
    assert said.startswith("The task is over")
    assert env.get_reward() == 1.0  # the optimal plan, accepted
    system = env._env.messages[0]["content"]
    assert "reply_to_user" in system and "ONE JSON object" not in system


def test_rows_carry_the_environments_prompt(compass_db, compass_case, monkeypatch):
    from travelgym.training.trl_env import ToolEnvironmentFactory

    task, truth = compass_case

    class OneTask:  # the suite's training_env, over the fixture's task
        def training_env(self, **options):
            return CompassTrainingEnv(compass_db, [task], {task.task_id: truth}, **options)

    factory = ToolEnvironmentFactory(OneTask())
    rows = factory.rows()
    assert [r["task_id"] for r in rows] == [task.task_id]
    assert rows[0]["prompt"][0]["role"] == "system"
    assert "reply_to_user" in rows[0]["prompt"][0]["content"]
    assert rows[0]["prompt"][1] == {"role": "user", "content": ""}
    assert isinstance(factory(), ToolEnvironment)
