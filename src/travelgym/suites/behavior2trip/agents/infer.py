"""Rule-based preference inference from a behaviour trajectory (the scripted baseline's
"reading" of the user): favourites and bookings are strong signals (Figure 9 lets only
preference-matched POIs be favourited or booked); clicks, which may be noise, are a fallback.

The result is expressed as the tools' ``preferences`` arguments (paper Table 7 keys).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from travelgym.suites.behavior2trip import vocab
from travelgym.suites.behavior2trip.actions import Action

WEIGHT = {"click": 1, "add_to_favorites": 2, "book": 3}
TRANSPORT_TYPES = ("flight", "train", "bus")


@dataclass
class Inferred:
    """Search preferences per tool (``None``: no signal) and what the user already did."""

    hotel: dict[str, list[str]] | None = None
    attraction: dict[str, list[str]] | None = None
    restaurant: dict[str, list[str]] | None = None
    entertainment: dict[str, list[str]] | None = None
    mode: str | None = None  # intercity mode (vocab.INTERCITY_TRANSPORT)
    seat: str | None = None  # vocab.SEAT_CLASSES
    booked: set[str] = field(default_factory=set)  # POI ids booked before (not to repeat)
    # labels only clicked next to strong ones: likely preferred too, maybe noise (a second tier)
    weak_attraction_types: list[str] = field(default_factory=list)
    weak_cuisines: list[str] = field(default_factory=list)

    def describe(self) -> str:
        parts = [f"{k}: {v}" for k, v in (("hotel", self.hotel), ("attraction", self.attraction),
                 ("restaurant", self.restaurant), ("intercity", self.mode), ("seat", self.seat))
                 if v]  # fmt: skip
        return "; ".join(parts) or "no clear preference"


def _signals(actions: Sequence[Action], poi_types: tuple[str, ...]) -> tuple[list[Action], bool]:
    """The favourited/booked actions of these types, else the clicks (second item: strong)."""
    own = [a for a in actions if a.poi_type in poi_types]
    strong = [a for a in own if a.action_type != "click"]
    return (strong, True) if strong else (own, False)


def _ranked(actions: list[Action], label_of) -> list[str]:
    """Labels by summed action weight (ties: first seen)."""
    counts: Counter[str] = Counter()
    for a in actions:
        label = label_of(a)
        if label:
            counts[label] += WEIGHT[a.action_type]
    return [label for label, _ in counts.most_common()]


def _labels(actions: list[Action], strong: bool, label_of) -> list[str]:
    """All strong labels; from clicks only the clear majority (noise clicks are rarer)."""
    ranked = _ranked(actions, label_of)
    if strong or not ranked:
        return ranked
    counts = Counter(label_of(a) for a in actions)
    top = ranked[0]
    return [top] if counts[top] * 2 > sum(counts.values()) else []


def _unanimous(actions: list[Action], label_of) -> str | None:
    values = {label_of(a) for a in actions}
    return values.pop() if len(values) == 1 else None


def _cat(index: int, allowed: tuple[str, ...]):
    def label_of(a: Action) -> str | None:
        return (
            a.categories[index]
            if len(a.categories) > index and a.categories[index] in allowed
            else None
        )

    return label_of


def _clicked_besides(actions: Sequence[Action], poi_type: str, strong: list[str],
                     allowed: tuple[str, ...]) -> list[str]:  # fmt: skip
    """Labels of clicked POIs of a type that are not among the strong ones, most clicked first."""
    clicked = [a for a in actions if a.poi_type == poi_type and a.action_type == "click"]
    return [x for x in _ranked(clicked, _cat(0, allowed)) if x not in strong]


def infer_preferences(actions: Sequence[Action]) -> Inferred:
    """Search preferences for each tool from the trajectory."""
    out = Inferred(booked={a.poi_id for a in actions if a.action_type == "book"})
    hotels, strong = _signals(actions, ("hotel",))
    stars = _labels(hotels, strong, _cat(0, vocab.STAR_LEVELS))
    if stars:
        out.hotel = {"star_rating": stars}
        chosen = [a for a in hotels if a.categories[0] in stars]
        common = set(vocab.FACILITIES)
        for a in chosen:
            common &= set(a.categories[1:])
        if common and strong:
            out.hotel["amenities"] = [f for f in vocab.FACILITIES if f in common]
    sights, strong = _signals(actions, ("attraction",))
    types = _labels(sights, strong, _cat(0, vocab.ATTRACTION_TYPES))
    if types:
        out.attraction = {"attraction_type": types}
        walks = [
            a.categories[1] for a in sights if len(a.categories) > 1 and a.categories[0] in types
        ]
        if strong and walks:
            out.attraction["walk_tolerance"] = [max(walks, key=vocab.WALKING_TOLERANCE.index)]
        if strong:
            out.weak_attraction_types = _clicked_besides(
                actions, "attraction", types, vocab.ATTRACTION_TYPES
            )
    meals, strong = _signals(actions, ("restaurant",))
    cuisines = _labels(meals, strong, _cat(0, vocab.CUISINES))
    if cuisines:
        out.restaurant = {"cuisine": cuisines}
        for key, index, allowed in (("price_level", 1, vocab.PRICE_LEVELS),
                                    ("environment", 2, vocab.DINING_ENVIRONMENTS)):  # fmt: skip
            label_of = _cat(index, allowed)
            value = (
                _unanimous(meals, label_of)
                if strong
                else next(iter(_labels(meals, False, label_of)), None)
            )
            if value:
                out.restaurant[key] = [value]
        if strong:
            out.weak_cuisines = _clicked_besides(actions, "restaurant", cuisines, vocab.CUISINES)
    fun, strong = _signals(actions, ("entertainment",))
    kinds = _labels(fun, strong, _cat(0, vocab.ENTERTAINMENT_TYPES))
    if kinds:
        out.entertainment = {"type": kinds}
    rides, strong = _signals(actions, TRANSPORT_TYPES)
    modes = _labels(rides, strong, _cat(0, vocab.INTERCITY_TRANSPORT))
    if modes:
        out.mode = modes[0]
        seats = _labels([a for a in rides if a.categories[0] == out.mode], strong,
                        _cat(1, vocab.SEAT_CLASSES))  # fmt: skip
        out.seat = seats[0] if seats else None
    return out
