"""The Gymnasium environments (``travelgym.integrations.gym_env``): one per trainable suite,
made by ``gymnasium.make``; a COMPASS episode replayed from a ``travelgym run`` trajectory plays
the same conversation to the same reward; ``check_env`` passes for every suite; observations
(Behavior2Trip's Chinese included) lie in the Text space; bad options are clear errors."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from tests.training.support import need_extra

need_extra("gym", ("gymnasium",), module_level=True)

import gymnasium  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402

from travelgym.core.environment import Transition  # noqa: E402
from travelgym.core.registry import get_suite  # noqa: E402
from travelgym.integrations.gym_env import (  # noqa: E402
    REPLACEMENT,
    env_id,
    register_envs,
    suite_charset,
)
from travelgym.llm.prompted_tools import to_prompted_messages  # noqa: E402
from travelgym.training.base import training_suites  # noqa: E402

IDS = {"compass": "travelgym/COMPASS-v0", "behavior2trip": "travelgym/Behavior2Trip-v0",
       "travelplanner": "travelgym/TravelPlanner-v0"}  # fmt: skip


@pytest.fixture(scope="module")
def compass_options(compass_db) -> dict:
    return {"data_dir": str(Path(compass_db).parent.parent), "limit": 2}


@pytest.fixture(scope="module")
def trips_options(trips_database) -> dict:
    return {"split": "test", "data_dir": str(trips_database.path.parent.parent), "limit": 3}


@pytest.fixture(scope="module")
def planner_options(tmp_path_factory) -> dict:
    from tests.suites.travelplanner.conftest import write_database, write_dataset
    from travelgym.suites.travelplanner.ingest import ingest

    root = tmp_path_factory.mktemp("planner")
    ingest(write_dataset(root / "dataset"), write_database(root / "database"), root / "data")
    return {"split": "validation", "data_dir": str(root / "data")}


def options_of(request, suite: str) -> dict:
    fixture = {"compass": "compass_options", "behavior2trip": "trips_options",
               "travelplanner": "planner_options"}[suite]  # fmt: skip
    return request.getfixturevalue(fixture)


def test_every_trainable_suite_is_registered_under_its_title():
    ids = register_envs()
    assert ids == [env_id(s) for s in training_suites()]
    assert set(IDS.values()) <= set(ids) and all(i in gymnasium.registry for i in ids)
    assert register_envs() == ids  # again: no duplicate, no override
    assert gymnasium.registry[IDS["behavior2trip"]].kwargs == {"suite": "behavior2trip"}


def test_make_in_a_fresh_interpreter_with_the_module_prefix(planner_options):
    code = (
        "import gymnasium, json, sys\n"
        "env = gymnasium.make('travelgym.integrations.gym_env:travelgym/TravelPlanner-v0',"
        " **json.loads(sys.argv[1]))\n"
        "obs, info = env.reset(options={'task_id': 'validation-2'})\n"
        "print(json.dumps([type(env.unwrapped).__name__, info['task_id'], 'Query:' in obs]))\n"
        "env.close()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(planner_options)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == ["TravelGymEnv", "validation-2", True]


# --- COMPASS: the runner's episodes replayed ----------------------------------------------


def turn_actions(turn: dict) -> list[str]:
    """An agent turn of a stored COMPASS episode as the text actions that make it: its tool
    calls as one message of prompted ``<tool_call>`` blocks, then its reply in the JSON
    response format."""
    calls = [{"id": f"c{i}", "type": "function",
              "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
             for i, c in enumerate(turn["tool_calls"]) if c.get("parent") is None]  # fmt: skip
    actions = []
    if calls:
        message = {"role": "assistant", "content": None, "tool_calls": calls}
        actions.append(to_prompted_messages([message], None)[0]["content"])
    reply = {"message": turn["text"], "recommendation": turn["recommendation"]}
    return [*actions, json.dumps(reply)]


def test_compass_replay_of_a_run_scores_as_the_runner(compass_options, tmp_path):
    from click.testing import CliRunner

    from travelgym.cli import main

    out = tmp_path / "runs"
    result = CliRunner().invoke(main, ["run", "compass", "--agent", "scripted:greedy",
                                       "--tasks", "compass-021,compass-005", "--personas", "task",
                                       "--data-dir", compass_options["data_dir"],
                                       "--out", str(out), "--no-progress"])  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = (out / "scripted-greedy" / "episodes.jsonl").read_text().splitlines()
    episodes = [json.loads(x) for x in lines]
    suite = get_suite("compass")
    # the training environment's user takes the task file's persona (--personas task) and
    # the runner scores without the exact rank (rank=False)
    env = gymnasium.make(IDS["compass"], rank=False, **{**compass_options, "limit": 21})
    rewards = []
    for stored in episodes:
        obs, info = env.reset(seed=stored["seed"], options={"task_id": stored["task_id"],
                                                            "trial": stored["trial"]})  # fmt: skip
        turns = stored["turns"]
        assert info["task_id"] == stored["task_id"] and obs.endswith(turns[0]["text"])
        said = [t["text"] for t in turns[2::2]]  # the user's replies after each agent turn
        heard, reward, ended, info = [], 0.0, False, {}
        for turn in turns[1::2]:
            actions = turn_actions(turn)
            for action in actions:
                assert not ended
                obs, reward, terminated, truncated, info = env.step(action)
                assert obs in env.observation_space and info["replaced_chars"] == 0
                ended = terminated or truncated
            if not ended:
                heard.append(obs)
        assert ended and not truncated
        assert heard == said[:-1]  # the last reply (acceptance) ends the episode, unseen
        expected = suite.reward(stored)
        assert reward == expected.total and info["breakdown"] == expected.model_dump()
        assert info["outcome"] == stored["outcome"]  # as the run recorded it
        assert json.loads(env.unwrapped.episode().model_dump_json())["score"] == stored["score"]
        rewards.append(reward)
    env.close()
    # one plan in the top 5 %, one feasible plan outside the tiers: two different rewards
    assert rewards == [0.875, 0.5]


# --- every suite ------------------------------------------------------------------------------


@pytest.mark.parametrize("suite", sorted(IDS))
def test_check_env_passes(suite, request):
    env = gymnasium.make(IDS[suite], **options_of(request, suite))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)  # random Text actions, every render mode, close twice
    # gymnasium's checker reports what is wrong as warnings ("WARN: ..."): none
    assert [
        str(w.message) for w in caught if "WARN" in str(w.message) or "gymnasium" in w.filename
    ] == []
    assert env.unwrapped.observation_space.min_length == 0
    env.close()


def cjk(text: str) -> int:
    return sum("\u4e00" <= c <= "\u9fff" for c in text)


def test_observations_lie_in_the_space_chinese_included(trips_options, trips_database):
    charset = suite_charset(get_suite("behavior2trip"))
    with sqlite3.connect(trips_database.path) as conn:  # every city's Chinese name
        names = "".join(r[0] for r in conn.execute("SELECT name_zh FROM cities"))
    assert cjk(names) == len(names) > 20 and set(names) <= set(charset)
    assert "\u4e00" not in suite_charset(get_suite("compass"))

    env = gymnasium.make(IDS["behavior2trip"], **trips_options)
    env.action_space.seed(0)
    seen = []
    for task_id in env.unwrapped.task_ids:
        obs, info = env.reset(seed=0, options={"instance_id": task_id})
        seen.append((obs, info))
        for city in ("北京", "Shanghai"):
            call = {"name": "WeatherSearch", "arguments": {"city": city, "n": 1}}
            seen.append(env.step(f"<tool_call>{json.dumps(call, ensure_ascii=False)}</tool_call>"))
        seen.append(env.step(env.action_space.sample()))
    observations = [s[0] for s in seen]
    infos = [s[-1] for s in seen]
    assert len(observations) == 4 * len(env.unwrapped.task_ids) == 12
    assert all(o in env.observation_space for o in observations)
    assert all(i["replaced_chars"] == 0 and i["cut_chars"] == 0 for i in infos)
    assert sum(cjk(o) > 0 for o in observations) >= 6  # the weather answers name 北京/上海
    assert "Beijing (北京)" in observations[1] and "上海" in observations[2]
    env.close()


def test_long_observations_are_cut_to_the_space(compass_options):
    env = gymnasium.make(IDS["compass"], max_length=4096, **compass_options)
    obs, info = env.reset(seed=3)
    assert len(obs) == 4096 and info["cut_chars"] > 10_000 and obs in env.observation_space
    assert obs == "\n\n".join(m["content"] for m in info["messages"])[:4096]
    env.close()


# --- a suite of another package ---------------------------------------------------------------


class EchoEnv:
    """A minimal environment (``travelgym.core.environment``): the observation repeats the
    action; "5" ends the episode with reward 1, the third other message with reward 0."""

    task_key = "task_id"
    item_ids = ["sum-1", "sum-2"]
    native_tools = False

    def __init__(self, max_turns: int = 3) -> None:
        self.max_turns, self.closed = max_turns, False

    def reset(self, seed, options):
        options = options or {}
        self.task = options.get("task_id", self.item_ids[options.get("index", 0)])
        self.turn, self.reward = 0, None
        return [{"role": "user", "content": f"{self.task}: 2 + 3 = ? (ответ)"}], {
            "task_id": self.task
        }

    def transition(self, text):
        self.turn += 1
        if "5" in text or self.turn >= self.max_turns:
            self.reward = 1.0 if "5" in text else 0.0
            return Transition([], self.reward, "5" in text, "5" not in text)
        return Transition([{"role": "user", "content": f"not {text}"}], 0.0, False, False)

    def breakdown(self):
        return {"total": self.reward}

    def close(self):
        self.closed = True


@pytest.fixture
def echo_suite(tmp_path, monkeypatch):
    """A trainable suite installed at run time (the toy suite plus a training environment and
    Cyrillic in its text ranges), as another package's would be."""
    from tests.core.toy_suite import SOURCE
    from travelgym.core import registry

    (tmp_path / "gym_toy_suite.py").write_text(SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    from gym_toy_suite import ToySuite

    class EchoSuite(ToySuite):
        name, title, trainable = "echo", "Echo Sums!", True
        text_ranges = ((0x0400, 0x04FF),)

        def training_env(self, **kwargs):
            return EchoEnv(**kwargs)

    monkeypatch.setitem(registry._suites(), "echo", EchoSuite())
    yield "travelgym/EchoSums-v0"
    gymnasium.registry.pop("travelgym/EchoSums-v0", None)


def test_a_suite_of_another_package_gets_an_environment(echo_suite):
    assert echo_suite in register_envs()
    env = gymnasium.make(echo_suite, max_turns=4)
    obs, info = env.reset(options={"task_id": "sum-2"})
    assert obs == "sum-2: 2 + 3 = ? (ответ)" and obs in env.observation_space
    obs, reward, terminated, truncated, info = env.step("six 🙂 六")  # outside its charset
    assert obs == f"not six {REPLACEMENT} {REPLACEMENT}" and info["replaced_chars"] == 2
    assert obs in env.observation_space and (reward, terminated, truncated) == (0.0, False, False)
    obs, reward, terminated, truncated, info = env.step("5")
    assert (obs, reward, terminated, info["breakdown"]) == ("", 1.0, True, {"total": 1.0})
    check_env(env.unwrapped)
    text_env = env.unwrapped.text_env
    env.close()
    assert text_env.closed


# --- errors, rendering, closing ----------------------------------------------------------------


def test_bad_options_actions_and_kwargs_are_clear_errors(compass_options):
    env = gymnasium.make(IDS["compass"], **compass_options)
    with pytest.raises(gymnasium.error.ResetNeeded, match="reset"):
        env.unwrapped.step("hello")
    bad = {
        "unknown reset option 'level'": {"level": 2},
        "unknown task_id 'compass-999': this environment has 2 tasks": {"task_id": "compass-999"},
        "a task id is a string": {"task_id": 7},
        "name one task": {"task_id": "compass-001", "index": 1},
        "index must be an integer from 0 to 1": {"index": 2},
        "trial must be a non-negative integer": {"trial": -1},
    }
    for message, options in bad.items():
        with pytest.raises(ValueError, match=message):
            env.reset(options=options)
    with pytest.raises(ValueError, match="index must be"):
        env.reset(options={"index": True})
    with pytest.raises(ValueError, match="reset options must be a dict"):
        env.reset(options=["compass-001"])
    obs, info = env.reset(options={"index": 1, "trial": 2})
    assert info["task_id"] == "compass-002"
    with pytest.raises(TypeError, match=r"model's message text \(str\), not dict"):
        env.step({"role": "assistant", "content": "hi"})
    env.close()
    with pytest.raises(gymnasium.error.ClosedEnvironmentError):
        env.reset()
    with pytest.raises(ValueError, match="levle"):
        gymnasium.make(IDS["compass"], levle=2, **compass_options)
    with pytest.raises(ValueError, match="max_length must be a positive integer"):
        gymnasium.make(IDS["compass"], max_length=0, **compass_options)


def test_an_episode_that_ends_needs_a_reset_and_renders(planner_options, capsys):
    env = gymnasium.make(IDS["travelplanner"], render_mode="ansi", max_turns=2, **planner_options)
    env.reset(options={"task_id": "validation-1"})
    assert env.render().startswith("[travelgym/TravelPlanner-v0 validation-1 turn 0]")
    env.step("<think>I will answer now.</think>")
    assert "> <think>I will answer now.</think>" in env.render()
    obs, reward, terminated, truncated, info = env.step("<answer>[]</answer>")
    assert terminated and not truncated and obs == "" and info["turn"] == 2
    assert reward == info["breakdown"]["total"] == 0.0
    assert info["outcome"] == "completed"  # answered (an empty plan is a wrong answer)
    with pytest.raises(gymnasium.error.ResetNeeded, match="has ended"):
        env.step("again")
    env.close()
    human = gymnasium.make(IDS["travelplanner"], render_mode="human", **planner_options)
    human.reset(options={"index": 0})
    assert human.render() is None and "Query:" in capsys.readouterr().out
    human.close()
