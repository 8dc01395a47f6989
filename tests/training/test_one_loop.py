"""One episode loop (issue 33): the same scripted policy on the same Behavior2Trip instance gives
the same episode whether it is evaluated (``travelgym run behavior2trip --agent b2t:MODEL``
against a loopback server), stepped through the Gymnasium environment, or rolled out for GRPO
(token ids through the tiny model's tokenizer): the same turns, the same score, and a GRPO
reward equal to the suite's reward of the evaluated episode."""

from __future__ import annotations

import itertools
import json

import pytest
from click.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.training.support import need_extra, need_train_extra
from travelgym.cli import main
from travelgym.core.registry import get_suite
from travelgym.llm.hf_client import encode
from travelgym.runner.store import read_episodes
from travelgym.suites.behavior2trip.environment import TripTrainingEnv
from travelgym.suites.behavior2trip.instance_sets import load_split
from travelgym.training.rollout import run_rollout

pytestmark = pytest.mark.train


@pytest.fixture(scope="module")
def case(trips_database, tiny_tokenizer):
    """The data directory, the first test instance and a script of three B2T messages (a tool
    call and a memory write, a memory read, the instance's witness as the answer), each as the
    tiny tokenizer gives it back (what a rollout's policy said)."""
    need_train_extra()
    data_dir = trips_database.path.parent.parent
    _, (instance,), _ = load_split("test", data_dir=data_dir, limit=1)
    city = instance.instruction.destination_city
    call = {"name": "WeatherSearch", "arguments": {"city": city}}
    texts = [f"<think>Weather first.</think>\n<tool_call>{json.dumps(call)}</tool_call>\n"
             f"<memory>{json.dumps({'action': 'write', 'key': 'city', 'value': city})}</memory>",
             '<memory>{"action": "read", "key": "city"}</memory>',
             f"<answer>{instance.witness}</answer>"]  # fmt: skip
    said = [tiny_tokenizer.decode(encode(tiny_tokenizer, t), skip_special_tokens=True)
            for t in texts]  # fmt: skip
    return data_dir, instance, said, trips_database.path


def comparable(episode, keys: tuple[str, ...], part: str = "steps") -> dict:
    """What an episode did (its ``keys``), without clocks and model accounting in its ``part``
    (steps or turns)."""
    dump = episode.model_dump(mode="json")
    for step in dump[part]:
        step.pop("duration_s"), step.pop("usage")
        for call in step["tool_calls"]:
            call.pop("duration_ms")
    return {k: dump[k] for k in keys}


TRIP_KEYS = ("instance_id", "messages", "steps", "final_answer", "termination", "invalid_actions",
             "memory", "tool_calls", "score", "outcome")  # fmt: skip


class Scripted:
    """A rollout's ``generate``: the token ids of ``texts`` in turn (closed by EOS), again from
    the start when ``cycle``."""

    def __init__(self, tokenizer, texts: list[str], cycle: bool = False) -> None:
        self.tokenizer = tokenizer
        self.texts = itertools.cycle(texts) if cycle else iter(texts)

    def __call__(self, ids, max_new):
        out = encode(self.tokenizer, next(self.texts)) + [self.tokenizer.eos_token_id]
        return out[:max_new]


def evaluated(tmp_path, data_dir, instance, said):
    def respond(body: dict) -> Reply:
        return Reply(said[sum(m["role"] == "assistant" for m in body["messages"])])

    with FakeOpenAIServer(responder=respond) as server:
        done = CliRunner().invoke(main, ["run", "behavior2trip", "--agent", "b2t:fake-model",
                                         "--tasks", instance.instance_id, "--base-url",
                                         server.base_url, "--out", str(tmp_path), "--data-dir",
                                         str(data_dir), "--no-progress", "--json"])  # fmt: skip
    assert done.exit_code == 0, done.output
    (episode,) = read_episodes(tmp_path / "b2t-fake-model")
    return episode


def stepped(data_dir, instance, said):
    need_extra("gym", ("gymnasium",))
    import gymnasium

    from travelgym.integrations.gym_env import register_envs

    register_envs()
    env = gymnasium.make("travelgym/Behavior2Trip-v0", split="test", data_dir=str(data_dir),
                         limit=1)  # fmt: skip
    env.reset(options={"task_id": instance.instance_id})
    for text in said:
        *_, terminated, truncated, info = env.step(text)
    assert terminated and not truncated
    episode = env.unwrapped.episode()
    env.close()
    return episode, info["breakdown"]


def test_evaluation_gymnasium_and_grpo_play_one_episode(tmp_path, case, tiny_tokenizer, applied):
    data_dir, instance, said, db = case
    run_episode = evaluated(tmp_path, data_dir, instance, said)
    gym_episode, gym_breakdown = stepped(data_dir, instance, said)

    env = TripTrainingEnv(db, [instance])
    # the answer is a whole trip's witness plan: thousands of the tiny tokenizer's tokens
    rollout = run_rollout(env, tiny_tokenizer, Scripted(tiny_tokenizer, said), options={"index": 0},
                          max_new_tokens=1 << 16, max_completion_length=1 << 20)  # fmt: skip
    env.close()
    assert rollout.stop == "terminated" and rollout.turns == 3
    # each of the three drivers applied its three messages through the loop's one body
    assert applied == ["TripTrainingEnv"] * 9

    assert (comparable(run_episode, TRIP_KEYS) == comparable(gym_episode, TRIP_KEYS)
            == comparable(rollout.episode, TRIP_KEYS))  # fmt: skip
    assert run_episode.score["final"] is True  # the witness: every applicable check passes
    # the GRPO reward is the suite's reward of the evaluated episode (its score, its penalty)
    reward = get_suite("behavior2trip").reward(run_episode)
    assert rollout.reward == reward.total and rollout.breakdown == reward.model_dump()
    assert gym_breakdown == reward.model_dump()


def test_travelplanner_evaluation_gymnasium_and_grpo_play_one_episode(tmp_path, tiny_tokenizer,
                                                                      applied, monkeypatch):  # fmt: skip
    """The same for TravelPlanner's B2T-format agent in two-stage mode (tools over the
    database): a tool call, a memory write and read, the scripted baseline's plan."""
    from tests.suites.travelplanner.suite_data import write_suite_data
    from travelgym.suites.travelplanner.agents.planner import build_plan
    from travelgym.suites.travelplanner.agents.scripted import reference_cities
    from travelgym.suites.travelplanner.environment import PlannerTrainingEnv
    from travelgym.suites.travelplanner.ingest import ingest
    from travelgym.suites.travelplanner.plans import plan_json
    from travelgym.suites.travelplanner.source import reference_sandbox

    need_extra("gym", ("gymnasium",))
    import gymnasium

    from travelgym.integrations.gym_env import register_envs

    dataset, database = write_suite_data(tmp_path / "tp", monkeypatch)
    data_dir = tmp_path / "data"
    ingest(dataset, database, data_dir)
    env = PlannerTrainingEnv.from_split("validation", data_dir=data_dir, mode="two-stage")
    query = env.queries[0]
    sandbox = reference_sandbox(query)
    plan = plan_json(build_plan(query, sandbox, reference_cities(sandbox, query.org)))
    call = {"name": "accommodation_search", "arguments": {"city": query.dest}}
    texts = [f"<tool_call>{json.dumps(call)}</tool_call>"
             '<memory>{"action": "write", "key": "k", "value": 1}</memory>',
             '<memory>{"action": "read", "key": "k"}</memory>', f"<answer>{plan}</answer>"]  # fmt: skip
    said = [tiny_tokenizer.decode(encode(tiny_tokenizer, t), skip_special_tokens=True)
            for t in texts]  # fmt: skip

    def respond(body: dict) -> Reply:
        return Reply(said[sum(m["role"] == "assistant" for m in body["messages"])])

    with FakeOpenAIServer(responder=respond) as server:
        done = CliRunner().invoke(main, ["run", "travelplanner", "--agent", "b2t:fake-model",
                                         "--mode", "two-stage", "--split", "validation",
                                         "--tasks", query.task_id, "--base-url", server.base_url,
                                         "--out", str(tmp_path / "runs"), "--data-dir",
                                         str(data_dir), "--no-progress", "--json"])  # fmt: skip
    assert done.exit_code == 0, done.output
    (run_episode,) = read_episodes(tmp_path / "runs" / "b2t-fake-model")

    register_envs()
    gym = gymnasium.make("travelgym/TravelPlanner-v0", split="validation", data_dir=str(data_dir),
                         mode="two-stage")  # fmt: skip
    gym.reset(options={"task_id": query.task_id})
    for text in said:
        *_, terminated, truncated, info = gym.step(text)
    assert terminated and not truncated
    gym_episode = gym.unwrapped.episode()
    gym.close()

    rollout = run_rollout(env, tiny_tokenizer, Scripted(tiny_tokenizer, said),
                          options={"task_id": query.task_id},
                          max_new_tokens=4096, max_completion_length=1 << 20)  # fmt: skip
    env.close()

    keys = ("task_id", "messages", "steps", "final_answer", "termination", "invalid_actions",
            "tool_calls", "notebook", "score", "outcome")  # fmt: skip
    assert (comparable(run_episode, keys) == comparable(gym_episode, keys)
            == comparable(rollout.episode, keys))  # fmt: skip
    assert run_episode.score["delivered"] and run_episode.tool_calls == 1
    assert applied == ["PlannerTrainingEnv"] * (3 * len(said))  # the loop's one body, thrice
    reward = get_suite("travelplanner").reward(run_episode)
    assert rollout.reward == reward.total and rollout.breakdown == reward.model_dump()
    assert info["breakdown"] == reward.model_dump()


def test_compass_evaluation_gymnasium_and_grpo_play_one_conversation(tmp_path, compass_db,
                                                                     tiny_tokenizer, applied):  # fmt: skip
    """The same for COMPASS's tool-calling model (native tool calls at evaluation, prompted
    ``<tool_call>`` blocks for a token-level policy): each agent turn a tool call, then the
    optimal plan; the template user answers. Same turns, tool calls, messages and score."""
    from tests.fakes.openai_server import tool_call
    from travelgym.llm.prompted_tools import split_tool_calls
    from travelgym.suites.compass.environment import CompassTrainingEnv
    from travelgym.suites.compass.ground_truth import ensure_ground_truth
    from travelgym.suites.compass.tasks import load_tasks

    need_extra("gym", ("gymnasium",))
    import gymnasium

    from travelgym.integrations.gym_env import register_envs

    data_dir = compass_db.parent.parent
    task = load_tasks()[0]
    _, truths = ensure_ground_truth(seed=0, data_dir=data_dir)
    call = {"name": "search_airports", "arguments": {"park_name": "Yosemite"}}
    final = json.dumps(
        {"message": "This is it.", "recommendation": truths[task.task_id].optimal_plan}
    )
    said = [tiny_tokenizer.decode(encode(tiny_tokenizer, t), skip_special_tokens=True)
            for t in (f"<tool_call>\n{json.dumps(call)}\n</tool_call>", final)]  # fmt: skip
    content, calls = split_tool_calls(said[0])
    native = [tool_call(c["function"]["name"], c["function"]["arguments"], c["id"]) for c in calls]

    def respond(body: dict) -> Reply:
        if body["messages"][-1]["role"] == "user":
            return Reply(content, tool_calls=native)
        return Reply(said[1])

    with FakeOpenAIServer(responder=respond) as server:
        done = CliRunner().invoke(main, ["run", "compass", "--agent", "llm:fake-model",
                                         "--tasks", task.task_id, "--max-turns", "3",
                                         "--personas", "task", "--base-url", server.base_url,
                                         "--out", str(tmp_path), "--data-dir", str(data_dir),
                                         "--no-progress", "--json"])  # fmt: skip
    assert done.exit_code == 0, done.output
    (run_episode,) = read_episodes(tmp_path / "llm-fake-model")

    register_envs()
    gym = gymnasium.make("travelgym/COMPASS-v0", data_dir=str(data_dir), task_ids=[task.task_id],
                         max_turns=3, rank=False)  # fmt: skip
    gym.reset(options={"task_id": task.task_id})
    text, ended = said[0], False
    while not ended:
        _, _, terminated, truncated, info = gym.step(text)
        ended = terminated or truncated
        text = said[1] if info["messages"] and info["messages"][-1]["content"].startswith(
            "<tool_response>") else said[0]  # fmt: skip
    gym_episode = gym.unwrapped.episode()
    gym.close()

    env = CompassTrainingEnv(compass_db, [task], truths, max_turns=3, rank=False)
    rollout = run_rollout(env, tiny_tokenizer, Scripted(tiny_tokenizer, said, cycle=True),
                          options={"task_id": task.task_id},
                          max_new_tokens=4096, max_completion_length=1 << 20)  # fmt: skip
    env.close()

    keys = ("task_id", "turns", "messages", "final_recommendation", "termination", "llm_calls",
            "score", "outcome")  # fmt: skip
    assert (comparable(run_episode, keys, "turns") == comparable(gym_episode, keys, "turns")
            == comparable(rollout.episode, keys, "turns"))  # fmt: skip
    assert run_episode.score["optimal"] and len(run_episode.turns) >= 3
    assert applied == ["CompassTrainingEnv"] * (3 * rollout.turns)  # the loop's one body, thrice
    reward = get_suite("compass").reward(run_episode)
    assert rollout.reward == reward.total and rollout.breakdown == reward.model_dump()
