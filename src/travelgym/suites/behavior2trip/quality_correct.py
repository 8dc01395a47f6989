"""Figure 10's correction of a profile from its behaviour: the preferences the key behaviours
(favourites and bookings) support, and the kinds a behaviour shows per category, which
criterion 2 (clarity) reads too."""

from __future__ import annotations

from collections import Counter
from typing import Any

from travelgym.suites.behavior2trip.instance_model import Instance
from travelgym.suites.behavior2trip.preferences import MODE_SEATS, POI_TYPE_CATEGORY, poi_matches
from travelgym.suites.behavior2trip.vocab import WALKING_TOLERANCE

KEY_ACTIONS = ("add_to_favorites", "book")


def shown_kinds(instance: Instance, catalog: Any, category: str) -> set[str]:
    """The kinds (star level, attraction type, cuisine) the behaviour shows for ``category``:
    those of its favourites and bookings, and of clicked POIs that match every preference
    (a noise click shows nothing; at a ``--noise`` level above 0 neither does a favourite of an
    off-profile POI)."""
    prefs = instance.profile.preferences
    out = set()
    for a in instance.trajectory:
        poi = catalog.pois.get(a.poi_id)
        if poi is None or POI_TYPE_CATEGORY.get(a.poi_type) != category:
            continue
        if _evidence(instance, a, poi) or poi_matches(prefs, poi):
            out.add(poi.kind)
    return out


def _evidence(instance: Instance, action: Any, poi: Any) -> bool:
    """Whether ``action`` on ``poi`` is a key behaviour that speaks for a preference: every
    favourite and booking, except (at a ``--noise`` level above 0) a favourite of an
    off-profile POI, which the level makes expected noise."""
    if action.action_type not in KEY_ACTIONS:
        return False
    return (not instance.noise or action.action_type == "book"
            or poi_matches(instance.profile.preferences, poi))  # fmt: skip


def _ordered(values: list[str]) -> list[str]:
    """Distinct values, the most frequent first (ties: first seen)."""
    counts = Counter(values)
    return sorted(counts, key=lambda v: (-counts[v], values.index(v)))


def _shared(values: list[Any], stated: Any) -> Any:
    """``stated`` when every behaviour agrees with it, else the one value all share, else None."""
    if all(v == stated for v in values):
        return stated
    return values[0] if values and len(set(values)) == 1 else None


def corrected_from_behaviour(instance: Instance, catalog: Any) -> dict[str, Any]:
    """The preferences (JSON, without the history) the key behaviours support: listed values no
    favourite or booking shows are dropped (or replaced by those shown), and an attribute a key
    behaviour contradicts takes the value the behaviour shows (or none when it is optional and
    the behaviours disagree). Categories stay as they are, and so does every clicked POI's
    standing (a value a matching click shows is kept: no click turns into noise)."""
    prefs = instance.profile.preferences
    pois: dict[str, list] = {}
    for a in instance.trajectory:
        category = POI_TYPE_CATEGORY.get(a.poi_type)
        poi = catalog.pois.get(a.poi_id)
        if category and poi is not None and _evidence(instance, a, poi):
            pois.setdefault(category, []).append(poi)
    out = prefs.model_dump(mode="json", exclude={"historical_travel_experiences"})

    def narrowed(stated: list[str], category: str) -> list[str]:
        # what the behaviour shows: the same evidence criterion 2 looks at
        shown = shown_kinds(instance, catalog, category)
        kept = [v for v in stated if v in shown]
        return kept or _ordered([p.kind for p in pois[category]])[: len(stated)]

    if (h := prefs.hotel_preferences) and (ps := pois.get("hotel_preferences")):
        out["hotel_preferences"] = {
            "star_requirement": narrowed(h.star_requirement, "hotel_preferences"),
            "essential_facilities": [f for f in h.essential_facilities
                                     if all(f in p.facilities for p in ps)],
        }  # fmt: skip
    if (a := prefs.attraction_preferences) and (ps := pois.get("attraction_preferences")):
        walking = a.walking_tolerance
        levels = [p.level for p in ps if p.level]
        if walking and levels:
            walking = max([walking, *levels], key=WALKING_TOLERANCE.index)
        out["attraction_preferences"] = {
            "preferred_attraction_types": narrowed(a.preferred_attraction_types,
                                                   "attraction_preferences"),
            "walking_tolerance": walking,
        }  # fmt: skip
    if (d := prefs.dining_requirements) and (ps := pois.get("dining_requirements")):
        out["dining_requirements"] = {
            "cuisine_preferences": narrowed(d.cuisine_preferences, "dining_requirements"),
            "price_level": _shared([p.level for p in ps], d.price_level) if d.price_level
            else None,
            "dining_environment": _shared([p.env for p in ps], d.dining_environment)
            if d.dining_environment else None,
        }  # fmt: skip
    if (t := prefs.transportation_preferences) and (ps := pois.get("transportation_preferences")):
        modes = [p.kind for p in ps]
        mode = t.intercity_transport if t.intercity_transport in modes else _ordered(modes)[0]
        seats = [p.level for p in ps if p.kind == mode]
        seat = _shared(seats, t.seat_class) if t.seat_class else None
        out["transportation_preferences"] = {
            "intercity_transport": mode, "intracity_transport": t.intracity_transport,
            "seat_class": seat if seat in MODE_SEATS[mode] else None,
        }  # fmt: skip
    return out
