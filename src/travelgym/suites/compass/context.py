"""Per-episode state of the COMPASS tools: a read-only connection, lookup indexes, a notebook,
and a cache of what the tools computed from the rows (:class:`ToolCache`), which the episodes of
one run share."""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from rapidfuzz import fuzz, process, utils

from travelgym.toolkit import ContentError
from travelgym.toolkit.database_context import DatabaseContext

MIN_CONFIDENCE = 60.0  # fuzzy matches below this are not offered
ACCEPT_CONFIDENCE = 85.0  # a park or hotel name is taken without asking above this
SEARCH_CACHE_ENTRIES = 2048  # full result lists of paged searches kept (least recently used out)

T = TypeVar("T")


class ToolCache:
    """What the tools computed from a read-only database, by arguments: lookup tables (parks,
    places, hotel names, a park's room configurations) and the full, sorted result lists of the
    paged searches, so that paging through a search, or repeating it in a later episode, does
    not query and rebuild it again. Only pure functions of the rows go in (never episode state
    such as the notebook); callers treat what comes out as read-only.

    A context gets a cache of its own by default; a run passes one cache to all its episodes
    (:meth:`for_database` keeps the last one per database content, so the default run's three
    agents share it too). Search lists are bounded (``search_entries``), lookups are small.
    """

    _last: tuple[tuple[str, str], ToolCache] | None = None

    def __init__(self, search_entries: int = SEARCH_CACHE_ENTRIES) -> None:
        self.lookups: dict[Hashable, Any] = {}
        self._searches: OrderedDict[Hashable, Any] = OrderedDict()
        # a search's page partition: kept apart, so that it never pushes a search out
        self._pages: OrderedDict[Hashable, list[int]] = OrderedDict()
        self._search_entries = search_entries

    @classmethod
    def for_database(cls, path: str | os.PathLike[str], content_hash: str) -> ToolCache:
        """The shared cache of the database at ``path`` with ``content_hash`` (the last one
        made in this process when both match, else a new one that replaces it)."""
        key = (str(Path(path).resolve()), content_hash)
        if cls._last is None or cls._last[0] != key:
            cls._last = (key, cls())
        return cls._last[1]

    def lookup(self, key: Hashable, compute: Callable[[], T]) -> T:
        """A lookup table, computed once."""
        if key not in self.lookups:
            self.lookups[key] = compute()
        return self.lookups[key]

    def search(self, key: Hashable, compute: Callable[[], T]) -> T:
        """A search's full result list, computed once while it stays among the most recent."""
        return self._recent(self._searches, key, compute)

    def pages(self, key: Hashable, compute: Callable[[], list[int]]) -> list[int]:
        """Where each page of a search's results begins, computed once while it stays among the
        most recent (a cache of its own, as large as the searches')."""
        return self._recent(self._pages, key, compute)

    def _recent(self, store: OrderedDict[Hashable, Any], key: Hashable,
                compute: Callable[[], T]) -> T:  # fmt: skip
        found = store.get(key)
        if found is None:
            found = store[key] = compute()
            if len(store) > self._search_entries:
                store.popitem(last=False)
        else:
            store.move_to_end(key)
        return found


@dataclass
class Place:
    label: str  # the string matched against
    name: str  # canonical name shown to the agent
    location_type: str  # national_park, gateway_town, airport, hotel
    ref: str  # park_id, airport code or hotel id
    park_id: str | None
    lat: float
    lon: float


@dataclass
class CompassContext(DatabaseContext):
    """Everything a COMPASS tool needs; one per episode (the notebook is episode state)."""

    notebook: list[str] = field(default_factory=list)
    cache: ToolCache = field(default_factory=ToolCache)

    @property
    def parks(self) -> dict[str, dict]:
        return self.cache.lookup("parks", self._parks)

    def _parks(self) -> dict[str, dict]:
        cur = self.conn.execute("SELECT * FROM parks ORDER BY park_id")
        cols = [d[0] for d in cur.description]
        return {r[0]: dict(zip(cols, r, strict=True)) for r in cur}

    @property
    def places(self) -> list[Place]:
        """Every name an agent may use for a location: parks, aliases, towns, airports."""
        return self.cache.lookup("places", self._places)

    def _places(self) -> list[Place]:
        out: list[Place] = []
        for park in self.parks.values():
            pid, lat, lon = park["park_id"], park["lat"], park["lon"]
            for label in [park["name"], *json.loads(park["aliases"])]:
                out.append(Place(label, park["name"], "national_park", pid, pid, lat, lon))
            for town in json.loads(park["gateway_towns"]):
                out.append(Place(town, town, "gateway_town", pid, pid, lat, lon))
        for code, name, city, lat, lon in self.conn.execute(
            "SELECT code, name, city, lat, lon FROM airports ORDER BY code"
        ):
            for label in (code, name, city):
                out.append(Place(label, name, "airport", code, None, lat, lon))
        return out

    @property
    def _place_labels(self) -> list[str]:
        return self.cache.lookup("place_labels", lambda: [p.label for p in self.places])

    @property
    def _hotel_names(self) -> dict[int, str]:
        return self.cache.lookup("hotel_names", lambda: dict(
            self.conn.execute("SELECT hotel_id, name FROM hotels ORDER BY hotel_id")))  # fmt: skip

    def match_places(self, query: str, limit: int = 5) -> list[tuple[Place, float]]:
        """Fuzzy matches of ``query`` against every place label, best first, one per place."""
        hits = process.extract(
            query,
            self._place_labels,
            scorer=fuzz.WRatio,
            processor=utils.default_process,
            limit=limit * 4,
            score_cutoff=MIN_CONFIDENCE,
        )
        seen, out = set(), []
        for _, score, idx in sorted(hits, key=lambda h: (-h[1], h[2])):
            place = self.places[idx]
            key = (place.location_type, place.ref, place.name)
            if key not in seen:
                seen.add(key)
                out.append((place, round(score, 1)))
        return out[:limit]

    def resolve_park(self, name: str) -> dict:
        """The park a name refers to (exact id/name/alias, else a confident fuzzy match)."""
        text = name.strip()
        if text.lower() in self.parks:
            return self.parks[text.lower()]
        lowered = text.lower()
        for place in self.places:
            if place.location_type == "national_park" and place.label.lower() == lowered:
                return self.parks[place.park_id]
        parks = [
            (p, s)
            for p, s in self.match_places(text, limit=8)
            if p.location_type == "national_park"
        ]
        if parks and parks[0][1] >= ACCEPT_CONFIDENCE:
            return self.parks[parks[0][0].park_id]
        hint = ", ".join(sorted({p.name for p, _ in parks[:3]})) or "see search_location_name"
        raise ContentError(
            f"unknown national park {name!r}; did you mean: {hint}? "
            f"Known parks: {', '.join(p['name'] for p in self.parks.values())}"
        )

    def park_configs(self, park_id: str) -> dict[int, dict]:
        """Static attributes of every room configuration at a park (cached)."""
        return self.cache.lookup(("park_configs", park_id), lambda: self._park_configs(park_id))

    def _park_configs(self, park_id: str) -> dict[int, dict]:
        cur = self.conn.execute(
            """SELECT c.config_id, h.hotel_id, h.name AS hotel_name, h.star_rating,
                      h.review_score, h.review_count, h.distance_km, h.is_pet_friendly,
                      h.has_parking, r.room_type, r.bed_configuration, r.max_occupancy,
                      c.rate_name
                 FROM hotels h JOIN rooms r ON r.hotel_id = h.hotel_id
                 JOIN room_configs c ON c.room_id = r.room_id
                WHERE h.park_id = ? ORDER BY c.config_id""",
            (park_id,),
        )
        cols = [d[0] for d in cur.description][1:]
        return {
            row[0]: {
                k: (bool(v) if k.startswith(("is_", "has_")) else v)
                for k, v in zip(cols, row[1:], strict=True)
            }
            for row in cur
        }

    def match_hotels(self, query: str, limit: int = 5) -> list[tuple[int, str, float]]:
        """Fuzzy matches of ``query`` against hotel names: (hotel_id, name, confidence)."""
        hits = process.extract(
            query,
            self._hotel_names,
            scorer=fuzz.WRatio,
            processor=utils.default_process,
            limit=limit,
            score_cutoff=MIN_CONFIDENCE,
        )
        return [(hid, name, round(score, 1)) for name, score, hid in hits]
