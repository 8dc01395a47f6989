"""One agent grammar for every suite (issue 33): ``llm:MODEL`` and ``--model MODEL`` for the
native tool-calling agent, ``package.module:factory`` for a policy written in Python, driven by
the suite's model agent and scored like any other agent; bad specs are one-line errors."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.core.registry import all_suites, get_suite
from travelgym.runner.specs import SpecError, parse_agent_spec


def _run(tmp_path, compass_db, *args: str):
    return CliRunner().invoke(main, ["run", "compass", "--limit", "1", "--max-turns", "2",
                                     "--out", str(tmp_path / "runs"), "--data-dir",
                                     str(compass_db.parent.parent), "--no-progress", "--json",
                                     *args])  # fmt: skip


def _episodes(run_dir) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text().splitlines() if x]


def test_every_suite_takes_llm_and_a_python_policy():
    for suite in all_suites():
        spec = parse_agent_spec(suite, "llm:some-model")
        assert (spec.kind, spec.model, spec.text) == ("llm", "some-model", "llm:some-model")
        policy = parse_agent_spec(suite, "tests.my_agent:make")
        assert policy.kind == suite.model_agent and policy.text == "tests.my_agent:make"
        assert policy.model == "python:tests.my_agent:make"
        assert policy.dirname == "tests.my_agent-make"
    # the name TravelPlanner's tool-calling agent had before still parses (its runs resume)
    assert parse_agent_spec(get_suite("travelplanner"), "tool:m").text == "tool:m"
    for bad in ("tests.my_agent", "tests.my_agent:", "tests..x:make", "tests.my_agent:ma-ke"):
        with pytest.raises(SpecError, match="package.module:factory"):
            parse_agent_spec(get_suite("compass"), bad)


def test_a_python_policy_runs_as_the_agent(tmp_path, compass_db):
    """``--agent tests.my_agent:make``: the policy gets the suite's prompt and tool schemas,
    its tool call runs and is recorded, and the episode is stored and scored like a model's."""
    done = _run(tmp_path, compass_db, "--agent", "tests.my_agent:make")
    assert done.exit_code == 0, done.output
    summary = json.loads(done.output)["tests.my_agent:make"]
    assert summary["outcomes"]["completed"] + summary["outcomes"]["model_errors"] == 1
    run_dir = tmp_path / "runs" / "tests.my_agent-make"
    assert json.loads((run_dir / "manifest.json").read_text())["agent"] == "tests.my_agent:make"
    (episode,) = _episodes(run_dir)
    assert episode["agent"] == "tests.my_agent:make" and episode["outcome"] != "infra_error"
    text = json.dumps(episode)
    assert "nothing to recommend yet" in text
    first_tool = get_suite("compass").tool_registry().names[0]
    assert f'"name": "{first_tool}"' in text  # the policy's tool call ran through the tools


def test_a_failing_policy_is_the_agents_failure_not_an_outage(tmp_path, compass_db):
    done = _run(tmp_path, compass_db, "--agent", "tests.my_agent:broken")
    assert done.exit_code == 0, done.output  # no infra error: --max-error-rate is not crossed
    (episode,) = _episodes(tmp_path / "runs" / "tests.my_agent-broken")
    assert (episode["outcome"], episode["cause"]) == ("model_error", "agent policy_error")
    assert "my policy has a bug" in json.dumps(episode)


@pytest.mark.parametrize(("spec", "message"), [
    ("tests.no_such_module:make", "cannot import 'tests.no_such_module'"),
    ("tests.agent_import_error:make", "RuntimeError: this agent module is broken"),
    ("tests.my_agent:nothing", "'tests.my_agent' has no 'nothing'"),
    ("tests.my_agent:not_a_policy", "has no complete(messages, tools=None) method"),
])  # fmt: skip
def test_a_policy_that_cannot_load_is_refused_in_one_line(tmp_path, compass_db, spec, message):
    done = _run(tmp_path, compass_db, "--agent", spec)
    assert done.exit_code != 0
    errors = [x for x in done.output.splitlines() if x.startswith("Error") or "error" in x]
    assert len(errors) == 1 and message in errors[0], done.output
    assert "Traceback" not in done.output


@pytest.mark.slow
def test_model_is_llm_model(tmp_path, compass_db):
    """``--model M`` is ``--agent llm:M``: the same run directory, manifest and outcome (here
    an endpoint that refuses connections: an infra error, exit status 3, for both)."""
    seen = []
    for args in (["--model", "m"], ["--agent", "llm:m"]):
        out = tmp_path / args[0].strip("-")
        done = CliRunner().invoke(main, ["run", "compass", "--limit", "1", "--out", str(out),
                                         "--data-dir", str(compass_db.parent.parent),
                                         "--no-progress", "--json", "--base-url",
                                         "http://127.0.0.1:9/v1", *args])  # fmt: skip
        manifest = json.loads((out / "llm-m" / "manifest.json").read_text())
        (episode,) = _episodes(out / "llm-m")
        seen.append((done.exit_code, manifest["agent"], episode["outcome"], episode["cause"]))
    assert seen[0] == seen[1] == (3, "llm:m", "infra_error", "agent connection")
