"""``score`` re-derives each episode's final answer from its own turns and its score from that
answer with the scorer version the run's manifest records (issue 34).

Every edit here is resealed into the digest chain (as someone who also recomputes the chain
would), so that only the re-derivation can find it: a stored answer that is not the agent's
last recommendation, a stored score that is not its answer's. A run of a scorer version this
install does not ship keeps its stored scores and says the chain alone vouches for them; an id
no tool result showed is a warning, never tampering.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.runner.chain_helpers import reseal
from tests.runner.conftest import copy_run
from travelgym.cli import main
from travelgym.core.registry import get_suite
from travelgym.runner.integrity import verify_run
from travelgym.runner.recheck import recheck_run, unseen_ids
from travelgym.runner.store import EPISODES, MANIFEST
from travelgym.suites.compass.ground_truth import ensure_ground_truth


def _invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def run(greedy_run, tmp_path) -> Path:
    return copy_run(greedy_run, tmp_path)


def _lines(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / EPISODES).read_text().splitlines()]


def _write(run: Path, lines: list[dict]) -> None:
    (run / EPISODES).write_text("".join(json.dumps(x) + "\n" for x in lines))
    reseal(run)
    assert verify_run(run).tampered is None  # the chain alone sees nothing


def _score(run: Path, data_dir: Path) -> tuple[dict, str]:
    done = _invoke("score", run, "--data-dir", data_dir, "--json")
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout), done.stderr


def _rescored(run: Path, data_dir: Path, line: dict, answer: dict | None) -> dict:
    """The score the run would have stored for ``answer`` on ``line``'s task."""
    suite = get_suite("compass")
    with suite.rescorer(run, 0, data_dir, suite.options()) as rescore:
        return rescore(line, answer)


def test_a_clean_run_rederives_every_answer_and_score(run, data_dir):
    result, _ = _score(run, data_dir)
    check = result["recheck"]
    assert result["tampered"] is None
    assert check["answers_rederived"] == check["scores_rederived"] == 3
    assert check["disagreements"] == [] and check["scorer_version"] == "2"


def test_the_optimal_plan_stored_with_its_score_is_found(run, data_dir):
    """The issue's attack: final_recommendation and score set to the ground truth's optimum
    (consistent with each other), the chain recomputed: OR-5 would read 100."""
    lines = _lines(run)
    _, truths = ensure_ground_truth(seed=0, data_dir=data_dir)
    before, _ = _score(run, data_dir)
    changed = 0  # lines whose forged score is not their own answer's
    for line in lines:
        best = {k: v for k, v in truths[line["task_id"]].optimal_plan.items() if v is not None}
        line["final_recommendation"] = best
        own = line["score"]
        line["score"] = _rescored(run, data_dir, line, best)
        assert line["score"]["optimal"] is True
        changed += line["score"] != own
    assert changed >= 2  # the agent's own answers are mostly not the optimum
    _write(run, lines)
    result, stderr = _score(run, data_dir)
    assert "line 1 (compass-001#0): its stored final answer is not the last answer" in (
        result["tampered"])  # fmt: skip
    problems = result["recheck"]["disagreements"]
    assert sum("stored final answer" in p for p in problems) == 3  # and the scores are not
    assert sum("stored score disagrees" in p for p in problems) == changed  # the turns' answers'
    # scored from the agent's own turns: the figures are the run's, not the edit's
    assert result["overall"] == before["overall"]
    assert "TAMPERED" in stderr


def test_an_edited_score_alone_is_found(run, data_dir):
    lines = _lines(run)
    lines[1]["score"] = {**lines[1]["score"], "optimal": True,
                         "top": {"5": True, "10": True, "20": True}}  # fmt: skip
    _write(run, lines)
    result, _ = _score(run, data_dir)
    (problem,) = result["recheck"]["disagreements"]
    assert problem.startswith(f"{EPISODES} line 2 ") and "its stored score disagrees" in problem
    assert "its optimal is True, its answer's is False" in problem or "its top" in problem


def test_a_rewritten_last_turn_is_found_by_its_score(run, data_dir):
    """Variant: the agent's last recommendation and the stored one changed together (the
    answer agrees with the turns) but the score left as it was: it is not the answer's."""
    lines = _lines(run)
    _, truths = ensure_ground_truth(seed=0, data_dir=data_dir)
    line = lines[0]
    best = {k: v for k, v in truths[line["task_id"]].optimal_plan.items() if v is not None}
    assert best != line["final_recommendation"]
    last = next(t for t in reversed(line["turns"]) if t["role"] == "agent" and t["recommendation"])
    last["recommendation"] = line["final_recommendation"] = best
    _write(run, lines)
    result, _ = _score(run, data_dir)
    (problem,) = result["recheck"]["disagreements"]
    assert "line 1 (compass-001#0): its stored score disagrees with its answer's" in problem


def test_a_scorer_version_that_no_longer_ships_keeps_the_stored_scores(run, data_dir):
    manifest = json.loads((run / MANIFEST).read_text())
    manifest["scorer_version"] = "0"
    (run / MANIFEST).write_text(json.dumps(manifest))
    lines = _lines(run)
    lines[0]["score"] = {**lines[0]["score"], "optimal": True}  # what only the chain vouches for
    _write(run, lines)
    result, stderr = _score(run, data_dir)
    check = result["recheck"]
    assert check["version_gone"] is True and check["scores_rederived"] == 0
    assert check["disagreements"] == [] and result["tampered"] is None
    assert "scorer version 0" in stderr and "digest chain only" in stderr
    assert result["overall"]["optimal"] > 0  # the stored scores, as the run made them


def test_unseen_ids_reads_tool_results_as_whole_tokens():
    episode = {"turns": [{"tool_calls": [{"result": {"offers": ["pkg_1_2_3_4"]}},
                                         {"result": None, "tool_calls": [
                                             {"result": "flight_7_8_9 ok"}]}]}]}  # fmt: skip
    ids = {"pkg_1_2_3_4", "pkg_1_2_3", "flight_7_8_9", "permit_5_5_1"}
    assert unseen_ids(ids, episode) == ["permit_5_5_1", "pkg_1_2_3"]
    assert unseen_ids(ids, {"turns": [{"tool_calls": [{"result": None}]}]}) is None


def test_an_id_no_tool_result_showed_is_a_warning_not_tampering(run, data_dir):
    """The agent's turns recommend a package id that none of its (kept) tool results held:
    a warning; the answer and the score still agree."""
    lines = _lines(run)
    line = next(x for x in lines if x["final_recommendation"])
    rec = line["final_recommendation"]
    calls = [c for t in line["turns"] for c in t["tool_calls"]]
    assert calls, "the greedy agent searches"
    calls[0]["result"] = {"note": "results kept, none naming the recommended hotel"}
    _write(run, lines)
    suite = get_suite("compass")
    check = recheck_run(suite, run, 0, data_dir, suite.options())
    assert check.problems == []
    (warning,) = check.warnings
    assert rec["hotel"] in warning and "appeared in no tool result" in warning
    result, stderr = _score(run, data_dir)
    assert result["tampered"] is None and rec["hotel"] in stderr
