"""How the scripted baseline plans without the behaviour trajectory (RQ1): with no way to ask,
it plans with no preferences; in clarification mode it asks the user one topic a turn in a
fixed order (up to the turn limit), reads the vocabulary values in each answer and plans with
them as if it had inferred them (:class:`~travelgym.suites.behavior2trip.agents.infer.Inferred`)."""

from __future__ import annotations

from typing import Any

from travelgym.suites.behavior2trip import vocab
from travelgym.suites.behavior2trip.agents.infer import Inferred
from travelgym.suites.behavior2trip.clarify import ASK_USER

# (topic, question, vocabulary): the order puts what most searches and checks use first
QUESTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("intercity_mode", "How do you prefer to travel between cities?", vocab.INTERCITY_TRANSPORT),
    ("hotel_star", "What hotel star level do you want?", vocab.STAR_LEVELS),
    ("attraction_types", "What kinds of attractions do you enjoy?", vocab.ATTRACTION_TYPES),
    ("cuisine", "What cuisine do you like?", vocab.CUISINES),
    ("price_level", "What price level per person do you like for meals?", vocab.PRICE_LEVELS),
    ("seat_class", "Which seat class do you prefer?", vocab.SEAT_CLASSES),
    ("hotel_facilities", "Which hotel facilities are essential for you?", vocab.FACILITIES),
    ("walking_tolerance", "How far can you walk in a day?", vocab.WALKING_TOLERANCE),
    ("dining_environment", "What dining environment do you like?", vocab.DINING_ENVIRONMENTS),
    ("intracity_mode", "How do you like to get around within a city?", vocab.INTRACITY_TRANSPORT),
)  # fmt: skip


def values_in(answer: str, allowed: tuple[str, ...]) -> list[str]:
    """The vocabulary values an answer names, in vocabulary order."""
    return [v for v in allowed if v in answer]


def apply_answer(prefs: Inferred, topic: str, values: list[str]) -> None:
    """Put the values read for ``topic`` into ``prefs`` (the tools' preference keys)."""
    if not values:
        return
    if topic == "hotel_star":
        prefs.hotel = {**(prefs.hotel or {}), "star_rating": values}
    elif topic == "hotel_facilities" and prefs.hotel and "star_rating" in prefs.hotel:
        prefs.hotel["amenities"] = values  # the planner searches hotels by star first
    elif topic == "attraction_types":
        prefs.attraction = {**(prefs.attraction or {}), "attraction_type": values}
    elif topic == "walking_tolerance":
        prefs.attraction = {**(prefs.attraction or {}), "walk_tolerance": values[:1]}
    elif topic in ("cuisine", "price_level", "dining_environment"):
        key = {"cuisine": "cuisine", "price_level": "price_level",
               "dining_environment": "environment"}[topic]  # fmt: skip
        prefs.restaurant = {
            **(prefs.restaurant or {}),
            key: values if key == "cuisine" else values[:1],
        }
    elif topic == "intercity_mode":
        prefs.mode = values[0]
    elif topic == "seat_class":
        prefs.seat = values[0]


async def ask_preferences(request: Any, env: Any) -> Inferred:
    """The preferences the scripted agent learns by asking (one step per question, its
    thought written before the call); no questions when ``request.ask_limit`` is 0."""
    prefs = Inferred()
    if request.ask_limit <= 0:
        env.begin_step("no behaviour trajectory is available and I cannot ask the traveller, so "
                       "I plan without preferences")  # fmt: skip
        env.add_step(text="no trajectory: plan without preferences")
        return prefs
    for topic, question, allowed in QUESTIONS[: request.ask_limit]:
        env.begin_step(f"no behaviour trajectory is available; I ask the traveller about "
                       f"{topic.replace('_', ' ')}")  # fmt: skip
        record = await env.acall(ASK_USER, {"question": question})
        payload = env.payload(record)
        answer = payload.get("answer", "") if isinstance(payload, dict) else ""
        values = values_in(answer, allowed)
        env.add_step(text=f"ask about {topic.replace('_', ' ')}",
                     observation=answer or None)  # fmt: skip
        apply_answer(prefs, topic, values)
        if not record.ok:  # the limit is reached or the user failed: stop asking
            break
    return prefs
