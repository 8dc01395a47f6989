"""The template user's wording varies: no message, and no sentence of 4+ words, more than twice in
a conversation, seeded by the simulator's seed and trial as well as the task, turn and style
(the default run's conversations: ``test_default_run``)."""

from __future__ import annotations

import asyncio
import collections

import numpy as np

from travelgym.suites.compass.tasks import load_tasks
from travelgym.suites.compass.user.sentences import key
from travelgym.suites.compass.user.simulator import UserSimulator
from travelgym.suites.compass.user.template import MAX_SAME_MESSAGE, TemplateUserBackend, compose


def most_repeated(texts: list[str]) -> int:
    return max(collections.Counter(texts).values())


def test_a_long_wait_never_repeats_a_message_more_than_twice():
    task = max(load_tasks(), key=lambda t: len(t.progressive_constraints()))
    for style in range(1, 10):
        persona = task.persona.model_copy(update={"style": style, "reveal_probability": 0.0})
        styled = task.model_copy(update={"persona": persona})
        sim = UserSimulator(styled, TemplateUserBackend(), conn=None, seed=0, max_turns=200)
        texts = [asyncio.run(sim.respond("Still searching.", None)).text for _ in range(199)]
        assert most_repeated(texts) <= MAX_SAME_MESSAGE, style
        assert len(set(texts)) >= 100  # variety, not a two-message loop


def test_wording_follows_the_seed_and_the_trial():
    task = next(t for t in load_tasks() if len(t.progressive_constraints()) >= 2)
    persona = task.persona.model_copy(update={"reveal_probability": 0.0})
    task = task.model_copy(update={"persona": persona})

    def conversation(seed: int, trial: int) -> list[str]:
        sim = UserSimulator(task, TemplateUserBackend(), conn=None, seed=seed, trial=trial)
        return [asyncio.run(sim.respond("Searching.", None)).text for _ in range(6)]

    assert conversation(0, 0) == conversation(0, 0)  # deterministic
    assert conversation(0, 0) != conversation(0, 1)
    assert conversation(0, 0) != conversation(1, 0)


def test_compose_skips_messages_already_sent_twice():
    slots = [(("Hello.",),), (("a", "b", "c"),)]
    said = {"Hello. a": 2, "Hello. b": 2}
    for seed in range(20):
        assert compose(slots, np.random.default_rng(seed), said) == "Hello. c"
    # every combination sent twice: the least-sent one, never a crash
    assert compose([(("x",),)], np.random.default_rng(0), {"x": 2}) == "x"


def test_compose_keeps_long_sentences_within_two_uses_and_falls_back_to_reserves():
    """A sentence of 4+ words said twice is not taken again: another entry of the bank is,
    then a short reserve (under 4 words: those may repeat)."""
    bank = ("I need a moment to think.", "Let me think about it a bit.")
    slots = [(bank, ("Not yet.",))]
    said = collections.Counter({key(bank[0]): 2})
    for seed in range(10):
        assert compose(slots, np.random.default_rng(seed), {}, said) == bank[1]
    said[key(bank[1])] = 2
    assert compose(slots, np.random.default_rng(0), {}, said) == "Not yet."
    # a lead ending in ":" and the fact after it are one sentence, counted as one
    fact = "The hotel must have a pool."
    slots = [(("Again:",),), ((fact,), (f"As I said: {fact}",))]
    said = collections.Counter({key(f"Again: {fact}"): 2})
    assert compose(slots, np.random.default_rng(0), {}, said) == f"Again: As I said: {fact}"
