"""The Gymnasium-style environments driven by hand-written actions: TripTrainingEnv (tool calls, memory
writes and reads, invalid actions, the answer, the step limit, the memory and penalty switches)
and CompassTrainingEnv (parallel tool calls, the user simulator, the terminal reward); and both record
exactly what the inference agents record for the same model messages."""

from __future__ import annotations

import asyncio
import json

import pytest

from travelgym.db import connect_readonly
from travelgym.llm.protocol import ChatMessage, ChatResponse, ToolCall
from travelgym.suites.behavior2trip.agents.b2t_agent import B2TAgent
from travelgym.suites.behavior2trip.agents.scripted import ScriptedTripAgent
from travelgym.suites.behavior2trip.environment import TripTrainingEnv
from travelgym.suites.behavior2trip.episode import run_trip_episode
from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances
from travelgym.suites.behavior2trip.scoring import score_result
from travelgym.suites.behavior2trip.training import b2t_episode_reward, b2t_reward
from travelgym.suites.compass.agents.llm_agent import LLMToolAgent
from travelgym.suites.compass.environment import CompassTrainingEnv, to_assistant_message
from travelgym.suites.compass.episode import run_episode
from travelgym.suites.compass.scoring import score_plan
from travelgym.suites.compass.solver import Ranking, build_components, solve
from travelgym.suites.compass.tasks import load_tasks
from travelgym.suites.compass.training import compass_episode_reward, compass_reward
from travelgym.suites.compass.user.template import TemplateUserBackend
from travelgym.training.base import EnvStateError


class ScriptedClient:
    """A chat client that answers with the given assistant messages, in order."""

    model = "scripted-model"

    def __init__(self, replies: list[ChatMessage | str]) -> None:
        self.replies = list(replies)

    async def complete(self, messages, tools=None, **params) -> ChatResponse:
        reply = self.replies.pop(0)
        if isinstance(reply, str):
            reply = ChatMessage(role="assistant", content=reply)
        return ChatResponse(message=reply)


def comparable(steps: list[dict]) -> list[dict]:
    """Steps or turns without wall-clock fields."""
    out = []
    for step in steps:
        step = {k: v for k, v in step.items() if k != "duration_s"}
        step["tool_calls"] = [{k: v for k, v in c.items() if k != "duration_ms"}
                              for c in step["tool_calls"]]  # fmt: skip
        out.append(step)
    return out


# --- Behavior2Trip ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def instances(trips_database):
    paths = ensure_instances(trips_database, trips_database.path.parent.parent, splits=("test",))
    return load_instances(paths["test"], check=False)[:3]


@pytest.fixture(scope="module")
def plan(instances, trips_db):
    """A complete plan for the first instance: the scripted baseline's."""
    conn = connect_readonly(trips_db)
    episode = asyncio.run(run_trip_episode(instances[0], ScriptedTripAgent(), conn, score=False))
    conn.close()
    return episode.final_answer.removeprefix("<answer>").removesuffix("</answer>")


def actions(city: str, plan: str) -> list[str]:
    return [
        "<think>Hotels and weather first; note the budget.</think>"
        f'<tool_call>{{"name": "AccommodationSearch", "arguments": {{"city": "{city}", "n": 2}}}}</tool_call>'
        f'<tool_call>{{"name": "WeatherSearch", "arguments": {{"city": "{city}", "n": 1}}}}</tool_call>'
        '<memory>{"action": "write", "key": "budget", "value": 9000}</memory>',
        '<memory>{"action": "read", "key": "budget"}</memory>'
        '<memory>{"action": "read", "key": "hotel"}</memory>'
        '<tool_call>{"name": "BookHotel", "arguments": {}}</tool_call>',
        f"<think>Done.</think><answer>{plan}</answer>",
    ]  # fmt: skip


def test_trip_env_tools_memory_invalid_actions_and_answer(instances, trips_db, plan):
    env = TripTrainingEnv(trips_db, instances)
    x = instances[0]
    obs, info = env.reset(options={"instance_id": x.instance_id})
    assert [m["role"] for m in obs] == ["system", "user"]
    assert "<memory>" in obs[0]["content"] and obs[1]["content"].startswith("Behavior trajectory:")
    assert info["instance_id"] == x.instance_id and info["memory"] is True
    script = actions(x.instruction.destination_city, plan)

    obs, reward, terminated, truncated, info = env.step(script[0])
    assert obs.count("<tool_response>") == 2 and '"results": [' in obs
    assert obs.endswith("<memory_response>Data saved for key 'budget'.</memory_response>")
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["from_tools"] and info["from_memory"] and info["invalid_actions"] == []
    assert info["tool_calls"] == 2 and info["turn"] == 1

    obs, reward, terminated, truncated, info = env.step(script[1])
    assert obs.startswith("<memory_response>9000</memory_response>")
    assert "no memory entry for key 'hotel'" in obs and "unknown tool 'BookHotel'" in obs
    assert [(a["source"], a["kind"]) for a in info["invalid_actions"]] == [
        ("format", "unknown_tool"),
        ("memory", "missing_entry"),
    ]
    assert reward == 0.0 and not terminated and info["tool_calls"] == 0

    obs, reward, terminated, truncated, info = env.step(script[2])
    assert obs == "" and terminated and not truncated and info["answered"]
    expected = b2t_reward(score_result(x, f"<answer>{plan}</answer>", trips_db), 2)
    assert reward == expected.total and info["reward_breakdown"] == expected.model_dump()
    assert expected.p_action == -1.0 and expected.r_format == 1.0 and expected.r_c > 0.9
    assert reward == pytest.approx(-1.0 + expected.r_c + expected.r_upc)

    episode = env.episode()
    assert episode.termination == "answered" and episode.invalid_actions == 2
    assert episode.p_action == -1 and episode.memory == {"budget": 9000}
    assert b2t_episode_reward(episode).total == reward  # the metrics' view agrees
    assert [m["role"] for m in episode.messages] == ["system", "user"] + ["assistant", "user"] * 2 + ["assistant"]  # fmt: skip
    with pytest.raises(EnvStateError):
        env.step("<answer>[]</answer>")
    env.close()


def test_trip_env_records_what_the_b2t_agent_records(instances, trips_db, plan):
    """One implementation of a B2T step: TripTrainingEnv and B2TAgent give the same episode."""
    x = instances[0]
    script = actions(x.instruction.destination_city, plan)
    conn = connect_readonly(trips_db)
    agent_episode = asyncio.run(run_trip_episode(x, B2TAgent(ScriptedClient(script)), conn))
    conn.close()
    env = TripTrainingEnv(trips_db, instances)
    env.reset(options={"instance_id": x.instance_id})
    for action in script:
        *_, terminated, _, _ = env.step(action)
    assert terminated
    env_episode = env.episode()
    assert env_episode.messages == agent_episode.messages
    assert comparable(env_episode.model_dump()["steps"]) == comparable(
        agent_episode.model_dump()["steps"]
    )
    assert (
        env_episode.score == agent_episode.score
        and env_episode.final_answer == agent_episode.final_answer
    )
    env.close()


def test_trip_env_step_limit_and_ablations(instances, trips_db):
    x = instances[1]
    city = x.instruction.destination_city
    search = (
        f'<tool_call>{{"name": "WeatherSearch", "arguments": {{"city": "{city}"}}}}</tool_call>'
    )
    env = TripTrainingEnv(trips_db, instances, max_turns=2, memory=False, penalty=False)
    obs, info = env.reset(seed=3, options={"index": 1})
    assert "<memory>" not in obs[0]["content"] and "memory" not in obs[0]["content"].lower()
    assert info["memory"] is False
    obs, reward, terminated, truncated, info = env.step(
        search + '<memory>{"action": "write", "key": "k", "value": 1}</memory>'
    )
    assert "memory is disabled" in obs and not terminated and not truncated
    assert [(a["source"], a["kind"]) for a in info["invalid_actions"]] == [
        ("memory", "memory_disabled")
    ]
    obs, reward, terminated, truncated, info = env.step(search)
    assert truncated and not terminated and obs.startswith("<tool_response>")
    breakdown = info["reward_breakdown"]
    assert breakdown["delivered"] is False and breakdown["invalid_actions"] == 1
    assert breakdown["p_action"] == 0.0 and reward == 0.0  # penalty=False
    assert env.episode().termination == "step_limit" and env.episode().score["delivered"] is False
    env.close()
    penalised = TripTrainingEnv(trips_db, instances, max_turns=1)
    penalised.reset(options={"index": 1})
    *_, reward, terminated, truncated, info = penalised.step("no tags at all")
    assert truncated and reward == -1.0 and info["invalid_actions"][0]["kind"] == "no_action"
    penalised.close()


def test_trip_env_seeded_choice_and_bad_calls(instances, trips_db):
    env = TripTrainingEnv(trips_db, instances)
    picks = [env.reset(seed=7)[1]["instance_id"] for _ in range(2)]
    assert picks[0] == env.reset(seed=7)[1]["instance_id"]
    assert all(p in {x.instance_id for x in instances} for p in picks)
    with pytest.raises(KeyError, match="unknown instance_id"):
        env.reset(options={"instance_id": "nope"})
    with pytest.raises(TypeError):
        env.step({"role": "assistant"})

    async def inside_a_loop():
        with pytest.raises(EnvStateError, match="areset"):
            env.reset()
        obs, _ = await env.areset(options={"index": 0})
        return obs

    assert len(asyncio.run(inside_a_loop())) == 2
    env.close()


# --- COMPASS ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compass(compass_db):
    conn = connect_readonly(compass_db)
    task = next(t for t in load_tasks() if t.level == 2)
    yield conn, task, solve(conn, task)
    conn.close()


def compass_script(task, truth) -> list:
    """Two parallel searches, then the optimal plan recommended, repeated until accepted."""
    park = task.park.park_ids[0]
    return [
        {"role": "assistant", "content": "Let me look.", "tool_calls": [
            {"id": "a1", "type": "function",
             "function": {"name": "search_airports", "arguments": {"park_name": park}}},
            {"id": "a2", "type": "function",
             "function": {"name": "recommend_hotel", "arguments": json.dumps(
                 {"package_ids": [truth.optimal_plan["hotel"]], "reasoning": "cheapest"})}},
        ]},
        json.dumps({"message": "Here is the best plan.", "recommendation": truth.optimal_plan}),
    ]  # fmt: skip


def test_compass_env_tool_calls_user_and_reward(compass, compass_db):
    conn, task, truth = compass
    env = CompassTrainingEnv(compass_db, [task], {task.task_id: truth})
    obs, info = env.reset(options={"task_id": task.task_id})
    assert [m["role"] for m in obs] == ["system", "user"] and "JSON object" in obs[0]["content"]
    assert (
        info["task_id"] == task.task_id and len(info["tools"]) == 18 and env.tools == info["tools"]
    )
    tools, final = compass_script(task, truth)

    obs, reward, terminated, truncated, info = env.step(tools)
    assert [(m["role"], m["tool_call_id"]) for m in obs] == [("tool", "a1"), ("tool", "a2")]
    assert json.loads(obs[0]["content"])["airports"] and reward == 0.0 and not terminated
    assert info == {"tool_calls": 2, "turn_ended": False}

    steps = 1
    while True:
        obs, reward, terminated, truncated, info = env.step(final)
        steps += 1
        assert info["turn_ended"] and obs[-1]["role"] == "user" and obs[-1]["content"]
        if terminated or truncated:
            break
        assert reward == 0.0
    assert terminated and not truncated and info["termination"] == "accepted"
    ranking = Ranking(task, build_components(conn, task))
    expected = compass_reward(score_plan(conn, task, truth, truth.optimal_plan, ranking))
    assert reward == expected.total == 1.0 and info["reward"] == expected.model_dump()
    assert info["reward"]["basis"] == "rank" and info["score"]["rank"] == 1

    episode = env.episode()
    assert episode.termination == "accepted" and episode.final_recommendation == truth.optimal_plan
    assert compass_episode_reward(episode).total == reward
    agent_turns = [t for t in episode.turns if t.role == "agent"]
    assert [c.name for c in agent_turns[0].tool_calls] == ["search_airports", "recommend_hotel"]
    assert episode.llm_calls == steps
    tool_ids = {m["tool_call_id"] for m in episode.messages if m["role"] == "tool"}
    assert tool_ids == {"a1", "a2"} and episode.messages[-1]["role"] == "assistant"
    with pytest.raises(EnvStateError):
        env.step(final)
    env.close()


def test_compass_env_records_what_the_llm_agent_records(compass, compass_db):
    """One code path: run_episode with the LLM agent and CompassTrainingEnv give the same turns."""
    conn, task, truth = compass
    tools, final = compass_script(task, truth)
    env = CompassTrainingEnv(compass_db, [task], {task.task_id: truth}, rank=False)
    env.reset(options={"task_id": task.task_id})
    actions, done = [], False
    while not done:
        actions.append(final if actions else tools)
        *_, terminated, truncated, _ = env.step(actions[-1])
        done = terminated or truncated
    assert len(actions) > 2
    env_episode = env.episode()
    replies = [to_assistant_message(a, "unused") for a in actions]
    # the env made up no ids: the agent's messages carry the same ones
    agent = LLMToolAgent(ScriptedClient(replies))
    agent_episode = asyncio.run(run_episode(task, agent, TemplateUserBackend(), conn, truth))
    assert env_episode.termination == agent_episode.termination == "accepted"
    keys = ("role", "text", "acts", "recommendation", "error", "prompt")
    assert [{k: getattr(t, k) for k in keys} for t in env_episode.turns] == [
        {k: getattr(t, k) for k in keys} for t in agent_episode.turns
    ]
    calls = [[(c.id, c.name, c.ok, c.result) for c in t.tool_calls] for t in env_episode.turns]
    assert calls == [[(c.id, c.name, c.ok, c.result) for c in t.tool_calls]
                     for t in agent_episode.turns]  # fmt: skip
    assert calls[1][1][2] is True  # recommend_hotel validated the optimal hotel
    assert env_episode.llm_calls == agent_episode.llm_calls == len(actions)
    assert env_episode.messages == agent_episode.messages
    assert env_episode.score == agent_episode.score  # rank=False: the runner's score
    env.close()


def test_compass_env_infeasible_plan_and_turn_limit(compass, compass_db):
    conn, task, truth = compass
    env = CompassTrainingEnv(compass_db, [task], {task.task_id: truth}, max_turns=2)
    env.reset(seed=0)
    bad = {"hotel": "pkg_1_1_2_1", "flight": None, "permit": None}
    obs, reward, terminated, truncated, info = env.step(
        json.dumps({"message": "Try this.", "recommendation": bad})
    )
    assert truncated and not terminated and info["termination"] == "turn_limit"
    assert reward == 0.0 and info["reward"]["basis"] == "infeasible"
    assert info["score"]["feasible"] is False and info["recommendation"] == bad
    env.close()
    limited = CompassTrainingEnv(compass_db, [task], {task.task_id: truth}, max_steps_per_turn=1)
    limited.reset()
    obs, reward, terminated, truncated, info = limited.step(
        ChatMessage(role="assistant", tool_calls=[ToolCall(id="z", name="get_weekday",
                                                           arguments='{"date_str": "2025-08-01"}')])
    )  # fmt: skip
    assert [m["role"] for m in obs] == ["tool", "user"] and info["turn_ended"]
    assert "step limit" in info["reply_error"]
    with pytest.raises(ValueError, match="assistant"):
        limited.step({"role": "user", "content": "hi"})
    limited.close()


def test_trip_env_python_tool_runs_behind_the_sandbox(instances, trips_db, tmp_path, monkeypatch):
    """Model code in a training rollout meets the same boundary as in a benchmark run: it runs
    in the OS sandbox (no access to the hidden profile's instance file), and where bubblewrap
    cannot run the tool refuses with the requirement unless unsafe mode was chosen."""
    from travelgym import sandbox
    from travelgym.core.outcomes import InfraError
    from travelgym.sandbox import boundary

    env = TripTrainingEnv(trips_db, instances)
    env.reset(options={"instance_id": instances[0].instance_id})
    code = f"import os; print(os.getuid() != 0, os.path.exists('{trips_db}'))"
    call = '<tool_call>{"name": "Python", "arguments": {"code": "%s"}}</tool_call>'
    obs, *_ = env.step(call % code.replace('"', '\\"'))
    assert "True False" in obs, obs  # unprivileged, and the database is not visible inside

    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    boundary._bubblewrap.cache_clear()
    try:  # no result for the model to act on: an infra error, raised for the trainer
        with pytest.raises(InfraError, match="bubblewrap.*--unsafe-sandbox"):
            env.step(call % "print(1)")
    finally:
        sandbox.allow_unsafe(False)
        monkeypatch.undo()
        boundary._bubblewrap.cache_clear()
