"""The verifiers environment (``travelgym-env``) against the local OpenAI-compatible test server:
episodes of COMPASS and Behavior2Trip played through verifiers' own rollout machinery, rewards
equal to the suite's reward functions on the same trajectories (replayed through a fresh
training environment), and ``vf-eval`` itself in a subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.integrations.verifiers_support import assistant_actions, require_verifiers

require_verifiers()

from verifiers.v1.clients import EvalClientConfig, ModelContext  # noqa: E402

from tests.fakes.openai_server import FakeOpenAIServer, HTTPError, Reply, tool_call  # noqa: E402
from travelgym.core.errors import UserError  # noqa: E402
from travelgym.core.registry import get_suite  # noqa: E402
from travelgym.integrations.verifiers_env import (  # noqa: E402
    EPISODE_KEY,
    TravelgymTasksetConfig,
    default_suite,
    load_environment,
    open_training_env,
)
from travelgym.runner.batch import RunConfig, run_suite  # noqa: E402
from travelgym.runner.store import read_episodes  # noqa: E402

pytestmark = pytest.mark.verifiers
KEY_VAR = "TRAVELGYM_FAKE_KEY"


@pytest.fixture(scope="module")
def compass_options(compass_db):
    return {"limit": 2, "user": "template", "data_dir": str(Path(compass_db).parent.parent)}


def context(server: FakeOpenAIServer) -> ModelContext:
    os.environ.setdefault(KEY_VAR, "test")
    return ModelContext(model="fake-model",
                        client=EvalClientConfig(base_url=server.base_url, api_key_var=KEY_VAR))  # fmt: skip


def play(env, tasks, server: FakeOpenAIServer) -> list:
    """Every task's episode, all at once (verifiers runs rollouts concurrently)."""

    async def run() -> list:
        async with env.serving():
            return await asyncio.gather(*(env.run_episode(t, context(server)) for t in tasks))

    return asyncio.run(run())


def replay(suite: str, options: dict, task, actions: list) -> tuple[float, object]:
    """The same assistant messages through a fresh training environment of the suite: its
    terminal reward and episode."""
    env = open_training_env(suite, options)
    env.reset(seed=task.data.info["seed"], options={env.task_key: task.data.info["task_id"]})
    native = get_suite(suite).training_tool_calls
    reward = None
    for action in actions:
        _, reward, terminated, truncated, _ = env.step(action if native else action["content"])
        if terminated or truncated:
            break
    episode = env.episode()
    env.close()
    return reward, episode


def compass_responder(options: dict):
    """Per task (told apart by its story in the user's opening line, which a run's sampled
    persona words in its own style): a hotel search, then task 1's optimal plan (the user
    accepts it) and, for task 2, no plan until the user gives up."""
    env = open_training_env("compass", options)
    tasks = list(env.tasks)
    plans = {tasks[0].task_id: env.truths[tasks[0].task_id].optimal_plan,
             tasks[1].task_id: {"hotel": None, "flight": None, "permit": None}}  # fmt: skip
    env.close()

    def respond(body: dict):
        opening = body["messages"][1]["content"]
        task = next(t for t in tasks if t.story in opening)
        if not any(m["role"] == "assistant" for m in body["messages"]):
            return Reply(
                tool_calls=[tool_call("search_hotels", {"park_name": task.park.park_ids[0]})]
            )
        plan = {"message": "Here is my plan.", "recommendation": plans[task.task_id]}
        return Reply(json.dumps(plan))

    return respond


def test_compass_episodes_score_the_suite_reward(compass_options, tmp_path, applied):
    env = load_environment("compass", **compass_options)
    tasks = list(env.taskset)
    assert [t.data.info["task_id"] for t in tasks] == ["compass-001", "compass-002"]
    assert [m.role for m in tasks[0].data.prompt] == ["system", "user"]

    with FakeOpenAIServer(responder=compass_responder(compass_options)) as server:
        episodes = play(env, tasks, server)
    # every model message of the rollouts went through the episode loop's one body
    actions = sum(len(assistant_actions(e.traces[0])) for e in episodes)
    assert actions and applied == ["CompassTrainingEnv"] * actions
    tools = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert tools == set(get_suite("compass").tool_registry().names) and len(tools) == 18

    rewards = []
    for task, episode in zip(tasks, episodes, strict=True):
        assert episode.ok and not episode.errors
        (trace,) = episode.traces
        # the rubric is the suite's reward of the episode the environment played ...
        stored = trace.info[EPISODE_KEY]
        assert trace.rewards["suite_reward"].score == get_suite("compass").reward(stored).total
        # ... and the same model messages replayed through the training environment agree
        actions = assistant_actions(trace)
        assert actions[0]["tool_calls"][0]["function"]["name"] == "search_hotels"
        reward, replayed = replay("compass", compass_options, task, actions)
        assert trace.reward == reward
        assert replayed.final_recommendation == stored["final_recommendation"]
        assert replayed.termination == stored["termination"]
        rewards.append(trace.reward)
    assert rewards == [1.0, 0.0]
    # travelgym's own runner (``travelgym run compass --agent llm:MODEL``) scores the same
    with FakeOpenAIServer(responder=compass_responder(compass_options)) as server:
        config = RunConfig("compass", "llm:fake-model", out=tmp_path / "run", limit=2,
                           base_url=server.base_url, data_dir=compass_options["data_dir"],
                           progress=False, client_options={"max_retries": 0})  # fmt: skip
        asyncio.run(run_suite(config))
    by_task = {
        e.task_id: get_suite("compass").reward(e).total for e in read_episodes(tmp_path / "run")
    }
    assert by_task == {"compass-001": 1.0, "compass-002": 0.0}
    # task 2's three requests for a recommendation go unanswered: the user ends it (simulator 2)
    assert [e.traces[0].info[EPISODE_KEY]["termination"] for e in episodes] == [
        "accepted", "user_ended"]  # fmt: skip


def test_travelplanner_text_actions(tmp_path, monkeypatch):
    """A suite whose actions are text (the B2T format, tools called in the text): a notebook
    read, then the scripted baseline's plan in an ``<answer>``."""
    from tests.suites.travelplanner.suite_data import write_suite_data
    from travelgym.suites.travelplanner.agents.planner import build_plan
    from travelgym.suites.travelplanner.agents.scripted import reference_cities
    from travelgym.suites.travelplanner.plans import plan_json
    from travelgym.suites.travelplanner.sandbox_reference import ReferenceSandbox

    dataset, database = write_suite_data(tmp_path, monkeypatch)
    options = {"split": "validation", "limit": 1, "data": str(dataset / "validation.csv"),
               "database": str(database), "data_dir": str(tmp_path / "data")}  # fmt: skip
    env = load_environment("travelplanner", **options)
    (task,) = list(env.taskset)
    training = open_training_env("travelplanner", options)
    query = training.queries[0]
    training.close()
    sandbox = ReferenceSandbox(query)
    plan = plan_json(build_plan(query, sandbox, reference_cities(sandbox, query.org)))
    first = (
        '<think>Check the notes first.</think><memory>{"action": "read", "key": "plan"}</memory>'
    )
    answer = f"<think>Done.</think><answer>{plan}</answer>"

    def respond(body: dict):
        said = any(m["role"] == "assistant" for m in body["messages"])
        return Reply(answer if said else first)

    with FakeOpenAIServer(responder=respond) as server:
        (episode,) = play(env, [task], server)
    assert "tools" not in server.requests[0]  # the B2T format calls tools in the text
    assert server.requests[1]["messages"][-1]["role"] == "user"  # the environment's reply
    (trace,) = episode.traces
    actions = assistant_actions(trace)
    assert [a["content"] for a in actions] == [first, answer]
    reward, replayed = replay("travelplanner", options, task, actions)
    stored = trace.info[EPISODE_KEY]
    assert trace.reward == reward == get_suite("travelplanner").reward(stored).total
    assert reward > 0 and stored["final_answer"] == replayed.final_answer


def test_model_failure_is_recorded_not_raised(compass_options):
    env = load_environment("compass", **{**compass_options, "limit": 1})
    with FakeOpenAIServer([HTTPError(400, "bad request")] * 3) as server:
        (episode,) = play(env, list(env.taskset), server)
    assert not episode.ok
    (trace,) = episode.traces
    assert trace.errors and EPISODE_KEY not in trace.info


def test_unknown_suite_and_options_are_clear_errors(compass_options):
    with pytest.raises(UserError, match="no suite 'nosuch': installed suites are .*compass"):
        load_environment("nosuch")
    # what vf-eval's --env.taskset.suite validates
    with pytest.raises(ValidationError, match="no suite 'nosuch'"):
        TravelgymTasksetConfig(id="travelgym-env", suite="nosuch")
    assert TravelgymTasksetConfig().suite == default_suite() == "behavior2trip"
    with pytest.raises(UserError, match="unexpected keyword argument 'bogus'"):
        list(load_environment("compass", **compass_options, bogus=1).taskset)


def test_vf_eval_command(compass_options, tmp_path):
    """verifiers' own evaluation command, against the test server, on one task."""
    options = {**compass_options, "limit": 1}
    with FakeOpenAIServer(responder=compass_responder(compass_options)) as server:
        command = [
            str(Path(sys.executable).parent / "vf-eval"), "travelgym-env",
            "--env.taskset.suite", "compass", "--env.taskset.options", json.dumps(options),
            "-m", "fake-model", "--client.base-url", server.base_url,
            "--client.api-key-var", KEY_VAR, "-n", "1", "-c", "1", "--no-push", "--no-rich",
            "-o", str(tmp_path),
        ]  # fmt: skip
        env = {**os.environ, KEY_VAR: "test"}
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    (traces,) = tmp_path.glob("*/traces.jsonl")
    (line,) = traces.read_text().splitlines()
    record = json.loads(line)
    trace = record["traces"][0] if "traces" in record else record
    assert trace["task"]["data"]["id"] == "compass-001"
    assert trace["info"][EPISODE_KEY]["termination"] == "accepted"
    assert trace["info"]["travelgym_outcome"] == "completed"
    assert trace["rewards"]["suite_reward"]["score"] == 1.0
    assert get_suite("compass").reward(trace["info"][EPISODE_KEY]).total == 1.0
    assert len(server.requests) >= 2 and record["ok"]
