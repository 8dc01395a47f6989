"""``travelgym run behavior2trip``: run directories (manifest + episodes.jsonl), resume after an
interruption, the results table and JSON, LLM agents through the runner, option checks."""

from __future__ import annotations

import asyncio
import json

import pytest
from click.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, HTTPError, Reply, tool_call
from travelgym.cli import main
from travelgym.core.registry import get_suite
from travelgym.runner.batch import RunConfig, run_suite
from travelgym.runner.specs import parse_agent_spec
from travelgym.runner.store import EPISODES, MANIFEST, read_episodes
from travelgym.suites.behavior2trip.instance_sets import select_instances
from travelgym.suites.behavior2trip.instances import ensure_instances

FAST = {"backoff_base_s": 0.01, "backoff_max_s": 0.05, "timeout_s": 2.0, "max_retries": 1}


@pytest.fixture(scope="module")
def data_dir(trips_database):
    directory = trips_database.path.parent.parent
    ensure_instances(trips_database, directory, splits=("test",))
    return directory


def _normalise(line: str) -> dict:
    """An episode without wall-clock fields."""
    episode = json.loads(line)
    episode.pop("duration_s")
    for step in episode["steps"]:
        step.pop("duration_s")
        for call in step["tool_calls"]:
            call.pop("duration_ms")
    return episode


def _lines(path) -> list[str]:
    return [x for x in path.read_text().splitlines() if x.strip()]


def test_run_interrupt_and_resume(tmp_path, data_dir):
    runner = CliRunner()
    base = ["run", "behavior2trip", "--limit", "6", "--no-progress", "--data-dir", str(data_dir)]
    reference = runner.invoke(main, [*base, "--out", str(tmp_path / "ref")])
    assert reference.exit_code == 0, reference.output
    assert "scripted: 6 episodes" in reference.output
    for word in ("DR", "C micro", "C macro", "UPC micro", "UPC macro", "Final", "easy", "hard"):
        assert word in reference.output
    run_dir = tmp_path / "ref" / "scripted"
    manifest = json.loads((run_dir / MANIFEST).read_text())
    assert manifest["suite"] == "behavior2trip" and manifest["split"] == "test"
    # the first instance of each level (interleaved); the quality filter (quality.md) may have
    # left out instance 0000 of a level, so the ids come from the instance file
    from travelgym.suites.behavior2trip.instance_sets import load_split

    tasks = load_split("test", data_dir=data_dir)[1]
    firsts = [next(x.instance_id for x in tasks if x.difficulty == d)
              for d in ("easy", "medium", "hard")]  # fmt: skip
    assert manifest["task_ids"][:3] == firsts
    want = _lines(run_dir / EPISODES)
    assert len(want) == 6
    # an interrupted run: three episodes and a partial line, then --resume
    out = tmp_path / "cut"
    (out / "scripted").mkdir(parents=True)
    (out / "scripted" / MANIFEST).write_text((run_dir / MANIFEST).read_text())
    (out / "scripted" / EPISODES).write_text("\n".join(want[:3]) + "\n" + want[3][:200])
    again = runner.invoke(main, [*base, "--out", str(out)])
    assert again.exit_code == 1 and "--resume" in again.output
    resumed = runner.invoke(main, [*base, "--out", str(out), "--resume", "--json"])
    assert resumed.exit_code == 0, resumed.output
    summary = json.loads(resumed.stdout)["scripted"]  # stderr: the torn line's quarantine note
    assert "torn last line" in resumed.stderr and "episodes.quarantine.jsonl" in resumed.stderr
    # checks v4: a scripted plan missing a required slot is not delivered (1 of these 6)
    assert summary["overall"]["n"] == 6 and summary["overall"]["DR"] >= 80.0
    assert (
        set(summary["by_difficulty"]) == {"easy", "medium", "hard"} and "instances" not in summary
    )
    got = _lines(out / "scripted" / EPISODES)
    assert [_normalise(x) for x in got] == [_normalise(x) for x in want]  # nothing lost or doubled
    other = runner.invoke(main, [*base, "--out", str(out), "--resume", "--difficulty", "hard"])
    assert other.exit_code == 1 and "different run" in other.output


def test_option_checks(tmp_path):
    runner = CliRunner()
    bad = runner.invoke(main, ["run", "behavior2trip", "--agent", "code:x", "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "b2t:MODEL" in bad.output
    mixed = runner.invoke(main, ["run", "behavior2trip", "--level", "2", "--out", str(tmp_path)])
    assert mixed.exit_code == 2 and "--difficulty" in mixed.output
    compass = runner.invoke(main, ["run", "compass", "--split", "train", "--out", str(tmp_path)])
    assert (
        compass.exit_code == 2
        and "--split applies to behavior2trip and travelplanner only" in compass.output
    )
    assert parse_agent_spec(get_suite("behavior2trip"), "scripted").dirname == "scripted"
    assert (
        parse_agent_spec(get_suite("behavior2trip"), "b2t:Qwen/Qwen3-8B").dirname
        == "b2t-Qwen_Qwen3-8B"
    )


def test_selection_interleaves_levels_and_keeps_explicit_order():
    class X:
        def __init__(self, iid, difficulty):
            self.instance_id, self.difficulty = iid, difficulty

    xs = [X(f"{d}{i}", d) for d in ("easy", "medium", "hard") for i in range(3)]
    assert [x.instance_id for x in select_instances(xs, None, None, 4)] == [
        "easy0",
        "medium0",
        "hard0",
        "easy1",
    ]
    assert [x.instance_id for x in select_instances(xs, None, "hard", 2)] == ["hard0", "hard1"]
    assert [x.instance_id for x in select_instances(xs, ["hard2", "easy0"], None, None)] == [
        "hard2",
        "easy0",
    ]
    with pytest.raises(ValueError, match="unknown instance"):
        select_instances(xs, ["nope"], None, None)


def test_llm_agent_runs_errors_and_retries(tmp_path, data_dir):
    """B2T through the runner: provider failures are recorded per episode, then re-run."""
    out = tmp_path / "b2t"

    def cfg(url, **kw):
        return RunConfig("behavior2trip", "b2t:fake-model", out=out, limit=3,
                             concurrency=3, base_url=url, data_dir=data_dir, progress=False,
                             options={"max_steps": 2}, client_options=FAST, **kw)  # fmt: skip

    with FakeOpenAIServer(responder=lambda body: HTTPError(500)) as server:
        summary = asyncio.run(run_suite(cfg(server.base_url)))
    # an outage: counted apart and left out of every metric (none is computed over 0 episodes)
    assert summary["episodes"] == 0 and summary["outcomes"]["infra_errors"] == 3
    assert summary["outcomes"]["infra_causes"] == {"agent server": 3}
    with FakeOpenAIServer(responder=lambda body: Reply("<answer>[]</answer>")) as server:
        summary = asyncio.run(run_suite(cfg(server.base_url, resume=True, retry_errors=True)))
    episodes = read_episodes(out)
    assert len(episodes) == 3 and summary["errors"] == 0 and summary["episodes"] == 3
    assert summary["outcomes"]["infra_errors"] == 0
    assert all(
        e.termination == "answered" and e.final_answer == "<answer>[]</answer>" for e in episodes
    )
    assert summary["overall"]["DR"] == 0.0  # an empty list is no plan


def test_score_a_behavior2trip_run_directory(tmp_path, data_dir):
    runner = CliRunner()
    ran = runner.invoke(main, ["run", "behavior2trip", "--limit", "6", "--no-progress", "--json",
                               "--data-dir", str(data_dir), "--out", str(tmp_path)])  # fmt: skip
    assert ran.exit_code == 0, ran.output
    scored = runner.invoke(main, ["score", str(tmp_path / "scripted"), "--json",
                                  "--data-dir", str(data_dir)])  # fmt: skip
    assert scored.exit_code == 0, scored.output
    result = json.loads(scored.output)
    assert set(result) >= {"overall", "by_difficulty", "instances"}
    overall = result["overall"]
    assert overall["n"] == 6 and overall["DR"] >= 80.0  # checks v4: 1 of 6 misses a slot
    assert {"DR", "C_micro", "C_macro", "UPC_micro", "UPC_macro", "final"} <= set(overall)
    assert set(result["by_difficulty"]) <= {"easy", "medium", "hard"}
    table = runner.invoke(main, ["score", str(tmp_path / "scripted"), "--data-dir", str(data_dir)])
    assert table.exit_code == 0 and "UPC macro" in table.output


def test_llm_model_plans_with_native_tool_calls(tmp_path, data_dir):
    """``run behavior2trip --agent llm:MODEL`` (issue 33: one grammar for every suite): the
    model gets the 9 tools as native schemas, its tool call runs and is answered by a tool
    message, and its last reply (a plan passing every check here: the instance's witness) is
    delivered and scored like any agent's."""
    from travelgym.suites.behavior2trip.instance_sets import load_split

    _, (instance,), _ = load_split("test", data_dir=data_dir, limit=1)
    names = []

    def respond(body: dict) -> Reply:
        names.append([t["function"]["name"] for t in body.get("tools") or ()])
        if not any(m["role"] == "tool" for m in body["messages"]):
            return Reply(None, tool_calls=[tool_call("WeatherSearch", {"city": "Beijing"})])
        return Reply(instance.witness)

    with FakeOpenAIServer(responder=respond) as server:
        done = CliRunner().invoke(main, ["run", "behavior2trip", "--agent", "llm:fake-model",
                                         "--limit", "1", "--base-url", server.base_url,
                                         "--out", str(tmp_path), "--data-dir", str(data_dir),
                                         "--no-progress", "--json"])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert names[0] == get_suite("behavior2trip").tool_registry().names and len(names) == 2
    (episode,) = read_episodes(tmp_path / "llm-fake-model")
    assert episode.agent == "llm:fake-model" and episode.instance_id == instance.instance_id
    assert [c.name for c in episode.steps[0].tool_calls] == ["WeatherSearch"]
    assert episode.steps[0].tool_calls[0].ok and episode.steps[1].answer
    assert [m["role"] for m in episode.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert episode.score["final"] is True  # the witness passes every applicable check
