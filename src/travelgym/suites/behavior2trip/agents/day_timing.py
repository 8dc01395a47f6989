"""The oracle's day timing: the shapes of a travel day around its leg, and the solver that
times a day's stops within their windows."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from typing import Any

from travelgym.suites.behavior2trip.agents.schedule import (
    DAY_END,
    DAY_START,
    MAX_IDLE,
    MIN_GAP,
    RELAXED_MEAL_MINUTES,
    WINDOWS,
    Stop,
    _bounds,
    _stretch,
)
from travelgym.suites.behavior2trip.agents.scripted import FULL_DAY

ORACLE_FULL_DAYS = (
    FULL_DAY,
    (("breakfast", "dest", 8 * 60), ("attraction", "dest", 9 * 60 + 30),
     ("lunch", "dest", 12 * 60), ("attraction", "dest", 14 * 60), ("dinner", "dest", 17 * 60 + 30),
     ("hotel",)),
)  # fmt: skip
ORACLE_PULLS = (0.7, 2.0, 5.0, 12.0)
TRANSFER = 30  # minutes assumed between a station or airport and the next place, for shaping
HOP = 15  # minutes assumed between two places of a city, for shaping
MAX_SHAPES = 6  # day shapes tried per leg


def travel_shapes(leg: dict[str, Any], arrival: bool) -> list[tuple]:
    """Day templates around an intercity leg, built from its times: every split of the three
    meals into before and after the leg, with attractions (at least one) after any meal before
    the leg and before any meal (or the end of the day) after it, kept when an idealised day
    (fixed transfer and hop times, always open) can be timed by the rules; fewest attractions
    first, each slot hinted with its idealised start."""
    return list(_shapes(leg["dep"], leg["arr"], arrival))


def fits_a_day(leg: dict[str, Any], arrival: bool) -> bool:
    """Whether :func:`travel_shapes` finds any day around the leg (it stops at the first)."""
    return _fits(leg["dep"], leg["arr"], arrival)


@functools.lru_cache(maxsize=1 << 14)  # the leg times of the database: about 10,000
def _shapes(dep: int, arr: int, arrival: bool) -> tuple[tuple, ...]:
    """:func:`travel_shapes` of a leg's times (they depend on nothing else)."""
    return tuple(itertools.islice(_timed_shapes(dep, arr, arrival), MAX_SHAPES))


@functools.lru_cache(maxsize=1 << 14)
def _fits(dep: int, arr: int, arrival: bool) -> bool:
    """:func:`fits_a_day` of a leg's times."""
    return next(_timed_shapes(dep, arr, arrival), None) is not None


def _timed_shapes(dep: int, arr: int, arrival: bool) -> Iterator[tuple]:
    """The day templates around a leg of these times that can be timed, in the order
    :func:`travel_shapes` keeps them (fewest attractions first)."""
    leg = {"dep": dep, "arr": arr}
    before, after = ("home", "dest") if arrival else ("dest", "home")
    meals = ("breakfast", "lunch", "dinner")
    splits = [k for k in range(4) if _meals_fit(meals[:k], meals[k:], dep, arr)]
    seen = set()
    for count in range(1, 5):
        for k in splits:
            pre, post = meals[:k], meals[k:]
            for mask in (m for m in range(1, 1 << 4) if m.bit_count() == count):
                bits = [mask >> b & 1 for b in range(4)]
                seq: list[tuple] = []
                for meal, bit in zip(pre, bits, strict=False):
                    seq += [(meal, before)] + [("attraction", before)] * bit
                seq.append(("leg",))
                for meal, bit in zip(post, bits[len(pre) :], strict=False):
                    seq += [("attraction", after)] * bit + [(meal, after)]
                seq += [("attraction", after)] * bits[-1] + ([("hotel",)] if arrival else [])
                key = tuple(seq)
                if key in seen:
                    continue
                seen.add(key)
                timed = _ideal_times(seq, leg, arrival)
                if timed is not None:
                    yield timed


def _meals_fit(pre: tuple[str, ...], post: tuple[str, ...], dep: int, arr: int) -> bool:
    """Whether the meals before a leg can end in time for it and those after it can start
    after it at all (the widest windows, the shortest meals): a necessary test only."""
    early = all(WINDOWS[m][0][1][0] + RELAXED_MEAL_MINUTES[m] + TRANSFER <= dep for m in pre)
    return early and all(arr + TRANSFER <= WINDOWS[m][0][1][1] for m in post)


def _ideal_times(seq: list[tuple], leg: dict[str, Any], arrival: bool) -> tuple | None:
    """``seq`` with each slot's idealised start as its hint, or None when it cannot be timed
    (or visits an attraction after a leg arriving at 18:00 or later)."""
    late = leg["arr"] >= 18 * 60
    if late and any(x[0] == "attraction" for x in seq[seq.index(("leg",)) :]):
        return None
    stops = []
    for i, slot in enumerate(seq):
        if slot[0] == "leg":
            stop = Stop("leg", fixed=(leg["dep"], leg["arr"]))
        else:
            stop = Stop(slot[0], longest=240)
        nxt = seq[i + 1] if i + 1 < len(seq) else None
        stop.travel = TRANSFER if "leg" in (slot[0], nxt and nxt[0]) else HOP
        stops.append(stop)
    if not arrival and stops:  # leave the hotel at 06:00 at the earliest
        first = stops[0]
        first.hours = (6 * 60 + HOP, 2 * 24 * 60) if first.fixed is None else None
    if not (solve_day(stops) or solve_day(stops, relaxed=True)):
        return None
    return tuple(
        slot if slot[0] in ("leg", "hotel") else (slot[0], slot[1], stop.start)
        for slot, stop in zip(seq, stops, strict=True)
    )


_FAR = 1 << 40  # no such edge
# kind -> (earliest start, latest start, shortest, longest) of a stop without fixed times, as
# schedule's _bounds gives them, strict (False) and relaxed (True)
_BOUNDS = {
    relaxed: {
        kind: (*windows[1 if relaxed else 0],
               RELAXED_MEAL_MINUTES.get(kind, dmin) if relaxed else dmin, dmax)
        for kind, (windows, (dmin, dmax)) in WINDOWS.items()
    }
    for relaxed in (False, True)
}  # fmt: skip


def solve_day(stops: list[Stop], relaxed: bool = False) -> bool:
    """:func:`~travelgym.suites.behavior2trip.agents.schedule.solve_day` (the same times, the
    same verdict), solved on the network's shape instead of by Bellman-Ford: every constraint
    ties a time point to midnight or to the next point of the day, so the shortest paths are
    one sweep forwards and one backwards, and a negative cycle is a pair of neighbours or a
    path out of midnight and back."""
    n = len(stops)
    m = 2 * n  # point 2i: stop i starts, 2i + 1: it ends (schedule's node k + 1)
    up, down = [_FAR] * m, [_FAR] * m  # edges midnight -> k, k -> midnight
    fwd, bwd = [_FAR] * m, [_FAR] * m  # edges k -> k + 1, k + 1 -> k
    bounds, first_leg = _BOUNDS[relaxed], -1
    # (integer minimums as comparisons: this runs for every day tried)
    for i, stop in enumerate(stops):
        if stop.fixed is not None:  # schedule's _bounds, read from a table
            (lo, hi), (dmin, dmax) = _bounds(stop, relaxed)
            if first_leg < 0:
                first_leg = i
        else:
            lo, hi, dmin, dmax = bounds[stop.kind]
            if stop.longest is not None and stop.kind == "attraction":
                dmax = dmin if dmin > stop.longest else stop.longest
        s, e = 2 * i, 2 * i + 1
        if hi < up[s]:
            up[s] = hi
        down[s] = -lo  # down, fwd and bwd of s are set here first
        fwd[s] = dmax
        bwd[s] = -dmin
        kind = stop.kind
        if stop.hours is not None:
            if -stop.hours[0] < down[s]:
                down[s] = -stop.hours[0]
            up[e] = stop.hours[1]  # up of e is set here first
        if (kind == "lunch" or kind == "dinner" or kind == "attraction") and up[e] > DAY_END:
            up[e] = DAY_END
        if i + 1 < n:
            travel = stop.travel
            bwd[e] = -(travel if travel > MIN_GAP else MIN_GAP)
            if kind == "breakfast":
                up[e + 1] = DAY_START + MAX_IDLE  # up of the next start is set here first
            elif kind != "dinner" or stops[i + 1].kind != "hotel":
                fwd[e] = MAX_IDLE
    for k in range(m - 1):
        if fwd[k] + bwd[k] < 0:
            return False
    earliest = _chain_distances(down, up, bwd, fwd)  # the reversed network: minus the earliest
    if earliest is None:
        return False
    # the latest times pin only the stops before the first leg (and the network is feasible)
    latest = _chain_distances(up, down, fwd, bwd) if first_leg > 0 else None
    for i, stop in enumerate(stops):
        if i < first_leg:
            stop.start, stop.end = latest[2 * i], latest[2 * i + 1]
        else:
            stop.start, stop.end = -earliest[2 * i], -earliest[2 * i + 1]
    _stretch(stops, relaxed)
    return True


def _chain_distances(out: list[int], back: list[int], fwd: list[int],
                     bwd: list[int]) -> list[int] | None:  # fmt: skip
    """Shortest distances from midnight over edges midnight -> k (``out``), k -> k + 1
    (``fwd``) and k + 1 -> k (``bwd``); None when a path returns to midnight (``back``: edges
    k -> midnight) shorter than zero. Neighbouring pairs must hold no negative cycle."""
    m = len(out)
    if not m:
        return []
    ahead, behind = list(out), list(out)
    last = ahead[0]
    for k in range(1, m):
        step = last + fwd[k - 1]
        last = ahead[k] = step if step < ahead[k] else ahead[k]
    last = behind[m - 1]
    for k in range(m - 2, -1, -1):
        step = last + bwd[k]
        last = behind[k] = step if step < behind[k] else behind[k]
    dist = [b if b < a else a for a, b in zip(ahead, behind, strict=True)]
    for d, b in zip(dist, back, strict=True):
        if d + b < 0:
            return None
    return dist
