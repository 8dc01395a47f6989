"""The oracle planner's distances and memos: pure functions over coordinates (flat-earth km
for rankings, haversine km inlined for exactness) and the per-process memos they fill."""

from __future__ import annotations

import math
from typing import Any

from travelgym.geo import EARTH_RADIUS_KM
from travelgym.suites.behavior2trip.agents.scripted_search import best_leg
from travelgym.suites.behavior2trip.context import Place
from travelgym.suites.behavior2trip.memo import BoundedMemo
from travelgym.suites.behavior2trip.tools.mapguide import city_routes

NEAREST = 12  # POIs of each pool that weigh in a hotel's centrality


def flat_km(a: dict, b: dict) -> float:
    """Approximate km within a city (flat earth: the ranking of nearby places is unchanged)."""
    dy = a["lat"] - b["lat"]
    dx = (a["lon"] - b["lon"]) * math.cos(math.radians(a["lat"]))
    return 111.2 * math.hypot(dx, dy)


def hotel_spread(hotel: dict, pools: list[tuple[tuple[float, float], ...]]) -> float:
    """A hotel's distance to the places its days need: over each pool (coordinates), the sum
    of the :data:`NEAREST` smallest :func:`flat_km` (the same floats, in the same order)."""
    return sum([pool_spread(hotel, pool) for pool in pools if pool])


def pool_spread(hotel: dict, pool: tuple[tuple[float, float], ...]) -> float:
    """:func:`hotel_spread`'s term of one pool."""
    lat, lon = hotel["lat"], hotel["lon"]
    scale = math.cos(math.radians(lat))
    hypot = math.hypot
    # sorted()[:n] holds the floats heapq.nsmallest(n) returns, in the same order, sooner
    return sum(sorted([111.2 * hypot((lon - x) * scale, lat - y) for y, x in pool])[:NEAREST])


SPREADS: dict[tuple, dict[tuple[float, float], float]] = {}  # a pool -> hotel -> its term
SPREADS_KEPT = 2048  # pools of places whose terms of hotels' spreads are remembered
MEMO_KEPT = 1 << 16  # entries of each per-process memo (cleared when full)
ESTIMATES = BoundedMemo(None, MEMO_KEPT)  # local legs between two coordinates


def nearest(fits: list[tuple], away: list[float] | None, home: list[float] | None,
             pull: float) -> dict:  # fmt: skip
    """The row of :meth:`OraclePlanner._table` entries ``fits`` with the lowest
    :meth:`Planner._score` (the first on a tie), ``away`` the rows' km from the anchor (None:
    no anchor), ``home`` their km from the hotel."""
    best, low = None, math.inf
    for row, _, _, i, _, _, spend, rating in fits:
        distance = away[i] if away is not None else 0.0
        if home is not None:
            distance += pull * home[i]
        score = distance + spend - rating
        if best is None or score < low:
            best, low = row, score
    return best


def anchor_km(table: list[tuple], anchor: dict) -> list[float]:
    """Per row of ``table`` (:meth:`OraclePlanner._table`), its km from ``anchor``:
    :func:`~travelgym.geo.haversine_km` inlined, the same operations in the same order."""
    lat, lon = anchor["lat"], anchor["lon"]
    p1 = math.radians(lat)
    c1 = math.cos(p1)
    radians, sin, asin, sqrt = math.radians, math.sin, math.asin, math.sqrt
    out = []
    for row, _, _, _, p2, c2, _, _ in table:
        dp, dl = p2 - p1, radians(row["lon"] - lon)
        a = sin(dp / 2) ** 2 + c1 * c2 * sin(dl / 2) ** 2
        out.append(2 * EARTH_RADIUS_KM * asin(min(1.0, sqrt(a))))
    return out


def estimate(city: str, a: dict, b: dict, travellers: int) -> dict[str, Any]:
    """:meth:`~travelgym.suites.behavior2trip.agents.scripted_search.Toolbox.route` between
    two known coordinates (MapGuide's formula, no call), remembered per process; read-only."""
    key = (city, a["lat"], a["lon"], b["lat"], b["lon"], travellers)
    hit = ESTIMATES.get(key)
    if hit is None:
        routes = city_routes(Place(str(a.get("name")), "", None, city, a["lat"], a["lon"]),
                             Place(str(b.get("name")), "", None, city, b["lat"], b["lon"]))[1]  # fmt: skip
        hit = ESTIMATES.keep(key, best_leg(routes, travellers))
    return hit
