"""The user answers the agent's clarifying questions from its script (Appendix E: the simulator
must "answer agent's clarifying questions"): hidden constraints asked about are revealed,
revealed ones restated, objective topics answered with the objective, anything else gets
"no preference"."""

from __future__ import annotations

import asyncio
import datetime as dt

from travelgym.suites.compass.constraints import (
    Budget,
    MinStarRating,
    Park,
    RoomFeature,
    StayDates,
    Travellers,
)
from travelgym.suites.compass.objectives import SingleMetric
from travelgym.suites.compass.tasks import Persona, Task
from travelgym.suites.compass.user.llm_backend import build_prompt
from travelgym.suites.compass.user.simulator import UserSimulator
from travelgym.suites.compass.user.template import TemplateUserBackend
from travelgym.suites.compass.user.topics import asked_topics

NEVER = Persona(revelation_speed="slow", reveal_probability=0.0, trust="trusting",
                reliability="reliable", style=9)  # fmt: skip


def make_task(persona: Persona = NEVER) -> Task:
    return Task(
        task_id="inline-questions",
        level=1,
        objective=SingleMetric(metric="review_score"),
        constraints=[
            Park(park_ids=["grte"]),
            StayDates(check_in=dt.date(2025, 8, 24), check_out=dt.date(2025, 8, 27)),
            Travellers(count=2),
            Budget(max_total=1500.0, revelation="progressive"),
            MinStarRating(value=3, revelation="progressive"),
            RoomFeature(feature="has_balcony", revelation="progressive"),
        ],
        persona=persona,
        story="Two friends want a quiet long weekend at Grand Teton.",
    )


def talk(sim: UserSimulator, text: str):
    return asyncio.run(sim.respond(text, None))


def test_topic_detector_reads_questions_only():
    assert [t.name for t in asked_topics("Do you have a budget? Any star rating in mind?")] == [
        "budget",
        "stars",
    ]
    assert asked_topics("The hotel has a pool and free parking. I recommend it.") == []
    assert asked_topics("My recommendation: hotel pkg_1_1_2_9.") == []
    # the scripted agents' own question names no topic: their conversations are unchanged
    assert asked_topics("Could you tell me more, or relax something?") == []


def test_question_about_a_hidden_constraint_reveals_it():
    task = make_task()
    sim = UserSimulator(task, TemplateUserBackend(), conn=None, seed=0, max_turns=30)
    asyncio.run(sim.open())
    assert 4 in sim.state.hidden
    reply = talk(sim, "I found a few hotels. What minimum star rating would you accept?")
    answers = [a for a in reply.acts if a.type == "answer"]
    assert [a.constraint_index for a in answers] == [4]
    assert answers[0].constraint == task.constraints[4].model_dump(mode="json")
    assert 4 in sim.state.revealed and 4 not in sim.state.hidden
    assert task.constraints[4].sentence() in reply.text
    assert not reply.done
    # the other hidden constraints stay hidden: only what was asked is answered
    assert sim.state.hidden == [3, 5]


def test_answering_the_last_hidden_constraint_counts_as_revelation():
    """p = 1: every turn's draw succeeds, so a question may reveal 2 (the turn's one and one
    ahead of the schedule); the third hidden one comes on the next turn."""
    task = make_task(NEVER.model_copy(update={"reveal_probability": 1.0}))
    sim = UserSimulator(task, TemplateUserBackend(), conn=None, seed=0, max_turns=30)
    asyncio.run(sim.open())
    reply = talk(sim, "What's your budget? Do you need any star rating? Any room features, "
                      "like a balcony?")  # fmt: skip
    assert [a.constraint_index for a in reply.acts if a.type == "answer"] == [3, 4]
    assert [a.detail for a in reply.acts if a.type == "undecided"] == ["room features"]
    assert sim.state.hidden == [5] and sim.revealed_all_turn is None
    reply = talk(sim, "And the balcony?")
    assert [a.constraint_index for a in reply.acts if a.type == "answer"] == [5]
    assert sim.state.hidden == [] and sim.revealed_all_turn == 2


def test_question_about_an_irrelevant_topic_gets_no_preference():
    task = make_task()
    sim = UserSimulator(task, TemplateUserBackend(), conn=None, seed=0, max_turns=30)
    asyncio.run(sim.open())
    hidden = list(sim.state.hidden)
    reply = talk(sim, "Great. Do you need a pool? And should the hotel have a gym?")
    nopref = [a for a in reply.acts if a.type == "no_preference"]
    assert [a.detail for a in nopref] == ["a pool", "a gym"]
    assert "a pool" in reply.text and "a gym" in reply.text
    assert sim.state.hidden == hidden  # nothing revealed by it
    assert not any(a.type in ("answer", "reveal", "restate") for a in reply.acts)


def test_question_about_the_objective_restates_it():
    task = make_task()
    sim = UserSimulator(task, TemplateUserBackend(), conn=None, seed=0, max_turns=30)
    asyncio.run(sim.open())
    reply = talk(sim, "Do guest reviews matter to you?")
    assert [a.type for a in reply.acts] == ["restate_objective"]
    assert task.objective.sentence() in reply.text


def test_question_about_a_revealed_constraint_restates_it():
    task = make_task()
    sim = UserSimulator(task, TemplateUserBackend(), conn=None, seed=0, max_turns=30)
    asyncio.run(sim.open())
    talk(sim, "What is your budget for this trip?")
    assert 3 in sim.state.revealed
    reply = talk(sim, "Sorry, could you remind me of the budget?")
    restated = [a for a in reply.acts if a.type == "restate"]
    assert [a.constraint_index for a in restated] == [3]
    assert not any(a.type == "answer" for a in reply.acts)
    assert task.constraints[3].sentence() in reply.text
    # dates and party size are initial: asking about them restates, never reveals
    reply = talk(sim, "Which dates do you want, and how many travellers are coming?")
    assert {a.constraint_index for a in reply.acts if a.type == "restate"} == {1, 2}


def test_llm_prompt_carries_every_answer_act():
    task = make_task()
    sim = UserSimulator(task, TemplateUserBackend(), conn=None, seed=0, max_turns=30)
    asyncio.run(sim.open())
    reply = talk(sim, "What minimum star rating do you want? Do you need a pool?")
    prompt = build_prompt(sim.state, reply.acts, reply.instruction)
    assert task.constraints[4].sentence() in prompt
    assert "no preference about a pool" in prompt
    # the budget is still hidden: the model is not told about it
    assert task.constraints[3].sentence() not in prompt
