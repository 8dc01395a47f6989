"""Stories: written for their task, in the user's voice, never contradicting the objective."""

from __future__ import annotations

import collections
import re

import numpy as np
import pytest

from travelgym.suites.compass.objectives import FEATURES, FeatureCount, SingleMetric
from travelgym.suites.compass.stories import write_story
from travelgym.suites.compass.tasks import load_tasks

# Cues of each preference, written independently of the story templates: a story must carry
# one of its own objective's cues and none of another objective's.
CUES = {
    "total_cost": r"cheap|price|cost|pay as little|bill\b|frugal|money|dollar",
    "review_score": r"review score|best-reviewed|guest rat|rate highest|happiest guests|"
    r"great reviews|guests say",
    "review_count": r"most reviews|most-reviewed|number of reviews|widely reviewed|"
    r"list of reviews|have reviewed|lots of people|track record|few reviews|handful of reviews",
    "star_rating": r"stars|star rating|hotel class|fanciest|top-class|luxury|pampered",
    "distance": r"\bnear|close|distance|next to the park",
    "airport_drive": r"airport|after landing|after a flight|after flying|rental car",
    "flight_duration": r"flying time|flights overall|in the air|on planes|round trip|"
    r"flight time|long flights|short flights",
}
FIRST_PERSON = re.compile(r"\b(I|I'm|I've|I'd|my|we|We|We've)\b")
THIRD_PERSON = re.compile(r"\b(They|they|their|He|She|he|she)\b")


@pytest.fixture(scope="module")
def tasks():
    return load_tasks()


def _sentences(story: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", story.strip()) if s]


def _own_and_foreign(objective) -> tuple[list[str], list[str]]:
    if objective.type == "single_metric":
        return [objective.metric], [m for m in CUES if m != objective.metric]
    return [], list(CUES)


def test_no_story_contradicts_its_objective(tasks):
    for task in tasks:
        story = task.story.lower()
        own, foreign = _own_and_foreign(task.objective)
        for metric in own:
            assert re.search(CUES[metric], story), (task.task_id, metric, task.story)
        for metric in foreign:
            assert not re.search(CUES[metric], story), (task.task_id, metric, task.story)
        if isinstance(task.objective, FeatureCount):
            named = [n for n, (_, _, phrase) in FEATURES.items() if phrase in task.story]
            assert named, (task.task_id, task.story)
            assert set(named) <= set(task.objective.features), (task.task_id, named)


def test_stories_are_in_the_users_voice_and_name_the_park(tasks):
    from travelgym.suites.compass.constraints.base import PARK_NAMES

    for task in tasks:
        assert FIRST_PERSON.search(task.story), task.story
        assert not THIRD_PERSON.search(task.story), task.story
        assert all(PARK_NAMES[p] in task.story for p in task.park.park_ids), task.story


def test_no_sentence_is_shared_by_more_than_five_percent_of_stories(tasks):
    shared = collections.Counter(s for t in tasks for s in set(_sentences(t.story)))
    sentence, count = shared.most_common(1)[0]
    assert count <= 0.05 * len(tasks), (sentence, count)


def test_the_same_objective_is_worded_many_ways(tasks):
    wordings = collections.defaultdict(set)
    for task in tasks:
        if task.objective.type == "single_metric":
            wordings[task.objective.metric].add(_sentences(task.story)[-1])
    assert all(len(w) >= 5 for m, w in wordings.items() if m != "star_rating"), {
        m: len(w) for m, w in wordings.items()
    }


@pytest.mark.parametrize("metric", sorted(CUES))
def test_every_metric_story_states_it(metric):
    rng = np.random.default_rng(7)
    for _ in range(40):
        story = write_story(rng, ["Zion"], 2, SingleMetric(metric=metric)).lower()
        assert re.search(CUES[metric], story), story
        assert not any(re.search(CUES[m], story) for m in CUES if m != metric), story


# An independent reading of who travels: the companions a story names, counted from its words.
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
ALONE = re.compile(r"\b(on my own|by myself|solo)\b")
PARTY = re.compile(r"\bwith (.+?) (?:to|for) ")


def _companions(phrase: str) -> int:
    """How many people a party phrase such as 'my partner, our three kids and my mother' names."""
    count = 0
    for part in re.split(r",\s*|\s+and\s+", phrase):
        words = part.split()
        number = next((NUMBERS[w] for w in words if w in NUMBERS), 1)
        if words[-1] == "couples":
            number *= 2
        elif words[-1] == "parents":
            number = 2
        count += number
    return count


def _party_of(story: str) -> tuple[int, str]:
    """(travellers the story names, its party phrase) read from the story's first sentence."""
    first = _sentences(story)[0]
    if ALONE.search(first):
        return 1, ""
    match = PARTY.search(first)
    assert match, f"no party in {story!r}"
    return 1 + _companions(match.group(1)), match.group(1)


def _presumptions_hold(story: str, travellers: int, party: str) -> list[str]:
    """What the story presumes of the party and the party lacks."""
    rest = story.replace(party, "") if party else story
    wrong = []
    if re.search(r"\b(kids|children|teenager)\b", rest) and not re.search(
        r"\b(kids|teenager)\b", party
    ):
        wrong.append("children")
    if re.search(r"\banniversary\b", story) and "partner" not in party:
        wrong.append("anniversary without a partner")
    if re.search(r"\b(we|we've|we're|our|us)\b", rest.lower()) and travellers < 2:
        wrong.append("'we' alone")
    if re.search(r"\breunion\b", story) and not re.search(
        r"friend|roommate|sister|brother|parent|mother|couple|famil", party
    ):
        wrong.append("reunion without friends or family")
    return wrong


def test_every_shipped_story_names_the_party_of_its_travellers_constraint(tasks):
    for task in tasks:
        count = next(c.count for c in task.constraints if c.kind == "travellers")
        named, party = _party_of(task.story)
        assert named == count, (task.task_id, count, task.story)
        assert not _presumptions_hold(task.story, count, party), (task.task_id, task.story)


@pytest.mark.parametrize("travellers", range(1, 7))
def test_generated_stories_never_presume_a_companion_the_party_lacks(travellers):
    rng = np.random.default_rng(travellers)
    objectives = [SingleMetric(metric=m) for m in CUES]
    for i in range(150):
        story = write_story(rng, ["Zion"], travellers, objectives[i % len(objectives)])
        named, party = _party_of(story)
        assert named == travellers, story
        assert not _presumptions_hold(story, travellers, party), story
