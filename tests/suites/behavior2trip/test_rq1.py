"""RQ1 (docs/behavior2trip/rq1.md): planning without the behaviour trajectory, and with a
simulated user answering clarification questions. The same test instances (60 for the scripted
agent, 12 for the B2T LLM agent against the local OpenAI-compatible test server) are run with
the trajectory, without it and without it plus clarification, through the CLI; the template
user never reveals what was not asked."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, Reply
from travelgym.cli import main
from travelgym.runner.store import EPISODES, MANIFEST
from travelgym.suites.behavior2trip.clarify import (
    ASK_SPECIFIC,
    NO_PREFERENCE,
    TOPICS,
    profile_values,
    template_answer,
    topics_of,
)
from travelgym.suites.behavior2trip.clarify_agent import QUESTIONS
from travelgym.suites.behavior2trip.clarify_llm import clean_reply
from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances

N = 60
N_LLM = 12  # the LLM agent's test counts requests and turns per instance: any number shows it
METRICS = ("DR", "C_micro", "C_macro", "UPC_micro", "UPC_macro", "final")
MODES = {"with": (), "without": ("--no-trajectory",),
         "clarify": ("--no-trajectory", "--clarify", "template")}  # fmt: skip
CALL = '<tool_call>{{"name": "AskUser", "arguments": {{"question": "{}"}}}}</tool_call>'
ASK = ("<think>no trajectory: I ask</think>" + CALL.format("What hotel star level do you want?")
       + CALL.format("What cuisine do you like?"))  # fmt: skip
ANSWER = "<think>done</think><answer>[]</answer>"


@pytest.fixture(scope="module")
def data_dir(trips_database):
    directory = trips_database.path.parent.parent
    ensure_instances(trips_database, directory, splits=("test",))
    return str(directory)


@pytest.fixture(scope="module")
def instances(trips_database, data_dir):
    path = ensure_instances(trips_database, data_dir, splits=("test",))["test"]
    return load_instances(path, check=False)


def _run(data_dir, out, agent, *extra):
    concurrency = [] if "--concurrency" in extra else ["--concurrency", "2"]  # given once
    return CliRunner().invoke(main, ["run", "behavior2trip", "--agent", agent, "--out", str(out),
                                     "--no-progress", "--data-dir", data_dir, "--json",
                                     *concurrency, *extra])  # fmt: skip


def _summary(result, agent):
    assert result.exit_code == 0, result.output
    return json.loads(result.output[result.output.index("{") :])[agent]


def _episodes(run_dir):
    return [json.loads(line) for line in (run_dir / EPISODES).read_text().splitlines()]


# --- the template user -----------------------------------------------------------------------


def _leaks(answer: str, profile, asked: list[str]) -> list[str]:
    """Profile values of topics not asked that the answer names (a value that is part of an
    asked topic's own value, e.g. the intracity 'Bus' in 'Long-distance Bus', is not a leak)."""
    own = [v.lower() for t in asked for v in profile_values(profile, t)]
    text = answer.lower()
    return [v for t in TOPICS if t not in asked for v in profile_values(profile, t)
            if v.lower() in text and not any(v.lower() in o for o in own)]  # fmt: skip


def test_the_template_user_never_reveals_what_was_not_asked(instances):
    """Every topic on 400 profiles: the answer names the topic's values (or no preference) and
    no value of any other topic; a question about nothing, or the budget, reveals nothing."""
    questions = {topic: question for topic, question, _ in QUESTIONS}
    assert set(questions) == set(TOPICS)
    profiles = [x.profile for x in instances[:400]]
    for profile in profiles:
        for topic, question in questions.items():
            answer, answered = template_answer(question, profile)
            assert answered == [topic], (question, answered)
            values = profile_values(profile, topic)
            assert all(v in answer for v in values) and (values or NO_PREFERENCE in answer)
            assert not _leaks(answer, profile, [topic]), (topic, answer)
        for vague in ("Can you tell me more about yourself?", "Anything else?", ""):
            answer, answered = template_answer(vague, profile)
            assert answer == ASK_SPECIFIC and answered == []
            assert not _leaks(answer, profile, [])
        answer, answered = template_answer("What is your budget?", profile)
        assert answered == [] and not _leaks(answer, profile, [])
    assert sum(bool(profile_values(p, t)) for p in profiles for t in TOPICS) > 400  # real values


def test_topics_of_questions():
    assert topics_of("Which seat class do you like, and how far can you walk?") == [
        "walking_tolerance", "seat_class"]  # fmt: skip
    assert topics_of("What kind of hotel do you like?") == ["hotel_star"]
    assert topics_of("Tell me about your hotels") == ["hotel_star", "hotel_facilities"]
    assert topics_of("Is there anything to know?") == []


def test_llm_user_replies_are_cleaned_or_refused():
    from travelgym.suites.behavior2trip.clarify import ClarifyError

    assert clean_reply("<think>hmm</think> I like Hot Pot.") == "I like Hot Pot."
    assert clean_reply('{"answer": "Quiet places"}') == "Quiet places"
    for bad in (None, "", "  <think>x</think> ", "{not json", "<answer>[]</answer>"):
        with pytest.raises(ClarifyError):
            clean_reply(bad)


# --- runs through the CLI --------------------------------------------------------------------


@pytest.mark.slow
def test_scripted_runs_with_without_and_with_clarification(data_dir, tmp_path):
    """The scripted agent on the same 60 instances: every metric in each mode; clarification
    turns 0 without --clarify, 1-5 with it; asking recovers preference matches."""
    out = {mode: _summary(_run(data_dir, tmp_path / mode, "scripted", "--limit", str(N), *flags),
                          "scripted") for mode, flags in MODES.items()}  # fmt: skip
    for summary in out.values():
        assert summary["overall"]["n"] == N and all(m in summary["overall"] for m in METRICS)
        assert set(summary["by_difficulty"]) == {"easy", "medium", "hard"}
    assert "clarification_turns" not in out["with"]["overall"]  # ordinary runs keep their shape
    assert out["without"]["overall"]["clarification_turns"] == 0
    turns = out["clarify"]["overall"]["clarification_turns"]
    assert 0 < turns <= 5 and all(0 < agg["clarification_turns"] <= 5
                                  for agg in out["clarify"]["by_difficulty"].values())  # fmt: skip
    assert out["clarify"]["overall"]["UPC_micro"] >= out["without"]["overall"]["UPC_micro"]
    assert out["with"]["overall"]["UPC_micro"] > out["without"]["overall"]["UPC_micro"]

    ids = {mode: [e["instance_id"] for e in _episodes(tmp_path / mode / "scripted")]
           for mode in MODES}  # fmt: skip
    assert sorted(ids["with"]) == sorted(ids["without"]) == sorted(ids["clarify"])
    for e in _episodes(tmp_path / "clarify" / "scripted"):
        dialogue = e["clarification"]
        assert e["trajectory_withheld"] and dialogue["user"] == "template"
        assert dialogue["turns"] == len(dialogue["exchanges"]) == 5 == dialogue["limit"]
        asks = [c for s in e["steps"] for c in s["tool_calls"] if c["name"] == "AskUser"]
        assert len(asks) == 5 and all(c["ok"] for c in asks)
    for e in _episodes(tmp_path / "without" / "scripted"):
        assert e["trajectory_withheld"] and e["clarification"] is None
    manifest = json.loads((tmp_path / "clarify" / "scripted" / MANIFEST).read_text())
    assert (manifest["no_trajectory"], manifest["clarify"], manifest["clarify_turns"]) == (
        True, "template", 5)  # fmt: skip

    scored = CliRunner().invoke(main, ["score", str(tmp_path / "clarify" / "scripted"),
                                       "--data-dir", data_dir, "--json"])  # fmt: skip
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.output)["overall"]["clarification_turns"] == turns
    table = CliRunner().invoke(main, ["score", str(tmp_path / "clarify" / "scripted"),
                                      "--data-dir", data_dir])  # fmt: skip
    assert "turns" in table.output.splitlines()[0]

    # resuming with other RQ1 settings is refused
    again = _run(data_dir, tmp_path / "clarify", "scripted", "--limit", str(N), "--resume",
                 "--no-trajectory")  # fmt: skip
    assert again.exit_code != 0 and "clarify" in again.output


def _agent(body):
    """The fake endpoint: the user model answers as a traveller; the agent asks twice when it
    can (AskUser listed), then delivers an (empty) plan."""
    if body["model"] == "user-model":
        return Reply("<think>the star level</think>I want 4-Star/Upscale hotels.")
    last = body["messages"][-1]["content"]
    asked = "AskUser" in body["messages"][0]["content"] and "<tool_response>" not in last
    return Reply(ASK if asked else ANSWER)


def test_b2t_agent_runs_with_without_and_with_clarification(data_dir, tmp_path):
    """The B2T LLM agent on the same 12 instances in each mode against the test server:
    AskUser appears in its prompt only in clarification mode, each answered question is a turn,
    every metric and the turns are reported."""
    with FakeOpenAIServer(responder=_agent) as server:
        runs = {mode: _run(data_dir, tmp_path / mode, "b2t:agent-model", "--limit", str(N_LLM),
                           "--base-url", server.base_url, *flags)
                for mode, flags in MODES.items()}  # fmt: skip
        out = {mode: _summary(result, "b2t:agent-model") for mode, result in runs.items()}
        requests = list(server.requests)
    for summary in out.values():
        assert summary["overall"]["n"] == N_LLM and all(m in summary["overall"] for m in METRICS)
    assert "clarification_turns" not in out["with"]["overall"]
    assert out["without"]["overall"]["clarification_turns"] == 0
    assert out["clarify"]["overall"]["clarification_turns"] == 2
    firsts = [r["messages"] for r in requests if len(r["messages"]) == 2]
    with_ask = [m for m in firsts if "AskUser" in m[0]["content"]]
    assert len(firsts) == 3 * N_LLM and len(with_ask) == N_LLM
    assert all("none is available" in m[1]["content"] and "at most 5 questions" in m[1]["content"]
               for m in with_ask)  # fmt: skip
    assert sum("Behavior trajectory:\n[" in m[1]["content"] for m in firsts) == N_LLM
    episode = _episodes(tmp_path / "clarify" / "b2t-agent-model")[0]
    topics = [x["topics"] for x in episode["clarification"]["exchanges"]]
    assert topics == [["hotel_star"], ["cuisine"]]
    assert "Hotel class:" in episode["steps"][0]["observation"]


def test_llm_user_over_the_turn_limit_and_malformed_replies(data_dir, tmp_path):
    """An LLM user (--clarify MODEL): a malformed reply is an AskUser error, not a turn, and the
    episode goes on; a question over --clarify-turns is refused with the limit named."""
    replies = iter([Reply(""), Reply("Hot Pot, please.")] + [Reply("4-Star/Upscale")] * 10)

    def respond(body):
        if body["model"] == "user-model":
            return next(replies)
        return _agent(body)

    with FakeOpenAIServer(responder=respond) as server:
        done = _run(data_dir, tmp_path, "b2t:agent-model", "--limit", "2", "--concurrency", "1",
                    "--base-url", server.base_url, "--no-trajectory", "--clarify", "user-model",
                    "--clarify-turns", "1")  # fmt: skip
        user_calls = [r for r in server.requests if r["model"] == "user-model"]
    summary = _summary(done, "b2t:agent-model")
    first, second = _episodes(tmp_path / "b2t-agent-model")
    one = first["clarification"]
    assert one["user"] == "user-model" and one["turns"] == 1
    assert one["exchanges"][0]["error"] and "empty reply" in one["exchanges"][0]["error"]
    assert one["exchanges"][1]["answer"] == "Hot Pot, please."
    two = second["clarification"]["exchanges"]
    assert two[0]["turn"] == 1 and "limit of 1 questions is reached" in two[1]["error"]
    assert summary["overall"]["clarification_turns"] == 1 and summary["errors"] == 0
    prompt = user_calls[0]["messages"][0]["content"]
    assert len(user_calls) == 3 and "Never mention" in prompt and "# Your preferences" in prompt
    assert user_calls[0]["messages"][-1]["content"] == "What hotel star level do you want?"


@pytest.mark.parametrize("flags, message", [
    (("--clarify", "template"), "--clarify needs --no-trajectory"),
    (("--no-trajectory", "--clarify-turns", "3"), "--clarify-turns applies with --clarify only"),
    (("--no-trajectory", "--clarify", "template", "--clarify-turns", "0"), "--clarify-turns"),
])  # fmt: skip
def test_bad_rq1_flags_are_one_line_usage_errors(data_dir, tmp_path, flags, message):
    result = _run(data_dir, tmp_path, "scripted", "--limit", "1", *flags)
    assert result.exit_code == 2 and message in result.output
    assert "Traceback" not in result.output
