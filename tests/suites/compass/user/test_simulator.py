"""The user simulator: persona frequencies, revelation, verdicts, acceptance, and the 9 styles."""

from __future__ import annotations

import asyncio
import collections
import math

import pytest

from travelgym.db import connect_readonly
from travelgym.suites.compass.solver import solve
from travelgym.suites.compass.tasks import load_tasks
from travelgym.suites.compass.user.simulator import UserSimulator
from travelgym.suites.compass.user.template import STYLES, TemplateUserBackend


def within(count: int, n: int, p: float, sds: float = 3.5) -> bool:
    return abs(count - n * p) <= sds * math.sqrt(n * p * (1 - p))


def test_persona_frequencies_match_appendix_e():
    personas = [t.persona for t in load_tasks()]
    n = len(personas)
    speeds = collections.Counter(p.revelation_speed for p in personas)
    assert all(within(speeds[s], n, 1 / 3) for s in ("slow", "medium", "fast")), speeds
    assert within(sum(p.trust == "trusting" for p in personas), n, 0.8)
    assert within(sum(p.reliability == "reliable" for p in personas), n, 0.5)
    styles = collections.Counter(p.style for p in personas)
    assert set(styles) == set(range(1, 10))
    assert all(within(styles[s], n, 1 / 9) for s in range(1, 10)), styles
    ranges = {"slow": (0.4, 0.6), "medium": (0.6, 0.8), "fast": (0.8, 1.0)}
    for p in personas:
        lo, hi = ranges[p.revelation_speed]
        assert lo <= p.reveal_probability <= hi
    combos = {(p.revelation_speed, p.trust, p.reliability, p.style) for p in personas}
    assert len(combos) > 60  # many of the 108 personas occur


@pytest.fixture(scope="module")
def conn(compass_db):
    return connect_readonly(compass_db)


def _first_reply(task, style):
    persona = task.persona.model_copy(update={"style": style})
    styled = task.model_copy(update={"persona": persona})
    sim = UserSimulator(styled, TemplateUserBackend(), conn=None, seed=0)
    return asyncio.run(sim.open()).text


def test_every_style_has_distinct_wording_and_keeps_the_facts():
    task = next(t for t in load_tasks() if t.level == 2)
    texts = {style: _first_reply(task, style) for style in STYLES}
    assert len(set(texts.values())) == 9
    for text in texts.values():
        for constraint in task.initial_constraints():
            assert constraint.sentence() in text
        assert task.objective.sentence() in text
    assert "1)" in texts[9] and "!!" in texts[7] and "sorry" in texts[2].lower()


def test_revelation_violations_and_acceptance(conn):
    task = next(t for t in load_tasks() if len(t.progressive_constraints()) >= 2
                and t.persona.reliability == "reliable" and t.persona.trust == "trusting")  # fmt: skip
    truth = solve(conn, task)
    sim = UserSimulator(task, TemplateUserBackend(), conn, seed=3, max_turns=30)
    opening = asyncio.run(sim.open())
    revealed = {a.constraint_index for a in opening.acts if a.type == "reveal"}
    assert revealed == {i for i, c in enumerate(task.constraints) if c.revelation == "initial"}
    accepted_at = None
    for turn in range(1, 30):
        reply = asyncio.run(sim.respond("here", truth.optimal_plan))
        kinds = [a.type for a in reply.acts]
        assert "flag_violation" not in kinds  # the optimum violates nothing
        revealed |= {a.constraint_index for a in reply.acts if a.type == "reveal"}
        if reply.done:
            accepted_at = turn
            break
        assert kinds  # every turn does something
    assert accepted_at is not None
    assert revealed == set(range(len(task.constraints)))  # accepted only once everything is known
    assert sim.revealed_all_turn is not None and sim.revealed_all_turn <= accepted_at


def test_reliable_users_flag_violations_and_forced_revelation(conn):
    task = next(t for t in load_tasks() if t.persona.reliability == "reliable" and t.level == 1)
    sim = UserSimulator(
        task, TemplateUserBackend(), conn, seed=0, max_turns=len(task.constraints) + 1
    )
    asyncio.run(sim.open())
    reply = asyncio.run(sim.respond("try this", {"hotel": "pkg_1_1_2_9"}))
    flagged = [a for a in reply.acts if a.type == "flag_violation"]
    assert flagged and all(a.detail for a in flagged)
    no_rec = asyncio.run(sim.respond("still looking", None))
    assert {a.type for a in no_rec.acts} & {"reveal", "ask_recommendation", "acknowledge"}
    for _ in range(len(task.constraints)):
        asyncio.run(sim.respond("hm", None))
    assert not sim.state.hidden  # the turn limit forces every constraint out in time


def test_forced_revelation_leaves_the_agent_a_turn(conn):
    task = max(
        (t for t in load_tasks() if not t.revisions), key=lambda t: len(t.progressive_constraints())
    )
    hidden = len(task.progressive_constraints())
    max_turns = hidden + 2
    sim = UserSimulator(task, TemplateUserBackend(), conn, seed=0, max_turns=max_turns)
    asyncio.run(sim.open())
    for _ in range(hidden):
        asyncio.run(sim.respond("thinking", None))
    assert not sim.state.hidden and sim.revealed_all_turn <= max_turns - 2
