"""Timing one day of a plan: a sequence of stops (meals, visits, intercity legs, the hotel)
with time windows, durations, opening hours and travel times, solved as a simple temporal
network (difference constraints, Bellman-Ford). The rules are Table 8's: meals in their windows,
activities within 09:00-21:00, at least 30 minutes (and the travel time) between two stops, no
more than two idle hours, check-in after 18:00.
"""

from __future__ import annotations

from dataclasses import dataclass

MIN_GAP = 30
MAX_IDLE = 120
DAY_START, DAY_END = 9 * 60, 21 * 60
# preferred windows first, then the widest the rules allow: (start range), (duration range);
# the rules set no meal length, so the relaxed day allows a quick one (a travel day's lunch
# between a morning arrival and an afternoon train)
WINDOWS = {
    "breakfast": (((8 * 60, 9 * 60 + 30), (6 * 60, 10 * 60)), (30, 45)),
    "lunch": (((11 * 60 + 45, 13 * 60 + 15), (11 * 60, 14 * 60)), (60, 75)),
    "dinner": (((17 * 60 + 45, 19 * 60 + 30), (17 * 60, 20 * 60 + 30)), (60, 90)),
    "hotel": (((18 * 60, 22 * 60), (18 * 60, 23 * 60 + 30)), (0, 0)),
    "attraction": (((DAY_START, DAY_END - 60), (DAY_START, DAY_END - 60)), (60, 240)),
}
RELAXED_MEAL_MINUTES = {"breakfast": 20, "lunch": 30, "dinner": 30}


@dataclass
class Stop:
    """One thing of a day. ``hours`` are opening minutes (close may pass midnight); a leg has
    ``fixed`` (departure, arrival) minutes; ``travel`` is the minutes to reach the next stop."""

    kind: str  # breakfast, lunch, dinner, attraction, leg, hotel
    ref: object = None  # the POI row or leg the stop stands for
    hours: tuple[int, int] | None = None
    fixed: tuple[int, int] | None = None
    longest: int | None = None  # an attraction's longest sensible visit
    travel: int = 0
    start: int | None = None
    end: int | None = None


def _bounds(stop: Stop, relaxed: bool) -> tuple[tuple[int, int], tuple[int, int]]:
    if stop.fixed is not None:
        dep, arr = stop.fixed
        return (dep, dep), (arr - dep, arr - dep)
    windows, (dmin, dmax) = WINDOWS[stop.kind]
    lo, hi = windows[1 if relaxed else 0]
    if relaxed:
        dmin = RELAXED_MEAL_MINUTES.get(stop.kind, dmin)
    if stop.kind == "attraction" and stop.longest is not None:
        dmax = max(dmin, stop.longest)
    return (lo, hi), (dmin, dmax)


def solve_day(stops: list[Stop], relaxed: bool = False) -> bool:
    """Set ``start``/``end`` of every stop (earliest times, but latest before the day's first
    leg; visits stretched up to the next stop); False when the rules cannot all hold."""
    n = len(stops)
    edges: list[tuple[int, int, int]] = []  # (u, v, w): x_v - x_u <= w; node 0 is midnight
    s, e = (lambda i: 1 + 2 * i), (lambda i: 2 + 2 * i)
    for i, stop in enumerate(stops):
        (lo, hi), (dmin, dmax) = _bounds(stop, relaxed)
        edges += [(0, s(i), hi), (s(i), 0, -lo), (s(i), e(i), dmax), (e(i), s(i), -dmin)]
        if stop.hours is not None:
            open_, close = stop.hours
            edges += [(s(i), 0, -open_), (0, e(i), close)]
        if stop.kind in ("lunch", "dinner", "attraction"):
            edges.append((0, e(i), DAY_END))
        if i + 1 < n:
            gap = max(MIN_GAP, stop.travel)
            edges.append((s(i + 1), e(i), -gap))
            nxt = stops[i + 1]
            if stop.kind == "breakfast":
                edges.append((0, s(i + 1), DAY_START + MAX_IDLE))
            elif nxt.kind != "hotel" or stop.kind != "dinner":
                edges.append((e(i), s(i + 1), MAX_IDLE))
    earliest = _shortest(2 * n + 1, [(v, u, w) for u, v, w in edges])
    if earliest is None:
        return False
    latest = _shortest(2 * n + 1, edges)
    first_leg = next((i for i, x in enumerate(stops) if x.fixed is not None), -1)
    for i, stop in enumerate(stops):  # before the first leg as late as possible (pinned there)
        times = latest if i < first_leg else [-d for d in earliest]
        stop.start, stop.end = times[s(i)], times[e(i)]
    _stretch(stops, relaxed)
    return True


def _shortest(nodes: int, edges: list[tuple[int, int, int]]) -> list[int] | None:
    """Bellman-Ford distances from node 0 (None on a negative cycle: infeasible). On the
    constraint graph they are the latest times; on the reversed graph minus the earliest."""
    dist = [10**9] * nodes
    dist[0] = 0
    for _ in range(nodes):
        changed = False
        for u, v, w in edges:
            if dist[u] + w < dist[v]:
                dist[v] = dist[u] + w
                changed = True
        if not changed:
            return dist
    return None


def _stretch(stops: list[Stop], relaxed: bool) -> None:
    """Lengthen meals and visits up to the next stop (keeping the gap and opening hours)."""
    for i, stop in enumerate(stops[:-1]):
        if stop.fixed is not None or stop.kind == "hotel":
            continue
        _, (_, dmax) = _bounds(stop, relaxed)
        limit = stops[i + 1].start - max(MIN_GAP, stop.travel)
        if stop.hours is not None:
            limit = min(limit, stop.hours[1])
        if stop.kind in ("lunch", "dinner", "attraction"):
            limit = min(limit, DAY_END)
        stop.end = max(stop.end, min(limit, stop.start + dmax))


def hhmm(minutes: int) -> str:
    minutes %= 24 * 60
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def fallback_times(stops: list[Stop]) -> None:
    """Sequential times when the rules cannot all hold: each stop after the previous one."""
    clock = 8 * 60
    for stop in stops:
        if stop.fixed is not None:
            stop.start, stop.end = stop.fixed
        else:
            lo = stop.hours[0] if stop.hours else clock
            stop.start = max(clock, lo, DAY_START if stop.kind != "breakfast" else 0)
            length = {"breakfast": 30, "lunch": 60, "dinner": 60, "hotel": 0}.get(stop.kind, 90)
            stop.end = stop.start + length
        clock = stop.end + max(30, stop.travel)
