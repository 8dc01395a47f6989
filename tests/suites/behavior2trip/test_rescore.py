"""``score``'s re-derivation hooks of Behavior2Trip (:mod:`travelgym.suites.behavior2trip.rescore`):
a real run's every episode gives back its stored final answer from its own steps and its stored
score, judge verdict included, from that answer; another answer scores otherwise; a plan's
tool ids are found, garbage names none."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, Reply
from travelgym.cli import main
from travelgym.core.answers import NOT_RECORDED
from travelgym.core.registry import get_suite
from travelgym.runner.store import EPISODES, MANIFEST
from travelgym.suites.behavior2trip.checks import CHECKS_VERSION
from travelgym.suites.behavior2trip.checks.data import POI_ID
from travelgym.suites.behavior2trip.instances import ensure_instances
from travelgym.suites.behavior2trip.rescore import MISSING_VERDICT

PASS = '{"pass": true, "reason": "fine"}'


@pytest.fixture(scope="module")
def data_dir(trips_database):
    directory = trips_database.path.parent.parent
    ensure_instances(trips_database, directory, splits=("test",))
    return directory


@pytest.fixture(scope="module")
def runs(data_dir, tmp_path_factory):
    """A run directory of the scripted and of the oracle agent, 3 instances each."""
    out = tmp_path_factory.mktemp("b2t-rescore")
    done = CliRunner().invoke(main, ["run", "behavior2trip", "--agent", "scripted", "--agent",
                                     "oracle", "--limit", "3", "--no-progress", "--data-dir",
                                     str(data_dir), "--out", str(out)])  # fmt: skip
    assert done.exit_code == 0, done.output
    return [out / "scripted", out / "oracle"]


def _lines(run_dir) -> list[dict]:
    return [json.loads(x) for x in (run_dir / EPISODES).read_text().splitlines() if x.strip()]


def test_a_run_records_the_checks_version_as_its_scorer_version(runs):
    suite = get_suite("behavior2trip")
    assert suite.scorer_version == CHECKS_VERSION and suite.scorer_version_key == "checks_version"
    for run_dir in runs:
        assert json.loads((run_dir / MANIFEST).read_text())["checks_version"] == CHECKS_VERSION


def test_every_episode_gives_back_its_answer_and_score(runs, data_dir):
    suite = get_suite("behavior2trip")
    finals = []
    for run_dir in runs:
        lines = _lines(run_dir)
        assert len(lines) == 3
        with suite.rescorer(run_dir, 0, data_dir, suite.options()) as rescore:
            assert rescore is not None
            for line in lines:
                assert line["final_answer"] is not None
                assert suite.answer_from_turns(line) == line["final_answer"]
                assert rescore(line, line["final_answer"]) == line["score"]
                finals.append(line["score"]["final"])
    assert True in finals  # the oracle's plans pass: the comparison covers passing scores too


def test_another_answer_scores_otherwise(runs, data_dir):
    suite = get_suite("behavior2trip")
    run_dir = runs[1]  # the oracle's plans pass every check
    with suite.rescorer(run_dir, 0, data_dir, suite.options()) as rescore:
        for line in _lines(run_dir):
            answer = line["final_answer"]
            undelivered = rescore(line, None)
            assert undelivered != line["score"] and undelivered["delivered"] is False
            ids = sorted(suite.answer_ids(answer))
            changed = answer.replace(ids[0], ids[0][0] + "99999")  # a POI no database has
            assert rescore(line, changed) != line["score"]
            assert rescore({**line, "instance_id": "b2t-test-nothing"}, answer) is None


def test_old_steps_without_the_delivered_answer_record_none(runs):
    suite = get_suite("behavior2trip")
    line = _lines(runs[0])[0]
    old = {**line, "steps": [{k: v for k, v in s.items() if k != "delivered"}
                             for s in line["steps"]]}  # fmt: skip
    assert suite.answer_from_turns(old) is NOT_RECORDED
    undelivered = {**line, "steps": [{**s, "answer": False} for s in line["steps"]]}
    assert suite.answer_from_turns(undelivered) is None


def test_answer_ids_of_a_real_plan_and_of_garbage(runs):
    suite = get_suite("behavior2trip")
    for run_dir in runs:
        for line in _lines(run_dir):
            answer = line["final_answer"]
            ids = suite.answer_ids(answer)
            pois = {i for i in ids if POI_ID.fullmatch(i)}
            assert pois and {i[0] for i in pois} >= {"H", "R"}  # a hotel and meals at least
            # every POI id the plan's text spells (as the tools write them) is found
            import re

            assert pois == set(re.findall(r"\b[HRAE][0-9]{5}\b", answer))
    for garbage in (None, 42, "<answer>not json</answer>", "", [], {"days": 3}, b"H00001"):
        assert suite.answer_ids(garbage) == set()


def test_a_judged_run_keeps_its_verdicts_and_refuses_a_lost_one(data_dir, tmp_path):
    with FakeOpenAIServer(responder=lambda body: Reply(PASS)) as server:
        done = CliRunner().invoke(main, ["run", "behavior2trip", "--agent", "scripted", "--out",
                                         str(tmp_path), "--no-progress", "--data-dir",
                                         str(data_dir), "--limit", "2", "--judge", "judge-model",
                                         "--base-url", server.base_url])  # fmt: skip
    assert done.exit_code == 0, done.output
    suite = get_suite("behavior2trip")
    run_dir = tmp_path / "scripted"
    with suite.rescorer(run_dir, 0, data_dir, suite.options()) as rescore:
        for line in _lines(run_dir):
            assert line["score"]["judge"]["passed"] is True
            assert rescore(line, line["final_answer"]) == line["score"]
            # an undelivered plan's verdict needs no model: re-derived, not the stored one
            assert rescore(line, None)["judge"] == {"passed": False, "reason": "no plan delivered",
                                                    "error": None}  # fmt: skip
            lost = {**line, "score": {**line["score"], "judge": None}}
            assert rescore(lost, line["final_answer"])["judge"] == MISSING_VERDICT


def test_a_run_of_other_checks_is_not_rescored(runs, data_dir, tmp_path):
    suite = get_suite("behavior2trip")
    old = tmp_path / "old"
    old.mkdir()
    manifest = json.loads((runs[0] / MANIFEST).read_text())
    (old / MANIFEST).write_text(json.dumps({**manifest, "checks_version": "1"}))
    (old / EPISODES).write_text((runs[0] / EPISODES).read_text())
    with suite.rescorer(old, 0, data_dir, suite.options()) as rescore:
        assert rescore is None
