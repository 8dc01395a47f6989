"""The TRL ``environment_factory`` environments: every public method is a tool whose schema
``transformers.utils.get_json_schema`` reads, matching the registry's; a short drive of each
(reset, tool calls, the final action, get_reward)."""

from __future__ import annotations

import inspect
import json

import pytest

from tests.training.support import need_train_extra
from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances
from travelgym.suites.behavior2trip.training_env import TripTrainingEnv
from travelgym.suites.behavior2trip.trl_env import TripToolEnv
from travelgym.suites.compass.solver import solve
from travelgym.suites.compass.tasks import load_tasks
from travelgym.suites.compass.training_env import CompassTrainingEnv
from travelgym.suites.compass.trl_env import CompassToolEnv, compass_tool_prompt
from travelgym.training.trl_env import trl_rows, type_hint

pytestmark = pytest.mark.train


@pytest.fixture(scope="module", autouse=True)
def train_extra():
    need_train_extra()


def tool_methods(cls) -> list[str]:
    """The methods TRL exposes as tools (its own selection rule)."""
    return [name for name, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
            if name not in ("reset", "get_reward") and not name.startswith("_")]  # fmt: skip


@pytest.mark.parametrize("cls", [TripToolEnv, CompassToolEnv], ids=["trips", "compass"])
def test_every_tool_has_a_json_schema(cls):
    from transformers.utils import get_json_schema

    from travelgym.suites.behavior2trip.tools import trips_registry
    from travelgym.suites.compass.tools import compass_registry

    registry = trips_registry() if cls is TripToolEnv else compass_registry()
    extra = {"memory", "submit_plan"} if cls is TripToolEnv else {"reply_to_user"}
    names = tool_methods(cls)
    assert set(names) == set(registry.names) | extra
    for name in names:
        schema = get_json_schema(getattr(cls, name))["function"]
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
    assert type_hint({"anyOf": [{"type": "string"}, {"type": "integer"}]}) == str | int
    assert type_hint({"type": "array", "items": {"type": "string"}}) == list[str]


@pytest.mark.slow
def test_trip_tool_env_drive(trips_database, trips_db, trips_instances):
    paths = ensure_instances(trips_database, trips_database.path.parent.parent)
    instances = load_instances(paths["train"], check=False)[:2]
    env = TripToolEnv(TripTrainingEnv(trips_db, instances, max_turns=10))
    task = env.reset(instance_id=instances[1].instance_id)
    assert task.startswith("Behavior trajectory:") and "Instruction:" in task
    found = json.loads(env.AttractionSearch(city="Beijing", n=2))
    assert found["count"] == 2 and found["city"] == "Beijing"
    assert json.loads(env.AttractionSearch(city="Atlantis"))["error"]["category"] == "content"
    assert "Data saved" in env.memory(action="write", key="city", value="Beijing")
    assert json.loads(env.memory(action="read", key="city")) == "Beijing"
    assert env.submit_plan(plan='[{"day": 1}]') == "The plan was submitted."
    assert "over" in env.AttractionSearch(city="Beijing")
    assert env.get_reward() == -1.0  # the failed search is an invalid action
    env.reset(instance_id=instances[0].instance_id)
    assert env.get_reward() == 0.0  # nothing done yet, nothing delivered
    rows = trl_rows("behavior2trip", [instances[0].instance_id])
    assert rows[0]["instance_id"] == instances[0].instance_id
    assert rows[0]["prompt"][0]["role"] == "system" and "submit_plan" in rows[0]["prompt"][0][
        "content"]  # fmt: skip


def test_compass_tool_env_drive(compass_db):
    from travelgym.db import connect_readonly

    task = next(t for t in load_tasks() if t.level == 1)
    conn = connect_readonly(compass_db)
    truth = solve(conn, task)
    conn.close()
    env = CompassToolEnv(CompassTrainingEnv(compass_db, [task], {task.task_id: truth}, max_turns=3))
    opening = env.reset(task_id=task.task_id)
    assert isinstance(opening, str) and opening
    airports = json.loads(env.search_airports(park_name=task.park.park_ids[0]))
    assert airports["airports"]
    plan = truth.optimal_plan
    said = ""
    for _ in range(3):
        said = env.reply_to_user(message="Here is the best plan.", **plan)
        if "over" in said:
            break
    assert env.get_reward() == 1.0  # the optimal plan, accepted
    assert (
        "reply_to_user" in compass_tool_prompt() and "ONE JSON object" not in compass_tool_prompt()
    )
