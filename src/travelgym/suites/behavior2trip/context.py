"""Per-episode state of the Behavior2Trip tools: a read-only connection and name resolvers."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from rapidfuzz import fuzz, process, utils

from travelgym.sandbox.runner import Workspace
from travelgym.suites.behavior2trip.memo import BoundedMemo
from travelgym.suites.behavior2trip.schema import POI_TABLES
from travelgym.toolkit import ContentError
from travelgym.toolkit.database_context import DatabaseContext

ACCEPT_CONFIDENCE = 88.0  # a fuzzy place name is taken without asking above this
SUGGEST_CONFIDENCE = 60.0


_NOT_WORD = re.compile(r"[\W_]+")
NORMALIZED_KEPT = 1 << 14  # distinct texts remembered (place names and ids of the database)
TEXT_KEPT = 200  # longer texts are normalised afresh
RESOLVED_KEPT = 1 << 15  # (city, place text) look-ups remembered per context


def normalize(text: str) -> str:
    """Case, accents of punctuation and spacing removed: ``"Xi'an "`` -> ``"xian"``."""
    if type(text) is not str or len(text) > TEXT_KEPT:
        return _normalized(text)
    return _NORMALIZED[text]


def _normalized(text: str) -> str:
    return _NOT_WORD.sub("", text.casefold())


_NORMALIZED = BoundedMemo(_normalized, NORMALIZED_KEPT)


@dataclass
class Place:
    """A named point of a city that MapGuide can route from or to."""

    name: str
    kind: str  # hotel, restaurant, attraction, entertainment, railway station, airport, ...
    id: str | None
    city: str
    lat: float
    lon: float

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.kind, "id": self.id, "city": self.city,
                "lat": self.lat, "lon": self.lon}  # fmt: skip


@dataclass
class TripsContext(DatabaseContext):
    """Everything a Behavior2Trip tool needs; one per episode."""

    # the Python tool's working-directory files, kept across the episode's calls (opaque archive)
    workspace: Workspace = field(default_factory=Workspace)

    def rows(self, sql: str, params: tuple | list = ()) -> list[dict[str, Any]]:
        cur = self.conn.execute(sql, params)
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]

    @cached_property
    def cities(self) -> dict[str, dict[str, Any]]:
        """city_id -> the cities row (aliases decoded)."""
        out = {}
        for row in self.rows("SELECT * FROM cities ORDER BY rowid"):
            row["aliases"] = json.loads(row["aliases"])
            row["districts"] = json.loads(row["districts"])
            out[row["city_id"]] = row
        return out

    @cached_property
    def _city_keys(self) -> dict[str, str]:
        keys: dict[str, str] = {}
        for city_id, row in self.cities.items():
            labels = [row["name"], city_id, row["name_zh"], *row["aliases"], row["city_code"] or ""]
            for label in filter(None, labels):
                keys.setdefault(normalize(label), city_id)
        for code, city_id in self.conn.execute("SELECT code, city_id FROM airports ORDER BY code"):
            keys.setdefault(normalize(code), city_id)
        return keys

    @property
    def city_names(self) -> list[str]:
        return [row["name"] for row in self.cities.values()]

    def resolve_city(self, name: str, what: str = "city") -> dict[str, Any]:
        """The cities row a name refers to: any case, spacing or punctuation, known aliases
        (``xian``, ``Peking``, the Chinese name, an IATA city or airport code)."""
        key = normalize(name)
        for candidate in (key, key.removesuffix("city"), key.removesuffix("shi")):
            if candidate in self._city_keys:
                return self.cities[self._city_keys[candidate]]
        raise ContentError(
            f"unknown {what} {name!r}: the database covers these 24 cities: "
            f"{', '.join(self.city_names)}"
        )

    def places(self, city_id: str) -> list[Place]:
        """Every routable place of a city (cached): POIs, stations, airports, districts."""
        cache = self.__dict__.setdefault("_places", {})
        if city_id not in cache:
            city = self.cities[city_id]
            out = [Place(city["name"], "city centre", None, city["name"], city["lat"], city["lon"])]
            for table, id_col in POI_TABLES.items():
                sql = f"SELECT {id_col}, name, lat, lon FROM {table} WHERE city_id = ? ORDER BY 1"
                for pid, name, lat, lon in self.conn.execute(sql, (city_id,)):
                    out.append(Place(name, table.rstrip("s"), pid, city["name"], lat, lon))
            sql = "SELECT name, kind, lat, lon FROM stations WHERE city_id = ? ORDER BY name"
            for name, kind, lat, lon in self.conn.execute(sql, (city_id,)):
                label = "railway station" if kind == "railway" else "bus station"
                out.append(Place(name, label, None, city["name"], lat, lon))
            sql = "SELECT code, name, lat, lon FROM airports WHERE city_id = ? ORDER BY code"
            for code, name, lat, lon in self.conn.execute(sql, (city_id,)):
                out.append(Place(name, "airport", code, city["name"], lat, lon))
            cache[city_id] = out
        return cache[city_id]

    def _place_index(self, city_id: str) -> dict[str, Place]:
        """Normalised ids and names of a city's places -> the first place that has them."""
        cache = self.__dict__.setdefault("_place_index_cache", {})
        if city_id not in cache:
            index: dict[str, Place] = {}
            for place in self.places(city_id):
                for label in (place.id, place.name):
                    if label:
                        index.setdefault(normalize(label), place)
            cache[city_id] = index
        return cache[city_id]

    def resolve_place(self, city: dict[str, Any], query: str) -> Place:
        """A place of ``city`` by id, exact name (any case) or a confident fuzzy match."""
        # a pure look-up over the read-only database: planners ask for the same places often
        found = self.__dict__.setdefault("_resolved", {})
        hit = found.get((city["city_id"], query))
        if hit is not None:
            return hit
        place = self._resolve_place(city, query)
        if len(found) >= RESOLVED_KEPT:
            found.clear()
        found[city["city_id"], query] = place
        return place

    def _resolve_place(self, city: dict[str, Any], query: str) -> Place:
        key = normalize(query)
        if not key:
            raise ContentError("place name is empty: give a POI name or id, a station or airport")
        place = self._named_place(city, key)
        if place is not None:
            return place
        place, hits = self._fuzzy_place(city, query, SUGGEST_CONFIDENCE)
        if place is not None:
            return place
        hint = "; ".join(h[0] for h in hits[:3]) or "search POIs first with the *Search tools"
        raise ContentError(f"no place {query!r} in {city['name']}; did you mean: {hint}?")

    def find_place(self, city: dict[str, Any], query: str) -> Place | None:
        """The place :meth:`resolve_place` resolves, or None where it raises (no suggestions
        are made, so a miss costs less)."""
        key = normalize(query)
        if not key:
            return None
        place = self._named_place(city, key)
        return place if place is not None else self._fuzzy_place(city, query, ACCEPT_CONFIDENCE)[0]

    def _named_place(self, city: dict[str, Any], key: str) -> Place | None:
        """The place of ``city`` whose normalised id or name (or district) is ``key``."""
        exact = self._place_index(city["city_id"]).get(key)
        if exact is not None:
            return exact
        for district in city["districts"]:
            if normalize(district) == key:
                return self.places(city["city_id"])[0]  # a district resolves to the city centre
        return None

    def _fuzzy_place(self, city: dict[str, Any], query: str,
                     cutoff: float) -> tuple[Place | None, list[tuple]]:  # fmt: skip
        """The confident fuzzy match of ``query`` among ``city``'s place names (None when
        there is none) and the best matches scoring ``cutoff`` or more. A cutoff up to
        :data:`ACCEPT_CONFIDENCE` finds the same match: it is the one best score at or above
        that confidence."""
        places = self.places(city["city_id"])
        labels = [p.name for p in places]
        hits = process.extract(query, labels, scorer=fuzz.WRatio, processor=utils.default_process,
                               limit=5, score_cutoff=cutoff)  # fmt: skip
        hits.sort(key=lambda h: (-h[1], h[2]))
        if hits and hits[0][1] >= ACCEPT_CONFIDENCE and (len(hits) == 1 or hits[1][1] < hits[0][1]):
            return places[hits[0][2]], hits
        return None, hits
