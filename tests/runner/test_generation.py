"""Generation options (Appendix G.2): validated strictly from presets, files and flags, sent
in the agent's requests (never the simulated user's), recorded in the manifest and part of a
run's identity on resume; and the COMPASS system prompt variants."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, Reply
from travelgym.cli import main
from travelgym.runner.generation import GenerationError, load_gen_config, resolve_generation

FAST_ENV = {"TRAVELGYM_TIMEOUT_S": "5"}
GEN_FLAGS = ["--temperature", "0.3", "--top-p", "0.9", "--max-tokens", "77", "--gen-seed", "5",
             "--reasoning-effort", "low",
             "--extra-body", '{"chat_template_kwargs": {"enable_thinking": true}}']  # fmt: skip
SENT = {"temperature": 0.3, "top_p": 0.9, "max_tokens": 77, "seed": 5, "reasoning_effort": "low",
        "chat_template_kwargs": {"enable_thinking": True}}  # fmt: skip
RECORDED = {"temperature": 0.3, "top_p": 0.9, "max_tokens": 77, "seed": 5,
            "reasoning_effort": "low",
            "extra_body": {"chat_template_kwargs": {"enable_thinking": True}}}  # fmt: skip


def respond(body: dict) -> Reply:
    if "tools" not in body:  # the LLM user simulator
        return Reply(content="I need a hotel, that's a must-have.")
    return Reply(content=json.dumps({"message": "Tell me more.", "recommendation": None}))


def run_compass(server, out, data_dir, *extra):
    args = ["run", "compass", "--agent", "llm:fake-model", "--limit", "1", "--max-turns",
            "2", "--no-progress", "--json", "--base-url", server.base_url, "--out", str(out),
            "--data-dir", str(data_dir), *extra]  # fmt: skip
    return CliRunner().invoke(main, args, env=FAST_ENV)


@pytest.fixture(scope="module")
def data_dir(compass_db):
    return compass_db.parent.parent


def test_flags_reach_the_agents_requests_and_the_manifest_and_not_the_users(tmp_path, data_dir):
    with FakeOpenAIServer(responder=respond) as server:
        ran = run_compass(server, tmp_path, data_dir, *GEN_FLAGS, "--user", "llm:fake-model")
        requests = list(server.requests)
    assert ran.exit_code == 0, ran.output
    agent = [r for r in requests if "tools" in r]
    user = [r for r in requests if "tools" not in r]
    assert agent and user
    for body in agent:
        assert {k: body.get(k) for k in SENT} == SENT
    for body in user:  # the simulated user is not the agent under test
        assert not set(SENT) & set(body)
    manifest = json.loads((tmp_path / "llm-fake-model" / "manifest.json").read_text())
    assert manifest["generation"] == RECORDED
    assert manifest["prompt"] == "paper"


def test_no_option_sends_no_sampling_parameter(tmp_path, data_dir):
    with FakeOpenAIServer(responder=respond) as server:
        ran = run_compass(server, tmp_path, data_dir)
        requests = list(server.requests)
    assert ran.exit_code == 0, ran.output
    assert requests and not any(set(SENT) & set(body) for body in requests)
    manifest = json.loads((tmp_path / "llm-fake-model" / "manifest.json").read_text())
    assert manifest["generation"] == {}


def test_preset_then_file_then_flags_and_resume_with_other_options_is_refused(tmp_path, data_dir):
    config = tmp_path / "gen.toml"
    config.write_text("top_p = 0.5\nmax_tokens = 10\n[extra_body]\nrepetition_penalty = 1.1\n")
    out = tmp_path / "runs"
    with FakeOpenAIServer(responder=respond) as server:
        ran = run_compass(server, out, data_dir, "--gen-preset", "qwen3-thinking",
                          "--gen-config", str(config), "--max-tokens", "20")  # fmt: skip
        body = next(r for r in server.requests if "tools" in r)
        assert ran.exit_code == 0, ran.output
        # the file's extra_body replaces the preset's; its max_tokens gives way to the flag
        assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.7, 0.5, 20)
        assert body["repetition_penalty"] == 1.1 and "chat_template_kwargs" not in body
        again = run_compass(server, out, data_dir, "--gen-preset", "qwen3-thinking",
                            "--gen-config", str(config), "--max-tokens", "20", "--resume")  # fmt: skip
        assert again.exit_code == 0, again.output
        other = run_compass(server, out, data_dir, "--gen-preset", "qwen3-thinking", "--resume")
        hints = run_compass(server, out, data_dir, "--gen-preset", "qwen3-thinking",
                            "--gen-config", str(config), "--max-tokens", "20", "--resume",
                            "--prompt", "search-hints")  # fmt: skip
    assert other.exit_code != 0 and "differs in: generation" in other.output
    assert hints.exit_code != 0 and "differs in: prompt" in hints.output


def test_default_prompt_has_no_search_hints_and_the_variant_does(tmp_path, data_dir):
    systems = {}
    for variant in ("paper", "search-hints"):
        with FakeOpenAIServer(responder=respond) as server:
            ran = run_compass(server, tmp_path / variant, data_dir, "--prompt", variant)
            systems[variant] = next(r for r in server.requests if "tools" in r)["messages"][0]
        assert ran.exit_code == 0, ran.output
        manifest = json.loads((tmp_path / variant / "llm-fake-model" / "manifest.json").read_text())
        assert manifest["prompt"] == variant
    paper, hints = systems["paper"]["content"], systems["search-hints"]["content"]
    assert systems["paper"]["role"] == "system"
    for text in (paper, hints):  # what the paper's prompt has: format, validation, tools
        assert '"recommendation"' in text and "recommend_hotel" in text and "tools" in text
    for hint in ("several dates", "airports", "pages", "Search broadly"):
        assert hint not in paper and hint in hints


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--temperature", "2.5"],
            "--temperature: generation option temperature: Input should be less than or equal to 2",
        ),
        (["--temperature", "-0.1"], "greater than or equal to 0"),
        (["--top-p", "0"], "--top-p: generation option top_p: Input should be greater than 0"),
        (["--top-p", "1.5"], "less than or equal to 1"),
        (["--max-tokens", "0"], "--max-tokens: generation option max_tokens"),
        (["--reasoning-effort", "extreme"], "'extreme' is not one of"),
        (["--extra-body", "[1]"], "--extra-body: must be a JSON object"),
        (["--extra-body", "{nope"], "--extra-body: not valid JSON"),
        (["--extra-body", '{"temperature": 1}'], "extra_body may not set temperature"),
        (["--gen-preset", "gpt4"], "'gpt4' is not one of"),
        (["--prompt", "clever"], "'clever' is not one of 'paper', 'search-hints'"),
    ],
)
def test_bad_flags_are_one_line_usage_errors(tmp_path, flags, message):
    ran = CliRunner().invoke(main, ["run", "compass", "--agent", "llm:x", "--out",
                                    str(tmp_path), *flags])  # fmt: skip
    assert ran.exit_code == 2
    error = [line for line in ran.output.splitlines() if line.startswith("Error")]
    assert len(error) == 1 and message in error[0], ran.output


def test_prompt_is_a_compass_option(tmp_path):
    ran = CliRunner().invoke(main, ["run", "behavior2trip", "--agent", "b2t:x", "--prompt",
                                    "paper", "--out", str(tmp_path)])  # fmt: skip
    assert ran.exit_code == 2 and "--prompt" in ran.output


def test_generation_flags_without_an_llm_agent_are_refused(tmp_path):
    ran = CliRunner().invoke(main, ["run", "compass", "--agent", "scripted:greedy", "--user",
                                    "llm:x", "--temperature", "0", "--out", str(tmp_path)])  # fmt: skip
    assert ran.exit_code == 2 and "--temperature applies to LLM agents only" in ran.output


@pytest.mark.parametrize(
    ("text", "suffix", "message"),
    [
        (
            '{"temperature": "0.5"}',
            ".json",
            "generation option temperature: Input should be a valid number",
        ),
        ('{"seed": 1.5}', ".json", "generation option seed: Input should be a valid integer"),
        ('{"seed": true}', ".json", "generation option seed"),
        ('{"max_tokens": "5"}', ".json", "generation option max_tokens"),
        (
            '{"temprature": 0}',
            ".json",
            "unknown generation option 'temprature' (options: temperature, top_p",
        ),
        ('{"extra_body": 3}', ".json", "generation option extra_body"),
        ("[0]", ".json", "generation options must be an object"),
        ("{", ".json", "not valid JSON"),
        ("temperature = ", ".toml", "not valid TOML"),
        ("when = 1979-05-27\n[extra_body]\nd = 1979-05-27", ".toml", "generation option"),
    ],
)
def test_bad_config_files_are_one_line_errors_naming_the_file(tmp_path, text, suffix, message):
    path = tmp_path / f"gen{suffix}"
    path.write_text(text)
    with pytest.raises(GenerationError) as caught:
        load_gen_config(path)
    assert str(path) in str(caught.value) and message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_extra_body_must_be_json_data_and_missing_file_is_named(tmp_path):
    path = tmp_path / "gen.toml"
    path.write_text("[extra_body]\nwhen = 1979-05-27\n")
    with pytest.raises(GenerationError, match="extra_body is not JSON data"):
        load_gen_config(path)
    with pytest.raises(GenerationError, match="nope.json: cannot read"):
        load_gen_config(tmp_path / "nope.json")


def test_presets_are_the_papers_settings_and_valid():
    assert resolve_generation("paper-default") == {"temperature": 0}
    assert resolve_generation("gpt5") == {"reasoning_effort": "medium"}  # no temperature sent
    qwen = resolve_generation("qwen3-thinking")
    assert qwen["temperature"] == 0.7
    assert qwen["extra_body"] == {"chat_template_kwargs": {"enable_thinking": True}}
    assert resolve_generation() == {}
    assert resolve_generation("paper-default", flags={"temperature": 1.0}) == {"temperature": 1.0}


def test_a_manifest_from_before_generation_options_resumes_only_without_them(tmp_path):
    from travelgym.runner.store import RunDirError, RunStore

    manifest = {"suite": "compass", "agent": "llm:m", "seed": 0, "task_ids": ["a"], "trials": 1}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))  # no "generation" key
    with RunStore(tmp_path) as store:
        assert store.open({**manifest, "generation": {}}, resume=True) == set()
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with RunStore(tmp_path) as store, pytest.raises(RunDirError, match="differs in: generation"):
        store.open({**manifest, "generation": {"temperature": 0.0}}, resume=True)


def test_code_agent_prompt_variants():
    from travelgym.suites.compass.agents.code_agent import system_prompt

    paper, hints = system_prompt("LISTING"), system_prompt("LISTING", "search-hints")
    for text in (paper, hints):
        assert "run_python" in text and "LISTING" in text and "recommend_flight" in text
    assert "loop over dates" not in paper and "loop over dates" in hints
    with pytest.raises(ValueError, match="unknown prompt variant"):
        system_prompt("LISTING", "clever")
