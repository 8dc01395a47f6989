"""RQ1's simulated user: a traveller who knows the hidden profile and answers an agent's
clarification questions (the ``AskUser`` tool), one question a turn, up to a turn limit.

The **template** backend is deterministic: a question is mapped to preference *topics* by
keywords (:func:`topics_of`) and the answer states the profile's values of those topics only
(:func:`template_answer`); a topic without a value gets "no particular preference", a question
naming no topic a request to ask about a specific preference. The **LLM** backend
(:mod:`~travelgym.suites.behavior2trip.clarify_llm`) plays the user with a model. See
``docs/behavior2trip/rq1.md``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, Field

from travelgym.toolkit.errors import ContentError

ASK_USER = "AskUser"
DEFAULT_CLARIFY_TURNS = 5
MAX_QUESTION_CHARS = 1_000


def _values(getter: Callable[[Any], Any]) -> Callable[[Any], list[str]]:
    """A topic's profile values as a list (``[]``: no preference), safe on missing categories."""

    def read(prefs: Any) -> list[str]:
        try:
            value = getter(prefs)
        except AttributeError:  # the category is not active in this profile (None)
            return []
        if value is None:
            return []
        return [str(v) for v in value] if isinstance(value, list) else [str(value)]

    return read


# topic -> (what it is called in an answer, question keywords, the profile's values). The fixed
# words of the answers avoid every vocabulary value (the property test checks it), so an answer
# names only the values of the topics asked about.
TOPICS: dict[str, tuple[str, str, Callable[[Any], list[str]]]] = {
    "hotel_star": ("Hotel class", r"\bstars?\b|\bstar[- ]?(rating|level)|"
                   r"\bhotel (class|level|grade|type|standard)|"
                   r"\b(kind|type|class) of (hotel|accommodation)|\bhomestay",
                   _values(lambda p: p.hotel_preferences.star_requirement)),
    "hotel_facilities": ("Hotel must-haves", r"\bfacilit|\bamenit|\bwi-?fi\b|\bparking\b|\bgym\b|"
                         r"\bswimming\b|\bpool\b|\bbathroom",
                         _values(lambda p: p.hotel_preferences.essential_facilities)),
    "attraction_types": ("Kinds of sights", r"\battractions?\b|\bsights?(eeing)?\b|\bmuseums?\b|"
                         r"\blandmarks?\b|\bplaces to visit\b",
                         _values(lambda p: p.attraction_preferences.preferred_attraction_types)),
    "walking_tolerance": ("How far I go on foot", r"\bwalk|\bhow far\b|\bon foot\b|\bhik(e|ing)\b",
                          _values(lambda p: p.attraction_preferences.walking_tolerance)),
    "cuisine": ("Food I like", r"\bcuisines?\b|\bfoods?\b|\bdish(es)?\b|\beat(ing)?\b|"
                r"\bflavou?rs?\b",
                _values(lambda p: p.dining_requirements.cuisine_preferences)),
    "price_level": ("What I spend per meal", r"\bprice (level|range)|\bper person\b|\bper meal\b|"
                    r"\b(meal|dining|restaurant) (price|budget|cost|spend)|\bexpensive\b|\bcheap\b|"
                    r"\baffordable\b|\bspend\b",
                    _values(lambda p: p.dining_requirements.price_level)),
    "dining_environment": ("Dining setting", r"\benvironment\b|\batmosphere\b|\bambi[ea]nce\b|"
                           r"\bdecor\b|\bsetting\b|\bquiet\b|\blively\b|\bfamily[- ]friendly\b",
                           _values(lambda p: p.dining_requirements.dining_environment)),
    "intercity_mode": ("Between cities I travel by", r"\bintercity\b|\bbetween (the )?cities\b|"
                       r"\blong[- ]distance\b|\bflights?\b|\bfly(ing)?\b|\b(air)?planes?\b|"
                       r"\btrains?\b|\brail(way)?\b|\bget(ting)? there\b",
                       _values(lambda p: p.transportation_preferences.intercity_transport)),
    "intracity_mode": ("Inside a city I get around by", r"\bintracity\b|\b(within|inside|around) "
                       r"(the |a )?city\b|\blocal (transport|travel)|\bget(ting)? around\b|"
                       r"\btaxis?\b|\bsubway\b|\bmetro\b|\bride[- ]?(sharing|hailing)\b|"
                       r"\bbus(es)?\b",
                       _values(lambda p: p.transportation_preferences.intracity_transport)),
    "seat_class": ("Seat class", r"\bseats?\b|\bcabin\b|\b(business|economy|first|second|travel) "
                   r"class\b", _values(lambda p: p.transportation_preferences.seat_class)),
}  # fmt: skip
# a category word alone stands for its topics (when none of them is named)
CATEGORY_WORDS = {
    r"\bhotels?\b|\baccommodations?\b|\bstay\b": ("hotel_star", "hotel_facilities"),
    r"\brestaurants?\b|\bdining\b|\bmeals?\b": ("cuisine", "price_level", "dining_environment"),
    r"\btransport(ation)?\b|\btravel\b": ("intercity_mode", "intracity_mode"),
}
KNOWN = r"\bbudget\b|\bdates?\b|\bhow (many|long)\b|\bwhen\b|\bstart\b"
NO_PREFERENCE = "no particular preference"
ALREADY_GIVEN = "My budget, dates and party are as stated in my request."
ASK_SPECIFIC = ("Please ask me about a specific preference (for example my hotel, the sights, "
                "the food or how I travel).")  # fmt: skip


def topics_of(question: str) -> list[str]:
    """The preference topics a question asks about, in :data:`TOPICS` order."""
    text = question.lower()
    found = {t for t, (_, pattern, _) in TOPICS.items() if re.search(pattern, text)}
    for pattern, topics in CATEGORY_WORDS.items():
        if re.search(pattern, text) and not found & set(topics):
            found |= set(topics)
    return [t for t in TOPICS if t in found]


def profile_values(profile: Any, topic: str) -> list[str]:
    """The hidden profile's values of ``topic`` (``[]``: no preference)."""
    return TOPICS[topic][2](profile.preferences)


def template_answer(question: str, profile: Any) -> tuple[str, list[str]]:
    """The template user's answer to ``question`` and the topics it answered: only the asked
    topics' values, "no particular preference" for an asked topic without one."""
    topics = topics_of(question)
    if not topics:
        known = re.search(KNOWN, question.lower())
        return (ALREADY_GIVEN if known else ASK_SPECIFIC), []
    parts = []
    for topic in topics:
        values = profile_values(profile, topic)
        parts.append(f"{TOPICS[topic][0]}: {'; '.join(values) if values else NO_PREFERENCE}.")
    return " ".join(parts), topics


class Exchange(BaseModel):
    """One question put to the simulated user and what came back."""

    turn: int  # 1-based among the answered questions; 0: not answered (limit, error)
    question: str
    answer: str | None = None
    topics: list[str] = Field(default_factory=list)  # what the template user read (template)
    error: str | None = None


class Clarification(BaseModel):
    """An episode's clarification dialogue (RQ1): the user backend, the turn limit, the
    number of answered questions (the interaction burden) and every exchange."""

    user: str
    limit: int
    turns: int = 0
    exchanges: list[Exchange] = Field(default_factory=list)


class ClarifyError(Exception):
    """A simulated user that could not answer (a model error or an unusable reply)."""


def AskUser(question: str) -> Any:  # noqa: N802 - the tool's name as agents call it
    """Ask the traveller one clarification question about their preferences (hotel class or
    facilities, kinds of attractions, walking, cuisine, meal price level, dining setting,
    intercity or local transport, seat class). The answer covers only what you ask; each
    question is one clarification turn and the number of turns is limited.

    Args:
        question: the question, in plain words, e.g. "Which hotel star level do you want?"
    """
    # the episode's session answers AskUser (SimulatedUser.acall); a call reaching the plain
    # registry (e.g. from code in the Python tool) has no user to ask
    raise ContentError("AskUser is answered only as a direct action, not from code")


@lru_cache(maxsize=1)
def clarify_registry() -> Any:
    """The 9 Behavior2Trip tools plus ``AskUser`` (clarification mode)."""
    from travelgym.suites.behavior2trip.tools import TRIPS_TOOLS
    from travelgym.toolkit.registry import ToolRegistry

    return ToolRegistry([*TRIPS_TOOLS, AskUser])


def enable_clarification(env: Any, user: Any) -> None:
    """Give an episode's tool session the ``AskUser`` tool, answered by ``user`` (a
    :class:`~travelgym.suites.behavior2trip.clarify_user.SimulatedUser`)."""
    env.registry = clarify_registry()
    env.user = user


def ask_user_listing() -> str:
    """``AskUser`` as a line of the prompts' tool listing (clarification mode only)."""
    import json

    fn = clarify_registry()[ASK_USER].openai_schema()["function"]
    entry = {"name": fn["name"], "description": fn["description"].split("\n\n")[0],
             "parameters": fn["parameters"]}  # fmt: skip
    return json.dumps(entry, ensure_ascii=False)
