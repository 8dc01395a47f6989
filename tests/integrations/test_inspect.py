"""The inspect_ai tasks (``inspect eval travelgym/SUITE``), offline: every suite evaluates with
``mockllm/model`` into a log that ``read_eval_log`` reads, with the suite's metrics over the
episodes the log holds; through inspect's OpenAI-compatible provider against the local test
server a COMPASS episode scores exactly as ``travelgym run`` with the same scripted replies,
and the log's messages show its tool calls, tool results and user turns.

inspect's mockllm counts tokens with tiktoken's o200k_base encoding, which tiktoken downloads
on first use; offline (as here and in CI) the tests swap in a character estimate."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, Reply, tool_call
from tests.training.support import need_extra
from travelgym.core.registry import get_suite, suite_names
from travelgym.core.summary import summarize_episodes
from travelgym.runner.run_summary import summarize_run

# the outcome counts every log's metrics hold besides the suite's figures
COUNTS = {"completed", "model_errors", "infra_errors"}
OFFLINE_TOKENS = """import inspect_ai.model._model as _model
_model.count_text_tokens = lambda text: max(1, len(text) // 4)
"""


@pytest.fixture
def offline(monkeypatch):
    """inspect_ai installed (else skip, or fail in CI), token counts without a download."""
    need_extra("inspect", ("inspect_ai",))
    import inspect_ai.model._model as model

    monkeypatch.setattr(model, "count_text_tokens", lambda text: max(1, len(text) // 4))


def evaluate(task: object, model: str, log_dir: Path, **task_args: object):
    """One eval; its log as read back from disk."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log

    # a failing model call fails fast instead of inspect's long backoff
    (log,) = inspect_eval(task, model=model, log_dir=str(log_dir), task_args=task_args,
                          display="none", limit=2, max_retries=1, timeout=60)  # fmt: skip
    assert log.status == "success", log.error
    return read_eval_log(log.location)


def episodes_of(log) -> list[dict]:
    """Each sample's episode, in sample order."""
    return [s.scores["suite_score"].metadata["episode"] for s in log.samples]


def same_ids(value):
    """``value`` with every tool-call id (the provider's: the test server numbers its replies)
    replaced by its order of first appearance."""
    text = json.dumps(value, sort_keys=True)
    ids = list(dict.fromkeys(re.findall(r'"(call_\d+_\d+)"', text)))
    for n, found in enumerate(ids):
        text = text.replace(f'"{found}"', f'"id-{n}"')
    return json.loads(text)


def without_clocks(turns: list[dict]) -> list[dict]:
    """An episode's turns (or steps) without their clocks and model accounting (ids as
    :func:`same_ids`)."""
    drop = {"duration_s", "usage", "started_at", "duration_ms"}
    return same_ids([{**{k: v for k, v in t.items() if k not in drop},
                      "tool_calls": [{k: v for k, v in c.items() if k not in drop}
                                     for c in t.get("tool_calls", [])]} for t in turns])  # fmt: skip


def metrics_of(log) -> dict[str, float]:
    (score,) = log.results.scores
    return {name: m.value for name, m in score.metrics.items()}


def figures_of(log) -> dict[str, float]:
    """The suite's headline figures of the log's metrics (its outcome counts left out)."""
    return {k: v for k, v in metrics_of(log).items() if k not in COUNTS}


def counts_of(log) -> dict[str, float]:
    """The outcome counts of the log's metrics, as the run summary's ``outcomes`` names them."""
    counts = {k: v for k, v in metrics_of(log).items() if k in COUNTS}
    assert set(counts) == COUNTS
    return counts


@pytest.fixture
def suite_args(request, compass_db, tmp_path, monkeypatch):
    """Task arguments putting each suite on small test data."""
    name = request.param
    if name == "compass":
        return name, {"data_dir": str(compass_db.parent.parent), "max_turns": 4, "trials": 2}
    if name == "behavior2trip":
        trips = request.getfixturevalue("trips_database")
        return name, {"data_dir": str(trips.path.parent.parent), "max_steps": 2, "limit": 2}
    from tests.suites.travelplanner.suite_data import write_suite_data

    dataset, database = write_suite_data(tmp_path / "tp", monkeypatch)
    return name, {"data": str(dataset), "database": str(database), "mode": "two-stage",
                  "data_dir": str(tmp_path / "data"), "max_steps": 2}  # fmt: skip


@pytest.mark.parametrize("suite_args", ["compass", "behavior2trip", "travelplanner"],
                         indirect=True)  # fmt: skip
def test_every_suite_evaluates_with_mockllm(offline, suite_args, tmp_path):
    name, args = suite_args
    suite = get_suite(name)
    log = evaluate(f"travelgym/{name}", "mockllm/model", tmp_path / "logs", **args)
    epochs = args.get("trials", 1)
    assert len(log.samples) == 2 * epochs and log.eval.task == f"travelgym/{name}"
    episodes = episodes_of(log)
    for sample, episode in zip(log.samples, episodes, strict=True):
        assert episode["suite"] == name and episode["task_id"] == sample.id
        assert sample.metadata["task_id"] == sample.id and episode["trial"] == sample.epoch - 1
        assert "mockllm/model" in episode["agent"]
        assert episode["llm_calls"] >= 1 and episode["score"] is not None
        # the agent's conversation: its prompt, then mockllm's replies
        assert [m.role for m in sample.messages[:2]] == ["system", "user"]
        assert "Default output from mockllm/model" in sample.messages[2].text
        assert sample.scores["suite_score"].value == suite.headline_metrics(
            suite.summarize_episodes([episode]))  # fmt: skip
    # the metrics are the run summary of every episode of every epoch, with its outcome counts
    summary = summarize_episodes(suite, episodes)
    expected = suite.headline_metrics(summary)
    assert figures_of(log) == pytest.approx(expected) and len(expected) >= 5
    assert counts_of(log) == {k: summary["outcomes"][k] for k in COUNTS}
    assert counts_of(log)["infra_errors"] == 0
    assert {e["trial"] for e in episodes} == set(range(epochs))


@pytest.mark.slow
def test_the_inspect_cli_writes_a_log_with_the_suites_scores(offline, compass_db, tmp_path):
    from inspect_ai.log import read_eval_log

    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(OFFLINE_TOKENS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"),
                                                         os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    script = Path(sys.executable).parent / "inspect"  # the `inspect` command, where installed
    command = [str(script)] if script.exists() else [sys.executable, "-m", "inspect_ai"]
    inspect_cli = [*command, "eval", "travelgym/compass"]
    data = ["-T", f"data_dir={compass_db.parent.parent}"]
    done = subprocess.run([*inspect_cli, "--model", "mockllm/model", "--limit", "2", *data,
                           "-T", "max_turns=3", "--log-dir", str(tmp_path / "logs"),
                           "--display", "none"], env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and [s.id for s in log.samples] == ["compass-001", "compass-002"]
    assert set(figures_of(log)) == {"FR", "OR5", "OR10", "OR20", "optimal"}
    assert all(e["termination"] == "turn_limit" for e in episodes_of(log))
    # a bad parameter: one line naming it, no traceback
    bad = subprocess.run([*inspect_cli, "--model", "mockllm/model", *data, "-T", "level=7",
                          "--log-dir", str(tmp_path / "bad")], env=env, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    out = bad.stdout + bad.stderr
    assert "travelgym/compass: -T level: Input should be less than or equal to 3" in out
    assert "Traceback" not in out


def scripted_agent(stories: dict[str, str], plans: dict[str, dict]):
    """A fake model: on the user's turn it calls a tool (and one with broken JSON), after the
    results it recommends the plan scripted for the task whose story the user told."""

    def respond(body: dict):
        opening = next(m["content"] for m in body["messages"] if m["role"] == "user")
        task = next(t for t, story in stories.items() if story in opening)
        if body["messages"][-1]["role"] == "user":
            return Reply(tool_calls=[tool_call("search_airports", {"park_name": "Yosemite"}),
                                     tool_call("get_weekday", '{"date_str": "2025-08-0')])  # fmt: skip
        return Reply(content=json.dumps({"message": "This is it.", "recommendation": plans[task]}))

    return respond


def test_openai_compatible_provider_scores_as_travelgym_run(offline, compass_db, tmp_path,
                                                            monkeypatch):  # fmt: skip
    from travelgym.cli import main
    from travelgym.runner.store import read_run
    from travelgym.suites.compass.ground_truth import ensure_ground_truth
    from travelgym.suites.compass.tasks import load_tasks

    data_dir = compass_db.parent.parent
    _, truths = ensure_ground_truth(seed=0, data_dir=data_dir)
    first, second = load_tasks()[:2]
    stories = {first.task_id: first.story, second.task_id: second.story}
    # the first task gets its optimal plan, the second the first task's (infeasible there)
    plans = {t: truths[first.task_id].optimal_plan for t in stories}
    with FakeOpenAIServer(responder=scripted_agent(stories, plans)) as server:
        result = CliRunner().invoke(main, ["run", "compass", "--agent", "llm:fake-model",
                                           "--base-url", server.base_url, "--limit", "2",
                                           "--max-turns", "4", "--out", str(tmp_path / "runs"),
                                           "--data-dir", str(data_dir), "--no-progress",
                                           "--json"])  # fmt: skip
        assert result.exit_code == 0, result.output
        monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKE_API_KEY", "test")
        log = evaluate("travelgym/compass", "openai-api/fake/fake-model", tmp_path / "logs",
                       data_dir=str(data_dir), max_turns=4)  # fmt: skip
    run_dir = tmp_path / "runs" / "llm-fake-model"
    ran = {e["task_id"]: e for e in read_run(run_dir, "compass", as_dicts=True).episodes}
    evaluated = {e["task_id"]: e for e in episodes_of(log)}
    assert set(evaluated) == set(ran) == set(stories)
    for task_id, episode in evaluated.items():
        assert episode["score"] == ran[task_id]["score"]
        assert episode["termination"] == ran[task_id]["termination"]
        # the same turns (what was said, every tool call and result, the user's replies) and
        # the same chat: one episode loop, whichever driver
        assert without_clocks(episode["turns"]) == without_clocks(ran[task_id]["turns"])
        assert same_ids(episode["messages"]) == same_ids(ran[task_id]["messages"])
        calls = [
            (c["name"], c["error_category"]) for t in episode["turns"] for c in t["tool_calls"]
        ]
        assert calls == [(c["name"], c["error_category"])
                         for t in ran[task_id]["turns"] for c in t["tool_calls"]]  # fmt: skip
        assert ("get_weekday", "parameter") in calls
    assert evaluated[first.task_id]["score"]["optimal"]
    assert not evaluated[second.task_id]["score"]["feasible"]
    summary = summarize_run(get_suite("compass"), run_dir)
    assert figures_of(log) == {k: summary["overall"][k] for k in ("FR", "OR5", "OR10", "OR20",
                                                                  "optimal")}  # fmt: skip
    assert counts_of(log) == {k: summary["outcomes"][k] for k in COUNTS}
    assert metrics_of(log)["FR"] == 50.0
    # the trajectory in the log: tool calls, their results, the user's turns
    messages = log.samples[0].messages
    calls = [c for m in messages if m.role == "assistant" for c in m.tool_calls or []]
    assert [c.function for c in calls[:2]] == ["search_airports", "get_weekday"]
    assert calls[0].arguments == {"park_name": "Yosemite"} and calls[1].parse_error
    results = [m for m in messages if m.role == "tool"]
    assert results[0].function == "search_airports" and "airports" in results[0].text
    assert "parameter" in results[1].text
    assert sum(m.role == "user" for m in messages) >= 2


def test_bad_task_parameters_are_one_line_errors(offline):
    from inspect_ai._util.error import PrerequisiteError

    from travelgym.integrations.inspect_tasks import TASKS

    assert set(TASKS) == set(suite_names())
    cases = {
        "-T level: Input should be less than or equal to 3": {"level": 7},
        "unknown task parameter(s) colour": {"colour": "red"},
        "-T agent=robot: unknown agent kind": {"agent": "robot"},
        "-T agent: bad agent spec 'scripted'": {"agent": "scripted"},
        "-T task_ids: give task ids separated by commas": {"task_ids": 5},
    }
    for message, args in cases.items():
        with pytest.raises(PrerequisiteError) as caught:
            TASKS["compass"](**args)
        assert f"travelgym/compass: {message}" in caught.value.message
        assert "\n" not in caught.value.message


def test_a_suite_of_another_package_gets_a_task_too(offline, tmp_path):
    from tests.core.toy_suite import SOURCE
    from travelgym.integrations.inspect_tasks import define_task

    module = types.ModuleType("toysuite_for_inspect")
    exec(compile(SOURCE, "toysuite_for_inspect.py", "exec"), module.__dict__)  # noqa: S102
    sys.modules[module.__name__] = module
    try:
        make = define_task(module.ToySuite())
        right = evaluate(make(agent="scripted:right", data_dir=str(tmp_path)), "mockllm/model",
                         tmp_path / "right")  # fmt: skip
        wrong = evaluate(make(agent="scripted:wrong", data_dir=str(tmp_path)), "mockllm/model",
                         tmp_path / "wrong")  # fmt: skip
    finally:
        del sys.modules[module.__name__]
    # its summary has no ``overall`` entry: its own rates are the headline figures
    for log, correct in ((right, True), (wrong, False)):
        assert [e["score"]["correct"] for e in episodes_of(log)] == [correct, correct]
        assert figures_of(log) == {"accuracy": 100.0 if correct else 0.0}
        assert counts_of(log) == {"completed": 2, "model_errors": 0, "infra_errors": 0}


def test_travelplanner_through_the_provider_scores_as_travelgym_run(offline, tmp_path,
                                                                    monkeypatch):  # fmt: skip
    from tests.suites.travelplanner.suite_data import write_suite_data
    from travelgym.cli import main
    from travelgym.runner.store import read_run
    from travelgym.suites.travelplanner.agents.planner import build_plan
    from travelgym.suites.travelplanner.agents.scripted import reference_cities
    from travelgym.suites.travelplanner.dataset import read_dataset
    from travelgym.suites.travelplanner.plans import plan_json
    from travelgym.suites.travelplanner.source import reference_sandbox

    dataset, database = write_suite_data(tmp_path / "tp", monkeypatch)
    queries = read_dataset(dataset, "validation")["validation"]
    # the scripted baseline's plan for each query, the first one's for the medium query
    plans = {q.query: plan_json(build_plan(q, s, reference_cities(s, q.org)))
             for q in queries for s in [reference_sandbox(q)]}  # fmt: skip
    plans[queries[1].query] = plans[queries[0].query]

    def respond(body: dict):
        asked = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if body["messages"][-1]["role"] == "user":
            return Reply(tool_calls=[tool_call("accommodation_search", {"city": "Rockford"})])
        plan = next(p for q, p in plans.items() if q in asked)
        return Reply(content=f"```json\n{plan}\n```")

    args = ["--mode", "two-stage", "--data", str(dataset), "--database", str(database)]
    with FakeOpenAIServer(responder=respond) as server:
        result = CliRunner().invoke(main, ["run", "travelplanner", "--agent", "llm:fake-model",
                                           "--base-url", server.base_url, "--limit", "2", *args,
                                           "--out", str(tmp_path / "runs"), "--data-dir",
                                           str(tmp_path / "data"), "--no-progress", "--json"])  # fmt: skip
        assert result.exit_code == 0, result.output
        # a service of its own: inspect keeps models (and their base URL) across evals
        monkeypatch.setenv("FAKETP_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKETP_API_KEY", "test")
        log = evaluate("travelgym/travelplanner", "openai-api/faketp/fake-model", tmp_path / "logs",
                       mode="two-stage", data=str(dataset), database=str(database),
                       data_dir=str(tmp_path / "data"), limit=2)  # fmt: skip
    run_dir = tmp_path / "runs" / "llm-fake-model"
    ran = {e["task_id"]: e for e in read_run(run_dir, "travelplanner", as_dicts=True).episodes}
    evaluated = {e["task_id"]: e for e in episodes_of(log)}
    assert set(evaluated) == set(ran) and len(ran) == 2
    for task_id, episode in evaluated.items():
        assert episode["score"] == ran[task_id]["score"] and episode["tool_calls"] == 1
        # the same steps (the tool call and its result, the plan) and the same chat
        assert without_clocks(episode["steps"]) == without_clocks(ran[task_id]["steps"])
        assert same_ids(episode["messages"]) == same_ids(ran[task_id]["messages"])
    finals = sorted(e["score"]["final"] for e in evaluated.values())
    assert finals == [False, True]  # the easy query's own plan passes, the borrowed one fails
    summary = summarize_run(get_suite("travelplanner"), run_dir)
    overall = summary["metrics"]["overall"]
    assert figures_of(log) == pytest.approx({k: v for k, v in overall.items() if k != "queries"})
    assert counts_of(log) == {k: summary["outcomes"][k] for k in COUNTS}
    assert metrics_of(log)["final_pass_rate"] == 0.5


def test_behavior2trip_through_the_provider_plays_as_travelgym_run(offline, tmp_path,
                                                                   trips_database, monkeypatch):  # fmt: skip
    """Behavior2Trip's native tool-calling agent (``-T agent=llm``; the task's default is the
    B2T-Agent's text format): a weather search, then the instance's witness plan; the inspect
    sample and ``travelgym run`` play the same steps and chat and score the same."""
    from travelgym.cli import main
    from travelgym.runner.store import read_run
    from travelgym.suites.behavior2trip.instance_sets import load_split

    data_dir = trips_database.path.parent.parent
    _, (instance,), _ = load_split("test", data_dir=data_dir, limit=1)
    city = instance.instruction.destination_city

    def respond(body: dict):
        if body["messages"][-1]["role"] == "user":
            return Reply(tool_calls=[tool_call("WeatherSearch", {"city": city})])
        return Reply(content=instance.witness)

    with FakeOpenAIServer(responder=respond) as server:
        result = CliRunner().invoke(main, ["run", "behavior2trip", "--agent", "llm:fake-model",
                                           "--base-url", server.base_url, "--limit", "1",
                                           "--out", str(tmp_path / "runs"), "--data-dir",
                                           str(data_dir), "--no-progress", "--json"])  # fmt: skip
        assert result.exit_code == 0, result.output
        monkeypatch.setenv("FAKEBT_BASE_URL", server.base_url)
        monkeypatch.setenv("FAKEBT_API_KEY", "test")
        log = evaluate("travelgym/behavior2trip", "openai-api/fakebt/fake-model",
                       tmp_path / "logs", data_dir=str(data_dir), limit=1, agent="llm")  # fmt: skip
    (ran,) = read_run(tmp_path / "runs" / "llm-fake-model", "behavior2trip", as_dicts=True).episodes
    (evaluated,) = episodes_of(log)
    assert evaluated["task_id"] == ran["task_id"] == instance.instance_id
    assert evaluated["score"] == ran["score"] and ran["score"]["final"] is True
    assert without_clocks(evaluated["steps"]) == without_clocks(ran["steps"])
    assert same_ids(evaluated["messages"]) == same_ids(ran["messages"])
