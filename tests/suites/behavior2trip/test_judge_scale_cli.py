"""``--judge MODEL`` and ``--scale`` on ``travelgym run`` / ``score`` for Behavior2Trip: the
judge's verdict is stored with each episode's score and fills the LLM column, malformed replies
are retried and then counted as judge errors (never a crash), and a run keeps its scale."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, Reply
from travelgym.cli import main
from travelgym.runner.store import EPISODES, MANIFEST
from travelgym.suites.behavior2trip.instances import ensure_instances

PASS = '{"pass": true, "reason": "fine"}'
FAIL = 'Verdict: {"pass": false, "reason": "over budget"}'


@pytest.fixture(scope="module")
def data_dir(trips_database):
    directory = trips_database.path.parent.parent
    ensure_instances(trips_database, directory, splits=("test",))
    return str(directory)


def _run(data_dir, out, *extra):
    return CliRunner().invoke(main, ["run", "behavior2trip", "--agent", "scripted", "--out",
                                     str(out), "--no-progress", "--data-dir", data_dir,
                                     "--concurrency", "1", *extra])  # fmt: skip


def _score(*args):
    return CliRunner().invoke(main, ["score", *map(str, args), "--json"])


def test_run_with_a_judge_stores_verdicts_and_counts_malformed_replies(data_dir, tmp_path):
    # episode 1: passes; 2: a malformed reply, then a readable fail; 3: malformed twice
    script = [Reply(PASS), Reply("I think it is good"), Reply(FAIL), Reply("yes"), Reply("{}")]
    with FakeOpenAIServer(script) as server:
        done = _run(data_dir, tmp_path, "--limit", "3", "--judge", "judge-model", "--base-url",
                    server.base_url, "--json")  # fmt: skip
        requests = list(server.requests)
    assert done.exit_code == 0, done.output
    overall = json.loads(done.output[done.output.index("{") :])["scripted"]["overall"]
    assert overall["LLM"] == 50.0 and overall["LLM_errors"] == 1
    assert len(requests) == 5 and {r["model"] for r in requests} == {"judge-model"}
    assert all("Rubric" in r["messages"][0]["content"] for r in requests)
    run_dir = tmp_path / "scripted"
    assert json.loads((run_dir / MANIFEST).read_text())["judge"] == "judge-model"
    verdicts = [json.loads(line)["score"]["judge"]
                for line in (run_dir / EPISODES).read_text().splitlines()]  # fmt: skip
    assert [v["passed"] for v in verdicts] == [True, False, None]
    assert verdicts[1]["reason"] == "over budget"
    assert "malformed judge reply" in verdicts[2]["error"]

    # score keeps the run's verdicts without a model; --judge grades again
    kept = _score(run_dir, "--data-dir", data_dir)
    assert kept.exit_code == 0, kept.output
    assert json.loads(kept.output)["overall"]["LLM"] == 50.0
    with FakeOpenAIServer(responder=lambda body: Reply(PASS)) as server:
        again = _score(run_dir, "--data-dir", data_dir, "--judge", "j2", "--base-url",
                       server.base_url)  # fmt: skip
        assert len(server.requests) == 3
    result = json.loads(again.output)
    assert result["overall"]["LLM"] == 100.0 and result["overall"]["LLM_errors"] == 0
    assert result["judge"] == "j2" and result["db_scale"] == "small"


@pytest.mark.slow
def test_an_unreachable_judge_is_a_judge_error_not_a_crash(data_dir, tmp_path):
    done = _run(data_dir, tmp_path, "--limit", "1", "--judge", "m", "--base-url",
                "http://127.0.0.1:9/v1", "--max-calls", "3", "--json")  # fmt: skip
    assert done.exit_code == 0, done.output
    overall = json.loads(done.output[done.output.index("{") :])["scripted"]["overall"]
    assert overall["LLM"] is None and overall["LLM_errors"] == 1
    assert overall["final"] is not None  # the rule-based score is there all the same


def test_judge_is_refused_for_a_suite_without_one(compass_db, tmp_path):
    runner = CliRunner()
    got = runner.invoke(main, ["run", "compass", "--judge", "m", "--out", str(tmp_path),
                               "--data-dir", str(compass_db.parent.parent)])  # fmt: skip
    assert got.exit_code == 2 and "--judge applies to behavior2trip only" in got.output
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"task_id": "x", "recommendation": {}}\n')
    got = _score(answers, "--suite", "compass", "--judge", "m")
    assert got.exit_code == 2 and "--judge applies to behavior2trip only" in got.output
    got = _score(answers, "--suite", "behavior2trip", "--base-url", "http://127.0.0.1:9")
    assert got.exit_code == 2 and "--base-url needs --judge" in got.output


def test_a_run_keeps_its_scale(data_dir, tmp_path):
    assert _run(data_dir, tmp_path, "--limit", "1").exit_code == 0
    run_dir = tmp_path / "scripted"
    manifest = json.loads((run_dir / MANIFEST).read_text())
    assert manifest["db_scale"] == "small"
    # scoring a small run at the full scale is refused before anything is built
    wrong = _score(run_dir, "--scale", "full", "--data-dir", data_dir)
    assert wrong.exit_code == 1 and "is a run at scale small, not full" in wrong.output
    # a run directory made at another scale is refused on resume (the manifest's identity)
    (run_dir / MANIFEST).write_text(json.dumps({**manifest, "db_scale": "full"}))
    resumed = _run(data_dir, tmp_path, "--limit", "1", "--resume")
    assert resumed.exit_code == 1 and "differs in: db_scale" in resumed.output
    # a manifest from before the key existed was a small run: it resumes
    (run_dir / MANIFEST).write_text(json.dumps({k: v for k, v in manifest.items()
                                                if k not in ("db_scale", "judge")}))  # fmt: skip
    assert _run(data_dir, tmp_path, "--limit", "1", "--resume").exit_code == 0


def test_a_run_is_scored_on_its_own_instance_set_and_database_seed(data_dir, tmp_path):
    """``score`` of an ``--instances unfiltered`` run scored it against the filtered instances
    (other requests for the same ids: DR 80 in the run, 60 when scored), and a ``--db-seed 1``
    run was refused as made "on another database": the set and the seed are the run's."""
    run = _run(data_dir, tmp_path, "--limit", "6", "--instances", "unfiltered", "--json")
    assert run.exit_code == 0, run.output
    summary = json.loads(run.output)["scripted"]
    run_dir = tmp_path / "scripted"
    scored = _score(run_dir, "--data-dir", data_dir, "--no-progress")
    assert scored.exit_code == 0, scored.output
    rescored = json.loads(scored.output)
    assert rescored["overall"] == {k: v for k, v in summary["overall"].items()
                                   if k in rescored["overall"]}  # fmt: skip
    wrong = _score(run_dir, "--instances", "filtered", "--data-dir", data_dir)
    assert wrong.exit_code == 1 and "is a run at instances unfiltered, not filtered" in (
        wrong.output)  # fmt: skip
    manifest = json.loads((run_dir / MANIFEST).read_text())
    (run_dir / MANIFEST).write_text(json.dumps({**manifest, "db_seed": 1}))
    # without --db-seed a run is scored on its own seed (what its printed score line runs);
    # a contradicting one is refused naming the run's
    other = _score(run_dir, "--db-seed", "0", "--data-dir", data_dir, "--no-progress")
    assert other.exit_code == 1 and "score it with --db-seed 1" in other.output
