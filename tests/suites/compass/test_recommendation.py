"""Level I hotel options (Appendix G.3): up to three, the best counts, for every reader."""

from __future__ import annotations

import pytest

from travelgym.db import connect_readonly
from travelgym.suites.compass.agents.llm_agent import system_prompt
from travelgym.suites.compass.agents.response_format import parse_reply
from travelgym.suites.compass.environment import tools_only_prompt
from travelgym.suites.compass.scoring import (
    MAX_HOTEL_OPTIONS,
    plan_options,
    revealed_option_violations,
    score_answers,
    score_plan,
    score_recommendation,
)
from travelgym.suites.compass.solver import Ranking, build_components, solve
from travelgym.suites.compass.tasks import load_tasks


@pytest.fixture(scope="module")
def conn(compass_db):
    return connect_readonly(compass_db)


@pytest.fixture(scope="module")
def level_one(conn):
    """A Level I task with its truth, ranking, optimal plan and its worst feasible plan."""
    task = next(t for t in load_tasks() if t.level == 1)
    truth = solve(conn, task)
    ranking = Ranking(task, build_components(conn, task))
    worst = ranking.find_plan(ranking.kth_best(ranking.size))
    return task, truth, ranking, truth.optimal_plan, worst


def test_the_best_of_three_hotel_options_counts(conn, level_one):
    task, truth, ranking, best, worst = level_one
    assert not score_plan(conn, task, truth, worst, ranking).top["20"]
    rec = {"hotel": [worst["hotel"], "pkg_not_a_real_one", best["hotel"]]}
    score = score_recommendation(conn, task, truth, rec, ranking)
    assert score.feasible and score.optimal and score.top["5"] and score.rank == 1
    assert score.recommendation["hotel"] == best["hotel"]


def test_options_past_the_third_are_not_read(conn, level_one):
    task, truth, _, best, worst = level_one
    rec = {"hotel": [worst["hotel"]] * MAX_HOTEL_OPTIONS + [best["hotel"]]}
    assert len(plan_options(task, rec)) == MAX_HOTEL_OPTIONS
    assert not score_recommendation(conn, task, truth, rec).optimal


def test_a_list_of_hotels_is_not_an_itinerary_at_levels_two_and_three(conn):
    task = next(t for t in load_tasks() if t.level == 2)
    truth = solve(conn, task)
    plan = truth.optimal_plan
    score = score_recommendation(conn, task, truth, {**plan, "hotel": [plan["hotel"]]})
    assert not score.feasible and score.violations


def test_every_scorer_agrees_on_options(conn, level_one):
    task, truth, _, best, worst = level_one
    rec = {"hotel": [worst["hotel"], best["hotel"]]}
    own = score_recommendation(conn, task, truth, rec)
    file_scored = score_answers(
        conn, {task.task_id: task}, {task.task_id: truth},
        [{"task_id": task.task_id, "recommendation": rec}], with_rank=False,
    )  # fmt: skip
    assert file_scored["tasks"][0]["top"] == own.top and own.optimal


def test_the_user_objects_only_when_no_option_meets_what_it_knows(conn, level_one):
    task, _, _, best, worst = level_one
    everything = list(range(len(task.constraints)))
    assert revealed_option_violations(conn, task, {"hotel": [best["hotel"]]}, everything) == []
    bad = {"hotel": ["pkg_not_a_real_one", best["hotel"]]}
    assert revealed_option_violations(conn, task, bad, everything) == []
    objections = revealed_option_violations(conn, task, {"hotel": ["pkg_x", "pkg_y"]}, everything)
    assert objections and objections[0][0] is None


def test_the_prompts_invite_up_to_three_hotel_options():
    for prompt in (system_prompt("paper"), tools_only_prompt()):
        assert "up to 3 hotel options" in prompt
    _, rec, error = parse_reply(
        '{"message": "two options", "recommendation": '
        '{"hotel": ["pkg_a", "pkg_b"], "flight": null, "permit": null}}'
    )
    assert error is None and rec["hotel"] == ["pkg_a", "pkg_b"]


def test_an_episode_scores_its_best_hotel_option(compass_db, level_one):
    import json

    from travelgym.suites.compass.environment import CompassTrainingEnv

    task, truth, _, best, worst = level_one
    env = CompassTrainingEnv(compass_db, [task], {task.task_id: truth}, max_turns=40)
    env.reset(options={"task_id": task.task_id})
    reply = json.dumps({"message": "Two options for you.",
                        "recommendation": {"hotel": [worst["hotel"], best["hotel"]]}})  # fmt: skip
    info: dict = {}
    for _ in range(40):
        _, _, terminated, truncated, info = env.step(reply)
        if terminated or truncated:
            break
    env.close()
    assert info["termination"] == "accepted"  # the user took the option meeting everything
    assert info["score"]["optimal"] and info["score"]["top"]["5"]
    assert info["score"]["recommendation"]["hotel"] == best["hotel"]
