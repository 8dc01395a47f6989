"""What the agent asks the user about: a deterministic keyword detector over its questions.

Only sentences that end with a question mark count. Each topic names the constraint kinds (and,
where one kind covers several things, the attribute values) it is about, and the objective
metrics or wish-list features that make it part of what the user ranks by. The simulator
answers from its script: a hidden constraint of the topic is revealed, a revealed one restated,
a topic of the objective is answered with the objective, anything else gets "no preference".
A generic question ("Anything else?", "Any other requirements?", "Could you tell me more?")
names no topic: :func:`asks_for_more` finds it, and the simulator answers it with its next
requirement only when the turn's revelation draw allows one. Plain regular expressions on the
agent's text; nothing in it is executed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# (constraint kind, attribute or None, the attribute's values that belong to the topic)
Match = tuple[str, str | None, tuple[str, ...]]


@dataclass(frozen=True)
class Topic:
    """One thing an agent can ask about."""

    name: str
    label: str  # how the user names it: "I have no preference about <label>"
    pattern: re.Pattern[str]
    matches: tuple[Match, ...]
    objective: tuple[str, ...] = ()  # SingleMetric metrics / FeatureCount features

    def covers(self, constraint: Any) -> bool:
        """Whether ``constraint`` is about this topic."""
        for kind, attribute, values in self.matches:
            if constraint.kind == kind and (
                attribute is None or getattr(constraint, attribute, None) in values
            ):
                return True
        return False

    def in_objective(self, objective: Any) -> bool:
        """Whether the objective ranks options by this topic."""
        wanted = {getattr(objective, "metric", None), *getattr(objective, "features", ())}
        return any(name in wanted for name in self.objective)


def _topic(name: str, label: str, pattern: str, matches: tuple[Match, ...],
           objective: tuple[str, ...] = ()) -> Topic:  # fmt: skip
    return Topic(name, label, re.compile(pattern, re.IGNORECASE), matches, objective)


def _amenity(value: str) -> tuple[Match, ...]:
    return (("hotel_amenity", "amenity", (value,)),)


def _room(value: str) -> tuple[Match, ...]:
    return (("room_feature", "feature", (value,)),)


TOPICS: tuple[Topic, ...] = (
    _topic("budget", "the budget", r"\bbudget|\bspend|\bafford|\bcheap|\bexpensive|\bprice[sd]?\b"
           r"|\bcosts?\b|how much", (("budget", None, ()), ("max_nightly_price", None, ())),
           ("total_cost",)),
    _topic("nightly_price", "the nightly rate", r"per night|a night\b|nightly|each night"
           r"|room rate", (("max_nightly_price", None, ()),), ("total_cost",)),
    _topic("stars", "the star rating", r"\bstars?\b|star rating|star-rated|\bstar hotel"
           r"|luxury", (("min_star_rating", None, ()),), ("star_rating", "four_stars")),
    _topic("reviews", "the reviews", r"\breviews?\b|review score|guest (score|rating)s?"
           r"|well[- ]rated|reviewed", (("min_review_score", None, ()),), ("review_score", "review_count")),
    _topic("distance", "how close the hotel is", r"\bdistance|how far|close to the park"
           r"|\bkm\b|kilomet|\bmiles?\b|walking|proximity|from the (park )?entrance",
           (("max_distance", None, ()),), ("distance",)),
    _topic("amenities", "amenities", r"\bamenit|\bfacilit",
           (("hotel_amenity", None, ()), ("room_feature", None, ()))),
    _topic("pool", "a pool", r"\bpool\b|\bswim", _amenity("has_pool"), ("pool",)),
    _topic("parking", "parking", r"\bparking\b|park (the|your) car", _amenity("has_parking"),
           ("parking",)),
    _topic("wifi", "Wi-Fi", r"wi-?fi|internet", _amenity("has_wifi"), ("wifi", "flight_wifi")),
    _topic("pets", "pets", r"\bpets?\b|\bdogs?\b|\bcats?\b|pet-friendly",
           _amenity("is_pet_friendly"), ("pet_friendly", "pets_in_cabin")),
    _topic("accessibility", "accessibility", r"accessib|wheelchair|mobility|disabilit",
           _amenity("is_accessible"), ("accessible",)),
    _topic("gym", "a gym", r"\bgym\b|fitness", _amenity("has_gym"), ("gym",)),
    _topic("laundry", "laundry", r"laundry|washing machine", _amenity("has_laundry"),
           ("laundry",)),
    _topic("restaurant", "a restaurant", r"restaurant|dining|on-site food",
           _amenity("has_restaurant"), ("restaurant",)),
    _topic("ev_charging", "EV charging", r"\bev\b|electric (car|vehicle)|charging|charger",
           _amenity("has_ev_charging"), ("ev_charging",)),
    _topic("kitchenette", "a kitchenette", r"kitchen", _room("has_kitchenette"),
           ("kitchenette",)),
    _topic("air_conditioning", "air conditioning", r"air[- ]?condition|\ba/?c\b|cooling",
           _room("has_air_conditioning"), ("air_conditioning",)),
    _topic("bathroom", "a private bathroom", r"bathroom|en-?suite", _room("has_private_bathroom")),
    _topic("balcony", "a balcony", r"balcon", _room("has_balcony"), ("balcony",)),
    _topic("view", "the view", r"\bviews?\b", _room("has_view"), ("view",)),
    _topic("coffee", "a coffee maker", r"coffee", _room("has_coffee_maker"), ("coffee_maker",)),
    _topic("room_features", "room features", r"room features|in the room|in-room",
           (("room_feature", None, ()),)),
    _topic("bed", "the bed", r"\bbeds?\b|\bking\b|\bqueen\b|\btwin\b|double bed",
           (("bed_type", None, ()),), ("king_bed",)),
    _topic("cancellation", "cancellation", r"cancel|refund|flexib",
           (("rate_policy", "policy", ("free_cancellation",)),), ("free_cancellation",)),
    _topic("prepayment", "prepayment", r"prepay|pay (up ?front|in advance|now)|deposit",
           (("rate_policy", "policy", ("no_prepayment",)),), ("no_prepayment",)),
    _topic("breakfast", "breakfast", r"breakfast|meal plan|\bmeals?\b",
           (("rate_policy", "policy", ("breakfast_included",)),
            ("hotel_amenity", "amenity", ("has_breakfast",))), ("breakfast_included",)),
    _topic("stops", "stops on the flights", r"\bdirect\b|non-?stop|\bstops?\b|layover"
           r"|connecting|connections?\b", (("direct_flights", None, ()),), ("direct_flights",)),
    _topic("airline", "the airline", r"airlines?\b|carriers?\b", (("airline", None, ()),)),
    _topic("cabin", "the cabin class", r"\bcabin class|\bclass\b|economy|business|premium",
           (("booking_class", None, ()),), ("premium_cabin",)),
    _topic("flight_times", "flight times", r"depart|arriv|what time|\bmorning|afternoon"
           r"|evening|red-?eye|flight times?|time of day", (("flight_time_window", None, ()),),
           ("morning_departure",)),
    _topic("flight_duration", "how long the flights take", r"flight (time|duration|length)"
           r"|flying time|long (is the |a )?flights?|hours? (in the air|of flying)",
           (("max_flight_duration", None, ()),), ("flight_duration",)),
    _topic("airport_drive", "the drive from the airport", r"\bdrive\b|driving|car ride"
           r"|which airport|arrival airport", (("max_airport_drive", None, ()),),
           ("airport_drive",)),
    _topic("origin", "where we fly from", r"fly(ing)? (out )?from|depart(ing)? from|home airport"
           r"|leaving from|where .*from\b|origin", (("origin_city", None, ()),)),
    _topic("dates", "the dates", r"\bdates?\b|how many nights|\bwhen\b|check-?in|check-?out"
           r"|weekend|length of (your|the) stay|which days|\bmonth\b",
           (("stay_dates", None, ()), ("weekend_stay", None, ()), ("date_window", None, ()))),
    _topic("travellers", "the party size", r"how many (people|travell?ers|guests|adults|of you)"
           r"|travell?ers|\bguests\b|party size|group size|\bparty\b|who is (coming|travell?ing)",
           (("travellers", None, ()),)),
    _topic("rooms", "the number of rooms", r"how many rooms|number of rooms|\brooms\b"
           r"|separate rooms", (("rooms", None, ()),)),
    _topic("permit", "a permit", r"permit|\btours?\b|\bhikes?\b|activit|excursion|\bboat",
           (("permit_required", None, ()),)),
    _topic("park", "the park", r"which park|what park|national park|destination",
           (("park", None, ()),)),
)  # fmt: skip

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_TRAILING = " \t*_)\"'`]"


def questions(text: str) -> list[str]:
    """The sentences of ``text`` that ask something (end with a question mark)."""
    out = []
    for sentence in _SENTENCE_END.split(text or ""):
        sentence = sentence.strip().rstrip(_TRAILING)
        if sentence.endswith("?"):
            out.append(sentence)
    return out


def asked_topics(text: str) -> list[Topic]:
    """The topics the agent's questions in ``text`` are about, in the order they are asked."""
    found: list[tuple[int, int, Topic]] = []
    offset = 0
    for sentence in questions(text):
        for order, topic in enumerate(TOPICS):
            hit = topic.pattern.search(sentence)
            if hit:
                found.append((offset + hit.start(), order, topic))
        offset += len(sentence) + 1
    seen: set[str] = set()
    out = []
    for _, _, topic in sorted(found, key=lambda f: (f[0], f[1])):
        if topic.name not in seen:
            seen.add(topic.name)
            out.append(topic)
    return out


GENERIC = re.compile(
    r"\banything (else|more)\b|\bsomething else\b|\bwhat else\b|\btell me more\b"
    r"|\bany (other|more|further|additional) (requirements?|preferences?|needs?|constraints?"
    r"|details?|information|info|wishes|must-haves?|criteria|things?)\b"
    r"|\b(other|more|further|additional) (requirements?|preferences?|needs?|constraints?"
    r"|must-haves?|criteria)\b|\bmissing anything\b|\bforg[eo]t(ten)? anything\b"
    r"|\banything I should know\b", re.IGNORECASE)  # fmt: skip


def asks_for_more(text: str) -> bool:
    """Whether a question in ``text`` asks generically for more requirements ("Anything
    else?"), whatever topics the other questions name."""
    return any(GENERIC.search(sentence) for sentence in questions(text))
