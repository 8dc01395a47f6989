"""The POI tables in memory and the candidate pools of behaviour trajectories: per *thread*
(one POI category in one city) the preference-matched POIs and the noise POIs."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from travelgym.suites.behavior2trip import vocab
from travelgym.suites.behavior2trip.preferences import (
    Poi,
    Preferences,
    poi_matches,
)

# --- the POI tables in memory ------------------------------------------------------------------


class PoiCatalog:
    """Every POI and transport service, grouped by (focus, city, origin) and indexed by kind.

    Built once (from the database or from a list of :class:`Poi`); all pool queries are
    in-memory dictionary look-ups.
    """

    def __init__(self, pois: Iterable[Poi]) -> None:
        self.pois: dict[str, Poi] = {}
        self.groups: dict[tuple, list[Poi]] = {}
        self.index: dict[tuple, dict[str, list[Poi]]] = {}
        for poi in pois:
            if poi.poi_id in self.pois:
                raise ValueError(f"duplicate POI id {poi.poi_id}")
            self.pois[poi.poi_id] = poi
            key = (poi.focus, poi.city, poi.origin)
            self.groups.setdefault(key, []).append(poi)
            self.index.setdefault(key, {}).setdefault(poi.kind, []).append(poi)
        self.cities = tuple(c for c in vocab.CITIES if any(k[1] == c for k in self.groups))
        self._memo: dict[tuple, list[Poi]] = {}
        self.source: str | None = None  # the database it was loaded from (None: built in memory)

    @classmethod
    def from_database(cls, path: str | os.PathLike[str]) -> PoiCatalog:
        """Load the POI tables of a Behavior2Trip database (one query per table)."""
        from travelgym.db import connect_readonly

        conn = connect_readonly(path)
        try:
            catalog = cls(_rows(conn))
        finally:
            conn.close()
        catalog.source = os.fspath(path)
        return catalog

    def group(self, focus: str, city: str, origin: str | None = None) -> list[Poi]:
        return self.groups.get((focus, city, origin if focus == "transport" else None), [])

    def matched(self, focus: str, city: str, origin: str | None, prefs: Preferences) -> list[Poi]:
        """POIs of ``focus`` in ``city`` (transport: from ``origin``) matching ``prefs`` (the
        same verdict as :func:`~travelgym.suites.behavior2trip.preferences.poi_matches`). Memoised: treat the
        returned list as read-only."""
        return self.matched_sig(focus, city, origin, signature(prefs, focus))

    def matched_sig(
        self, focus: str, city: str, origin: str | None, sig: tuple | None
    ) -> list[Poi]:
        """:meth:`matched` for a precomputed :func:`signature`."""
        key = (focus, city, origin if focus == "transport" else None)
        if sig is None:
            return self.groups.get(key, [])
        cached = self._memo.get((key, sig))
        if cached is None:
            index = self.index.get(key, {})
            cands = [p for k in sig[0] for p in index.get(k, ())]
            cached = self._memo[(key, sig)] = _filter(focus, sig, cands)
        return cached

    def unmatched(self, focus: str, city: str, origin: str | None, prefs: Preferences) -> list[Poi]:
        """POIs of the same group that go against ``prefs`` (noise candidates)."""
        return [p for p in self.group(focus, city, origin) if not poi_matches(prefs, p)]


def signature(prefs: Preferences, focus: str) -> tuple | None:
    """A hashable key of the preferences governing ``focus`` (None: inactive); its first item
    is the tuple of accepted ``kind`` values."""
    if focus == "hotel" and (h := prefs.hotel_preferences):
        return tuple(h.star_requirement), frozenset(h.essential_facilities)
    if focus == "restaurant" and (r := prefs.dining_requirements):
        return tuple(r.cuisine_preferences), r.price_level, r.dining_environment
    if focus == "attraction" and (a := prefs.attraction_preferences):
        return tuple(a.preferred_attraction_types), a.walking_tolerance
    if focus == "transport" and (t := prefs.transportation_preferences):
        return (t.intercity_transport,), t.seat_class
    return None


def _filter(focus: str, sig: tuple, cands: list[Poi]) -> list[Poi]:
    """The secondary-attribute test of :func:`poi_matches`, inlined for speed."""
    if focus == "hotel":
        need = sig[1]
        return [p for p in cands if need.issubset(p.facilities)]
    if focus == "restaurant":
        _, price, env = sig
        return [
            p
            for p in cands
            if (price is None or p.level == price) and (env is None or p.env == env)
        ]
    if focus == "attraction":
        if sig[1] is None:
            return cands
        limit = WALK_RANK[sig[1]]
        return [p for p in cands if p.level is None or WALK_RANK[p.level] <= limit]
    seat = sig[1]
    return [p for p in cands if seat is None or p.level == seat]


WALK_RANK = {w: i for i, w in enumerate(vocab.WALKING_TOLERANCE)}


def _rows(conn) -> Iterable[Poi]:
    for r in conn.execute(
        "SELECT hotel_id, name, city, secondary_category, facilities, avg_price FROM hotels ORDER BY hotel_id"
    ):
        yield Poi(r[0], r[1], "hotel", r[2], r[5], r[3], facilities=tuple(json.loads(r[4])))
    for r in conn.execute(
        "SELECT restaurant_id, name, city, secondary_category, price_level, dining_environment, avg_price FROM restaurants ORDER BY restaurant_id"
    ):
        yield Poi(r[0], r[1], "restaurant", r[2], r[6], r[3], r[4], r[5])
    for r in conn.execute(
        "SELECT attraction_id, name, city, attraction_type, walking_level, avg_price FROM attractions ORDER BY attraction_id"
    ):
        yield Poi(r[0], r[1], "attraction", r[2], r[5], r[3], r[4])
    for r in conn.execute(
        "SELECT entertainment_id, name, city, secondary_category, avg_price FROM entertainment ORDER BY entertainment_id"
    ):
        yield Poi(r[0], r[1], "entertainment", r[2], r[4], r[3])
    cabins = {"Economy Class": "Y", "Business Class": "C"}
    for r in conn.execute(
        "SELECT flight_number, airline, dep_city, arr_city, cabin_class, MIN(adult_total)"
        " FROM flights GROUP BY flight_number, dep_city, arr_city, cabin_class"
        " ORDER BY flight_number, dep_city, arr_city, cabin_class"
    ):
        name = f"{r[1]} {r[0]} {r[2]}-{r[3]}"
        yield Poi(
            f"{r[0]}-{cabins[r[4]]}", name, "flight", r[3], r[5], "Airplane", r[4], origin=r[2]
        )
    for r in conn.execute(
        "SELECT train_number, train_type, dep_city, arr_city, dep_station, arr_station,"
        " fare_second_class, fare_first_class FROM trains ORDER BY train_id"
    ):
        name = f"{r[0]} {r[4]}-{r[5]}"
        yield Poi(f"{r[0]}-2", name, "train", r[3], r[6], r[1], "Second Class Seat", origin=r[2])
        if r[7] is not None:
            yield Poi(f"{r[0]}-1", name, "train", r[3], r[7], r[1], "First Class Seat", origin=r[2])
    for r in conn.execute(
        "SELECT bus_number, dep_city, arr_city, dep_station, arr_station, fare FROM buses ORDER BY bus_id"
    ):
        yield Poi(
            r[0], f"Coach {r[0]} {r[3]}-{r[4]}", "bus", r[2], r[5], "Long-distance Bus", origin=r[1]
        )


@dataclass
class Thread:
    """A browsing intent: one category (``focus``) in one city."""

    city: str
    focus: str
    matched: list[Poi]
    noise: list[Poi] = field(default_factory=list)
    # off-profile POIs that a noisy trajectory may favourite (only at a noise level above 0)
    off: list[Poi] = field(default_factory=list)


@dataclass
class CandidatePool:
    """Figure 9's candidate POI pool for one profile, organised by thread."""

    profile_id: str
    difficulty: str
    threads: list[Thread]
    max_noise: int  # most noise clicks a trajectory may hold
    # the --noise level (docs/behavior2trip/instances.md): 0 is the paper's strict Figure 9
    level: float = 0.0
    # threads of drifting sessions (an off-trip city, off-profile POIs), only at a level above 0
    drift: list[Thread] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.by_id: dict[str, tuple[Poi, bool]] = {}
        for t in [*self.threads, *self.drift]:
            for poi in t.matched:
                self.by_id[poi.poi_id] = (poi, False)
            for poi in [*t.noise, *t.off]:
                self.by_id[poi.poi_id] = (poi, True)


class PoolError(ValueError):
    """The database cannot supply a pool for this profile (its preferences are too rare)."""


_CATALOGS: dict[str, PoiCatalog] = {}


def catalog_for(db_path: str | os.PathLike[str]) -> PoiCatalog:
    """The catalog of the database at ``db_path``, loaded once per process (the same file named
    by a str or a Path, relatively or through a link, is one entry: loading it costs a quarter
    of a second); the last one only."""
    key = os.path.realpath(db_path)
    if key not in _CATALOGS:
        _CATALOGS.clear()
        _CATALOGS[key] = PoiCatalog.from_database(os.fspath(db_path))
    return _CATALOGS[key]
