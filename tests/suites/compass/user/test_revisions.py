"""Constraints revised mid-task (COMPASS Section 3.1): the user states the initial version, later
changes it; it checks recommendations against what it has said; scoring uses the final one."""

from __future__ import annotations

import asyncio
import datetime as dt
import json

import pytest
from pydantic import ValidationError

from travelgym.db import connect_readonly
from travelgym.suites.compass.agents.scripted import ScriptedAgent
from travelgym.suites.compass.constraints import (
    Budget,
    DateWindow,
    HotelAmenity,
    MaxDistance,
    MinStarRating,
    Park,
    StayDates,
    Travellers,
)
from travelgym.suites.compass.episode import run_episode
from travelgym.suites.compass.objectives import SingleMetric
from travelgym.suites.compass.revisions import revision_change, stated_constraints, stated_task
from travelgym.suites.compass.scoring import check_plan, score_plan
from travelgym.suites.compass.solver import solve
from travelgym.suites.compass.tasks import Persona, Revision, Task
from travelgym.suites.compass.trajectory import Episode
from travelgym.suites.compass.user.phrases import CHANGES
from travelgym.suites.compass.user.simulator import UserSimulator
from travelgym.suites.compass.user.template import TemplateUserBackend

STARS = 3  # index of the revised constraint in the inline task


def persona(p: float) -> Persona:
    return Persona(revelation_speed="slow", reveal_probability=p, trust="trusting",
                   reliability="reliable", style=4)  # fmt: skip


def make_task(initial_stars: float, final_stars: float, p: float = 0.0,
              revelation: str = "initial") -> Task:  # fmt: skip
    return Task(
        task_id="inline-revision",
        level=1,
        objective=SingleMetric(metric="total_cost"),
        constraints=[
            Park(park_ids=["grte"]),
            StayDates(check_in=dt.date(2025, 8, 24), check_out=dt.date(2025, 8, 27)),
            Travellers(count=2),
            MinStarRating(value=final_stars, revelation=revelation),
        ],
        revisions=[
            Revision(
                constraint_index=STARS,
                initial=MinStarRating(value=initial_stars, revelation=revelation),
            ),
        ],  # fmt: skip
        persona=persona(p),
        story="A couple plans a few days at Grand Teton.",
    )


@pytest.fixture(scope="module")
def conn(compass_db):
    return connect_readonly(compass_db)


@pytest.fixture(scope="module")
def cheap_plan(conn):
    """The cheapest plan with at least one star, and its star rating."""
    loose = stated_task(make_task(1, 5))  # the task as first stated: at least 1 star
    plan = solve(conn, loose).optimal_plan
    facts, problems = check_plan(conn, loose, plan)
    assert not problems
    return plan, facts.hotel["star_rating"]


def test_user_states_the_initial_version_then_revises_and_flags_by_what_it_said(conn, cheap_plan):
    plan, stars = cheap_plan
    assert stars < 5
    task = make_task(initial_stars=1, final_stars=stars + 0.5)
    initial, final = task.revisions[0].initial, task.constraints[STARS]
    sim = UserSimulator(task, TemplateUserBackend(), conn, seed=0, max_turns=6)
    opening = asyncio.run(sim.open())
    assert initial.sentence() in opening.text and final.sentence() not in opening.text
    stated = next(a for a in opening.acts if a.constraint_index == STARS)
    assert stated.constraint == initial.model_dump(mode="json")
    revised_at = None
    for turn in range(1, 6):
        reply = asyncio.run(sim.respond("Here is my pick.", plan))
        kinds = [a.type for a in reply.acts]
        flags = [a for a in reply.acts if a.type == "flag_violation"]
        assert not reply.done  # never accepted: first the revision is pending, then it is violated
        if revised_at is None and "revise" in kinds:
            revised_at = turn
            revise = next(a for a in reply.acts if a.type == "revise")
            assert revise.constraint_index == STARS
            assert revise.constraint == final.model_dump(mode="json")
            assert revise.detail == initial.sentence()
            assert final.sentence() in reply.text
        if revised_at is None:
            assert not flags  # the plan meets what the user has said so far
            assert kinds == ["acknowledge"]
        else:
            assert [f.constraint_index for f in flags] == [STARS]  # the final version now
            assert flags[0].constraint == final.model_dump(mode="json")
    assert revised_at == 4  # forced in time: p = 0, two turns before the limit
    assert sim.revealed_all_turn == 4
    truth = solve(conn, task)
    score = score_plan(conn, task, truth, plan)
    assert not score.feasible and any(v.startswith("min_star_rating: ") for v in score.violations)
    assert not check_plan(conn, stated_task(task), plan)[1]  # feasible as first stated


def test_no_acceptance_before_the_revision_even_of_a_good_plan(conn):
    task = make_task(initial_stars=1, final_stars=2)
    plan = solve(conn, task).optimal_plan
    sim = UserSimulator(task, TemplateUserBackend(), conn, seed=0, max_turns=8)
    asyncio.run(sim.open())
    seen = []
    for _ in range(7):
        reply = asyncio.run(sim.respond("Here is my pick.", plan))
        seen.append([a.type for a in reply.acts])
        if reply.done:
            break
    revised = next(i for i, kinds in enumerate(seen) if "revise" in kinds)
    accepted = next(i for i, kinds in enumerate(seen) if "accept" in kinds)
    assert revised < accepted


def test_a_progressive_constraint_is_revealed_as_first_stated_then_revised():
    task = make_task(initial_stars=2, final_stars=3, p=1.0, revelation="progressive")
    sim = UserSimulator(task, TemplateUserBackend(), conn=None, seed=0, max_turns=30)
    opening = asyncio.run(sim.open())
    assert "stars" not in opening.text
    first = asyncio.run(sim.respond("Anything else?", None))
    reveal = next(a for a in first.acts if a.type == "reveal")
    assert reveal.constraint == task.revisions[0].initial.model_dump(mode="json")
    assert task.revisions[0].initial.sentence() in first.text
    assert sim.revealed_all_turn is None  # the revision is still to come
    second = asyncio.run(sim.respond("Noted.", None))
    assert [a.type for a in second.acts] == ["revise"]
    assert task.constraints[STARS].sentence() in second.text
    assert sim.revealed_all_turn == 2


def test_the_llm_user_is_told_to_revise_with_the_old_and_new_version():
    """The LLM backend gets the same revision act through its dynamic prompt: the sentence it
    replaces and the new must-have."""
    from travelgym.suites.compass.user.llm_backend import build_prompt

    task = make_task(initial_stars=2, final_stars=3, p=1.0, revelation="progressive")
    sim = UserSimulator(task, TemplateUserBackend(), conn=None, seed=0, max_turns=30)
    asyncio.run(sim.open())
    asyncio.run(sim.respond("Anything else?", None))
    second = asyncio.run(sim.respond("Noted.", None))
    assert [a.type for a in second.acts] == ["revise"]
    prompt = build_prompt(sim.state, second.acts, second.instruction)
    old, new = task.revisions[0].initial.sentence(), task.constraints[STARS].sentence()
    assert f"instead of '{old}'" in prompt and new in prompt and "replaces the old one" in prompt


def test_a_question_about_a_revised_constraint_gets_the_initial_version_first():
    task = make_task(initial_stars=2, final_stars=3, p=1.0, revelation="progressive")
    sim = UserSimulator(task, TemplateUserBackend(), conn=None, seed=0, max_turns=30)
    asyncio.run(sim.open())
    first = asyncio.run(sim.respond("What star rating do you need?", None))
    assert [a.type for a in first.acts] == ["answer"]  # p = 1, yet no revision in the same turn
    assert first.acts[0].constraint == task.revisions[0].initial.model_dump(mode="json")
    second = asyncio.run(sim.respond("And the star rating again?", None))
    assert [a.type for a in second.acts] == ["restate", "revise"]
    assert second.acts[0].constraint == task.revisions[0].initial.model_dump(mode="json")
    assert second.acts[1].constraint == task.constraints[STARS].model_dump(mode="json")


def test_scripted_agent_follows_the_revision_and_the_episode_round_trips(conn):
    task = make_task(initial_stars=1, final_stars=4, p=0.5)
    truth = solve(conn, task)
    episode = asyncio.run(run_episode(task, ScriptedAgent("greedy"), TemplateUserBackend(), conn,
                                      truth, seed=1, max_turns=10))  # fmt: skip
    acts = [a for t in episode.turns for a in t.acts]
    assert [a.type for a in acts].count("revise") == 1
    assert episode.termination == "accepted" and episode.score["feasible"]
    again = Episode.model_validate_json(episode.model_dump_json())
    assert again == episode
    assert any(a.type == "revise" and a.detail for t in again.turns for a in t.acts)


def test_task_with_revisions_round_trips_and_is_validated():
    task = make_task(initial_stars=2, final_stars=4)
    text = task.model_dump_json()
    assert json.loads(text)["revisions"][0]["constraint_index"] == STARS
    assert Task.model_validate_json(text) == task
    assert stated_constraints(task)[STARS].value == 2
    assert stated_constraints(task, [STARS])[STARS].value == 4
    plain = task.model_copy(update={"revisions": []})
    assert "revisions" not in json.loads(plain.model_dump_json())  # shipped tasks are unchanged
    data = json.loads(text)
    for bad in (
        {"constraint_index": 9, "initial": data["revisions"][0]["initial"]},  # out of range
        {"constraint_index": 2, "initial": data["revisions"][0]["initial"]},  # another kind
        {"constraint_index": STARS, "initial": data["constraints"][STARS]},  # no change
    ):
        with pytest.raises(ValidationError):
            Task.model_validate({**data, "revisions": [bad]})
    with pytest.raises(ValidationError):
        Task.model_validate({**data, "revisions": data["revisions"] * 2})  # revised twice
    with pytest.raises(ValidationError):
        Revision(constraint_index=0, initial=HotelAmenity(amenity="has_pool"), extra=1)


def budget_task(initial: float, final: float) -> Task:
    return Task(
        task_id="inline-budget",
        level=1,
        objective=SingleMetric(metric="review_score"),
        constraints=[
            Park(park_ids=["grte"]),
            StayDates(check_in=dt.date(2025, 8, 24), check_out=dt.date(2025, 8, 27)),
            Travellers(count=2),
            Budget(max_total=final),
        ],
        revisions=[Revision(constraint_index=3, initial=Budget(max_total=initial))],
        persona=persona(1.0),
        story="A couple plans a few days at Grand Teton.",
    )


def stay_task(initial_out: int, final_out: int) -> Task:
    dates = StayDates(check_in=dt.date(2025, 8, 24), check_out=dt.date(2025, 8, final_out))
    first = StayDates(check_in=dt.date(2025, 8, 24), check_out=dt.date(2025, 8, initial_out))
    return budget_task(1000, 1500).model_copy(
        update={
            "constraints": [Park(park_ids=["grte"]), dates, Travellers(count=2)],
            "revisions": [Revision(constraint_index=1, initial=first)],
        }  # fmt: skip
    )


def revision_words(task: Task, seed: int) -> str:
    sim = UserSimulator(task, TemplateUserBackend(), conn=None, seed=seed, max_turns=30)
    asyncio.run(sim.open())
    reply = asyncio.run(sim.respond("Noted.", None))
    assert [a.type for a in reply.acts] == ["revise"]
    return reply.text


@pytest.mark.parametrize(
    ("task", "said", "not_said"),
    [
        (budget_task(1200, 1500), "budget_up", "budget_down"),
        (budget_task(1500, 1200), "budget_down", "budget_up"),
        (stay_task(26, 27), "longer", "shorter"),
        (stay_task(27, 26), "shorter", "longer"),
    ],
    ids=["budget relaxed", "budget tightened", "stay longer", "stay shorter"],
)
def test_the_user_says_which_way_a_revision_goes(task, said, not_said):
    """A revision may relax or tighten: the user's words follow the direction (initial vs
    final), and always carry the final version's own sentence."""
    index = task.revisions[0].constraint_index
    change, fields = revision_change(task.revisions[0].initial, task.constraints[index])
    assert change == said
    for seed in range(8):
        text = revision_words(task, seed)
        assert task.constraints[index].sentence() in text
        assert any(p.format(**fields) in text for p in CHANGES[said]), text
        assert not any(p.split("{")[0] in text for p in CHANGES[not_said]), text


def test_revision_change_reads_every_direction():
    assert revision_change(Budget(max_total=900), Budget(max_total=1000)) == (
        "budget_up", {"amount": "$1,000.00"})  # fmt: skip
    window = DateWindow(earliest_check_in=dt.date(2025, 8, 1), latest_check_out=dt.date(2025, 8, 20),
                        min_nights=2, max_nights=3)  # fmt: skip
    assert revision_change(window, window.model_copy(update={"max_nights": 4})) == (
        "longer", {"nights": "4 nights"})  # fmt: skip
    assert revision_change(MinStarRating(value=3), MinStarRating(value=4))[0] == "tighter"
    assert revision_change(MinStarRating(value=4), MinStarRating(value=3))[0] == "looser"
    assert revision_change(MaxDistance(value=5), MaxDistance(value=10))[0] == "looser"
