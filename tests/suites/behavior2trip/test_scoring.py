"""Metrics with hand-computed values, answers files and run directories, and the LLM judge
against the local OpenAI-compatible server (including malformed judge replies)."""

from __future__ import annotations

import asyncio
import copy
import json

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, HTTPError, Reply
from tests.suites.behavior2trip.test_checks import (
    BUDGET_SLACK,
    _instruction,
    _prefs,
    answer_of,
    build_case,
)
from travelgym.llm import OpenAIChatClient
from travelgym.suites.behavior2trip.agents.base import TripStep
from travelgym.suites.behavior2trip.checks import C_IDS, CHECKS, UPC_IDS, CheckResult, PlanDB
from travelgym.suites.behavior2trip.checks.context import Context
from travelgym.suites.behavior2trip.checks.personalization import trip_cost
from travelgym.suites.behavior2trip.episode import TripEpisode
from travelgym.suites.behavior2trip.judge import (
    JudgeVerdict,
    judge_messages,
    judge_plan,
    parse_verdict,
)
from travelgym.suites.behavior2trip.plan_parse import parse_plan
from travelgym.suites.behavior2trip.scoring import (
    METRICS,
    AnswerFileError,
    InstanceResult,
    aggregate,
    read_answers,
    score_answers,
    score_plan,
    summarize,
)

KEYS = {"n", *METRICS, "LLM", "LLM_errors"}


def _result(
    iid: str, difficulty: str, delivered: bool, c_fail: int, upc: tuple[int, int]
) -> InstanceResult:
    """A result with ``c_fail`` failed C checks and ``upc = (passed, applicable)``."""
    checks = []
    for i, c in enumerate(CHECKS):
        if c.group == "C":
            passed = delivered and C_IDS.index(c.id) >= c_fail
        else:
            k = UPC_IDS.index(c.id)
            passed = None if k >= upc[1] else delivered and k < upc[0]
        checks.append(
            CheckResult(id=c.id, group=c.group, category=c.category, passed=passed, reason=str(i))
        )
    return InstanceResult(
        instance_id=iid, difficulty=difficulty, delivered=delivered, checks=checks
    )


def test_aggregate_hand_computed():
    rows = [
        _result("a", "easy", True, 0, (3, 3)),  # passes everything
        _result("b", "easy", True, 2, (2, 4)),
        _result("c", "hard", False, 22, (0, 10)),  # undelivered: every applicable check failed
        _result("d", "hard", True, 0, (9, 10)),
    ]
    assert [r.final for r in rows] == [True, False, False, False]
    assert (rows[1].c_passed, rows[1].c_applicable, rows[1].upc_passed, rows[1].upc_applicable) == (
        20,
        22,
        2,
        4,
    )
    out = summarize(rows)
    assert set(out) == {"overall", "by_difficulty", "instances"}
    assert list(out["by_difficulty"]) == ["easy", "hard"]
    assert out["overall"] == {"n": 4, "DR": 75.0, "C_micro": round(100 * 64 / 88, 2), "C_macro": 50.0,
                              "UPC_micro": round(100 * 14 / 27, 2), "UPC_macro": 25.0, "final": 25.0,
                              "LLM": None, "LLM_errors": 0}  # fmt: skip
    easy, hard = out["by_difficulty"]["easy"], out["by_difficulty"]["hard"]
    assert (easy["n"], easy["DR"], easy["C_micro"], easy["C_macro"]) == (
        2,
        100.0,
        round(100 * 42 / 44, 2),
        50.0,
    )
    assert (easy["UPC_micro"], easy["UPC_macro"], easy["final"]) == (
        round(100 * 5 / 7, 2),
        50.0,
        50.0,
    )
    assert (hard["DR"], hard["C_micro"], hard["C_macro"], hard["UPC_micro"], hard["UPC_macro"], hard["final"]) == (
        50.0, 50.0, 50.0, 45.0, 0.0, 0.0)  # fmt: skip
    first = out["instances"][0]
    assert first["final"] is True and first["c_passed"] == 22 and len(first["checks"]) == 32
    assert summarize(out["instances"])["overall"] == out["overall"]  # results round-trip as JSON


def test_aggregate_llm_rate_and_empty():
    rows = [_result(x, "easy", True, 0, (1, 1)) for x in "abcd"]
    rows[0].judge, rows[1].judge = JudgeVerdict(passed=True), JudgeVerdict(passed=False)
    rows[2].judge = JudgeVerdict(passed=None, error="malformed judge reply")
    got = aggregate(rows)
    assert (got["LLM"], got["LLM_errors"]) == (50.0, 1)
    empty = aggregate([])
    assert set(empty) == KEYS and empty["n"] == 0 and empty["DR"] is None


# --- answers against the real checks ------------------------------------------------------------


@pytest.fixture(scope="module")
def scenario(trips_db):
    """Four instances (hard, easy, medium, hard) and their answers: a valid plan, no plan, a plan
    missing one day's weather (one C check fails), and the valid plan for a user who wants
    luxury restaurants (one UPC check fails)."""
    days, base, _ = build_case(trips_db)
    db = PlanDB.open(trips_db)
    plan, _ = parse_plan(answer_of(days))
    base = _instruction(base, budget_cny=int(trip_cost(Context(plan, base, db))) + BUDGET_SLACK)
    db.close()

    def variant(iid: str, difficulty: str, instance=base):
        return instance.model_copy(update={"instance_id": iid, "difficulty": difficulty})

    luxury = _prefs(base, "dining_requirements", price_level="Luxury (300-500 CNY/person)")
    instances = [variant("b2t-a", "hard"), variant("b2t-b", "easy"), variant("b2t-c", "medium"),
                 variant("b2t-d", "hard", luxury)]  # fmt: skip
    no_weather = copy.deepcopy(days)
    del no_weather[1]["weather"]
    answers = [
        {"instance_id": "b2t-a", "answer": answer_of(days)},
        {"instance_id": "b2t-b", "answer": "Sorry, I ran out of steps."},
        {"instance_id": "b2t-c", "answer": answer_of(no_weather)},
        {"instance_id": "b2t-d", "answer": "draft"},
        {"instance_id": "b2t-d", "answer": answer_of(days)},  # answered again: this one counts
        {"instance_id": "b2t-zzz", "answer": answer_of(days)},
    ]
    return instances, answers


def test_score_answers_hand_computed(scenario, trips_db):
    instances, answers = scenario
    out = score_answers(answers, instances, trips_db)
    assert out["errors"] == ["answer 5: b2t-d answered again; the last answer counts",
                             "answer 6: unknown instance_id 'b2t-zzz'"]  # fmt: skip
    by_id = {r["instance_id"]: r for r in out["instances"]}
    assert by_id["b2t-a"]["final"] and by_id["b2t-a"]["delivered"]
    assert not by_id["b2t-b"]["delivered"] and by_id["b2t-b"]["c_applicable"] == 22
    assert [c["id"] for c in by_id["b2t-c"]["checks"] if c["passed"] is False] == [
        "reason.weather_city_info"
    ]
    # the cuisine days count restaurants at the preferred (luxury) price level too
    assert [c["id"] for c in by_id["b2t-d"]["checks"] if c["passed"] is False] == [
        "pref.cuisine", "pref.price_level"
    ]  # fmt: skip
    # C: 22 + 0 + 21 + 22 of 88; UPC: 10 + 0 + 10 + 8 of 40
    assert out["overall"] == {"n": 4, "DR": 75.0, "C_micro": round(100 * 65 / 88, 2), "C_macro": 50.0,
                              "UPC_micro": 70.0, "UPC_macro": 50.0, "final": 25.0, "LLM": None,
                              "LLM_errors": 0}  # fmt: skip
    assert list(out["by_difficulty"]) == ["easy", "medium", "hard"]
    assert (
        out["by_difficulty"]["easy"]["DR"] == 0.0
        and out["by_difficulty"]["medium"]["C_macro"] == 0.0
    )
    hard = out["by_difficulty"]["hard"]
    assert (hard["n"], hard["C_macro"], hard["UPC_macro"], hard["final"]) == (2, 100.0, 50.0, 50.0)
    assert hard["UPC_micro"] == 90.0


def test_score_plan_is_json(scenario, trips_db):
    instances, answers = scenario
    got = score_plan(instances[0], answers[0]["answer"], trips_db)
    assert got["delivered"] is True and got["final"] is True and len(got["checks"]) == 32
    json.dumps(got)
    nothing = score_plan(instances[0], None, trips_db)
    assert nothing["delivered"] is False and nothing["problems"] == ["no answer"]


def test_read_answers_file_and_run_directory(scenario, tmp_path, trips_db):
    instances, answers = scenario
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(a) for a in answers[:3]) + "\n\n")
    assert read_answers(path) == [{**a, "trial": 0} for a in answers[:3]]
    run = tmp_path / "run"
    run.mkdir()

    def episode(iid, trial, answer):  # a run directory holds whole (strictly read) episodes
        step = TripStep(index=0, answer=answer is not None, delivered=answer)  # as it delivered
        return TripEpisode(episode_id=f"{iid}#{trial}", task_id=iid, instance_id=iid, trial=trial,
                           split="test", difficulty="easy", agent="scripted", steps=[step],
                           final_answer=answer).model_dump(mode="json")  # fmt: skip

    episodes = [episode("b2t-a", 0, answers[0]["answer"]), episode("b2t-a", 1, None),
                episode("b2t-c", 0, answers[2]["answer"])]  # fmt: skip
    (run / "episodes.jsonl").write_text("".join(json.dumps(e) + "\n" for e in episodes))
    entries = read_answers(run)
    assert [(e["instance_id"], e["trial"], e["answer"] is None) for e in entries] == [
        ("b2t-a", 0, False), ("b2t-a", 1, True), ("b2t-c", 0, False)]  # fmt: skip
    out = score_answers(entries, {x.instance_id: x for x in instances}, trips_db)
    assert (
        out["errors"] == []
        and out["overall"]["n"] == 3
        and out["overall"]["DR"] == round(200 / 3, 2)
    )
    assert (
        score_answers(episodes, instances, trips_db)["overall"] == out["overall"]
    )  # raw lines too


@pytest.mark.parametrize(
    "content, message",
    [
        ("not json\n", "not valid JSON"),
        ('{"answer": "x"}\n', "expected an object"),
        (None, "no episodes.jsonl"),
    ],
)
def test_read_answers_errors(tmp_path, content, message):
    path = tmp_path / "answers.jsonl"
    if content is None:
        path = tmp_path
    else:
        path.write_text(content)
    with pytest.raises(AnswerFileError, match=message):
        read_answers(path)


# --- the LLM judge ------------------------------------------------------------------------------


def _client(server: FakeOpenAIServer) -> OpenAIChatClient:
    return OpenAIChatClient("fake-model", base_url=server.base_url, max_retries=0)


def test_parse_verdict():
    assert parse_verdict('```json\n{"pass": true, "reason": "ok"}\n```') == JudgeVerdict(
        passed=True, reason="ok"
    )
    assert parse_verdict('Verdict: {"Passed": "false", "reason": "no hotel"}').passed is False
    for bad in ("looks good to me", '{"reason": "x"}', '{"pass": "maybe"}', "[true]", None):
        with pytest.raises(ValueError):
            parse_verdict(bad)


def test_judge_prompt_holds_the_rubric_inputs(scenario):
    instances, answers = scenario
    (message,) = judge_messages(instances[3], answers[4]["answer"])
    text = message.content
    assert instances[3].instruction.text in text and "Luxury (300-500 CNY/person)" in text
    assert "Rubric" in text and '"pass"' in text and "historical_travel_experiences" not in text
    assert (
        json.loads(text.split("# Travel plan\n", 1)[1].split("\n\n# Rubric", 1)[0])[0]["day"] == 1
    )


def test_judge_through_fake_server(scenario, trips_db):
    instances, answers = scenario

    def responder(body):
        prompt = body["messages"][0]["content"]
        if "Luxury" in prompt:
            return Reply("The plan looks great, I approve!")  # malformed: no JSON verdict
        return Reply('{"pass": true, "reason": "complete and personalised"}')

    with FakeOpenAIServer(responder=responder) as server:
        out = score_answers(
            answers[:5], instances, trips_db, judge=_client(server), judge_concurrency=2
        )
        calls = len(server.requests)
    by_id = {r["instance_id"]: r["judge"] for r in out["instances"]}
    assert by_id["b2t-a"] == {"passed": True, "reason": "complete and personalised", "error": None}
    assert by_id["b2t-b"] == {"passed": False, "reason": "no plan delivered", "error": None}
    assert by_id["b2t-c"]["passed"] is True
    assert by_id["b2t-d"]["passed"] is None and "malformed judge reply" in by_id["b2t-d"]["error"]
    assert calls == 2 + 2  # a, c once each; d twice (attempts=2); b not at all
    assert (out["overall"]["LLM"], out["overall"]["LLM_errors"]) == (round(100 * 2 / 3, 2), 1)
    assert (
        out["by_difficulty"]["hard"]["LLM"] == 100.0 and out["by_difficulty"]["easy"]["LLM"] == 0.0
    )


def test_judge_call_failure_is_recorded(scenario):
    instances, answers = scenario
    with FakeOpenAIServer([HTTPError(400, "bad request")]) as server:
        got = asyncio.run(judge_plan(_client(server), instances[0], answers[0]["answer"]))
    assert got.passed is None and got.error.startswith("judge call failed")
    with FakeOpenAIServer(
        [Reply("no idea"), Reply('{"pass": false, "reason": "too long days"}')]
    ) as server:
        got = asyncio.run(judge_plan(_client(server), instances[0], answers[0]["answer"]))
    assert got == JudgeVerdict(passed=False, reason="too long days")
