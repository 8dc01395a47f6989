"""Counting and ranking a task's feasible set on its scored key, without materialising it.

The scored key of a plan is ``(utility, tie-break utility)``, compared lexicographically
(``objectives.plan_key``). Tasks generated since task-file version 3 state no tie-break: the
second part is 0 and plans are ranked on the utility f alone, plans equal on f sharing a rank.
Version-2 task files state a tie-break; two shapes of it are counted exactly:

- a cost objective, tie-broken by a hotel metric: for each hotel, the completions (flight,
  permit) under a cost cap are one ``searchsorted`` in the group's sorted completion costs, and
  the plans of exactly the cut-off cost are the difference of two;
- any other objective, tie-broken by the total cost: the side of a group with fewer distinct
  utilities is split into per-utility sorted cost arrays; plans strictly better on the
  objective count under the budget, plans equal on it count under the cost of the cut-off.

Without a tie-break the second shape's counting serves every non-cost objective (plans equal
on f count under the budget) and the first's every cost objective. See
``docs/compass/ground_truth.md`` for the definitions and the proof sketch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from travelgym.suites.compass.facts import cents
from travelgym.suites.compass.packages import FlightPackage, HotelPackage, PermitPackage

NO_BUDGET = 1 << 60
Key = tuple[float, float]
WORST: Key = (-math.inf, -math.inf)
Columns = dict[str, np.ndarray]
_PAIR_BLOCK = 1 << 18  # hotel x completion pairs compared at once by ``find_plan``


@dataclass
class Group:
    """One (park, check-in, check-out) group: hotels x completions (flight, permit pairs).

    Hotels are row indices into the hotel columns; a completion is a (flight row, permit row)
    pair, -1 where the level has no such component."""

    key: tuple[str, int, int]
    hotel_rows: np.ndarray
    flight_rows: np.ndarray
    permit_rows: np.ndarray
    h_cost: np.ndarray = field(init=False)
    h_util: np.ndarray = field(init=False)
    h_sec: np.ndarray = field(init=False)  # the hotel's tie-break utility (cost objectives)
    c_cost: np.ndarray = field(init=False)
    c_util: np.ndarray = field(init=False)


@dataclass
class Components:
    """The component columns of one task and its (park, check-in, check-out) groups."""

    hotels: Columns
    flights: Columns | None
    permits: Columns | None
    groups: list[Group]


def rank_position(percent: int, size: int) -> int:
    """Position (1-based, best first) whose key is the top-``percent`` % threshold."""
    return max(1, math.ceil(percent / 100 * size))


def hotel_package_id(cols: Columns, i: int) -> str:
    return HotelPackage(
        int(cols["config_id"][i]), int(cols["start"][i]), int(cols["end"][i]), int(cols["rooms"][i])
    ).id


def flight_package_id(cols: Columns, i: int) -> str:
    return FlightPackage(int(cols["template_id"][i]), int(cols["start"][i]), int(cols["end"][i])).id


def permit_package_id(cols: Columns, i: int) -> str:
    return PermitPackage(int(cols["permit_id"][i]), int(cols["start"][i]), int(cols["days"][i])).id


def _cost_cap(secondary_utility: float) -> int:
    """The cost (cents) whose negation is this tie-break utility."""
    return int(round(-secondary_utility))


class Ranking:
    """Counts and ranks the feasible set of one task on its scored key."""

    def __init__(self, task, components: Components) -> None:
        self.task = task
        self.components = components
        self.groups = components.groups
        self.budget = cents(task.budget.max_total) if task.budget else NO_BUDGET
        objective = task.objective
        self.by_cost = getattr(objective, "metric", None) == "total_cost"
        self.has_tie_break = objective.tie_break is not None
        self._parts = [self._prepare(g) for g in self.groups]

    def _prepare(self, g: Group):
        if self.by_cost:
            order = np.argsort(g.c_cost, kind="stable")
            return g.c_cost[order]
        h_distinct, c_distinct = np.unique(g.h_util), np.unique(g.c_util)
        if len(c_distinct) <= len(h_distinct):
            small = [(u, np.sort(g.c_cost[g.c_util == u])) for u in c_distinct]
            return small, g.h_cost, g.h_util
        small = [(u, np.sort(g.h_cost[g.h_util == u])) for u in h_distinct]
        return small, g.c_cost, g.c_util

    # ------------------------------------------------------------------------------ counting

    def _count(self, key: Key, strict: bool) -> int:
        """Feasible plans whose key is >= ``key`` (> when ``strict``)."""
        primary, secondary = key
        if self.by_cost:
            return self._count_by_cost(primary, secondary, strict)
        return self._count_by_objective(primary, secondary, strict)

    def _count_by_cost(self, primary: float, secondary: float, strict: bool) -> int:
        if primary == -math.inf:
            return sum(
                int(np.searchsorted(c, self.budget - g.h_cost, side="right").sum())
                for g, c in zip(self.groups, self._parts, strict=True)
            )
        cap = _cost_cap(primary)
        total = 0
        for g, c in zip(self.groups, self._parts, strict=True):
            total += int(np.searchsorted(c, min(self.budget, cap - 1) - g.h_cost, "right").sum())
            if cap > self.budget:
                continue
            tied = g.h_sec > secondary if strict else g.h_sec >= secondary
            if tied.any():
                target = cap - g.h_cost[tied]
                total += int(
                    (
                        np.searchsorted(c, target, side="right")
                        - np.searchsorted(c, target, side="left")
                    ).sum()
                )
        return total

    def _equal_cap(self, secondary: float, strict: bool) -> int:
        """The cost cap of plans equal on the objective to be counted (-1: none)."""
        if not self.has_tie_break:
            return self.budget if (secondary < 0.0 if strict else secondary <= 0.0) else -1
        if secondary == -math.inf:
            return self.budget
        if secondary == math.inf:
            return -1
        cap = _cost_cap(secondary)
        return min(self.budget, cap - 1 if strict else cap)

    def _count_by_objective(self, primary: float, secondary: float, strict: bool) -> int:
        equal_cap = self._equal_cap(secondary, strict)
        total = 0
        for small, other_cost, other_util in self._parts:
            for u, costs in small:
                combined = u + other_util
                better = combined > primary
                if better.any():
                    total += int(
                        np.searchsorted(costs, self.budget - other_cost[better], "right").sum()
                    )
                if equal_cap >= 0:
                    equal = combined == primary
                    if equal.any():
                        total += int(
                            np.searchsorted(costs, equal_cap - other_cost[equal], "right").sum()
                        )
        return total

    def count_at_least(self, key: Key) -> int:
        """Feasible plans whose key is at least ``key`` (ties count)."""
        return self._count(tuple(key), strict=False)

    def count_better(self, key: Key) -> int:
        """Feasible plans strictly better than ``key``."""
        return self._count(tuple(key), strict=True)

    @property
    def size(self) -> int:
        return self._count(WORST, strict=False)

    def distinct_utilities(self) -> int:
        """How many distinct utilities f(x) the feasible plans take (the tie-break ignored).

        A plan is a hotel and a completion of one group, feasible when their costs fit the
        budget, so a utility is taken when some pair of that utility fits: per value of the
        smaller side, its cheapest entry decides which entries of the other side it pairs with.
        """
        values: list[np.ndarray] = []
        if self.by_cost:  # f = -(total cost): the distinct totals under the budget
            for g, c in zip(self.groups, self._parts, strict=True):
                completions = np.unique(c)
                hotels = np.unique(g.h_cost)
                step = max(1, _PAIR_BLOCK // max(1, len(completions)))
                for lo in range(0, len(hotels), step):
                    totals = hotels[lo : lo + step, None] + completions[None, :]
                    values.append(np.unique(totals[totals <= self.budget]))
        else:
            for small, other_cost, other_util in self._parts:
                for u, costs in small:
                    fits = other_cost <= self.budget - costs[0]
                    values.append(np.unique(u + other_util[fits]))
        return len(np.unique(np.concatenate(values))) if values else 0

    # ------------------------------------------------------------------------------- ranking

    def kth_best(self, k: int) -> Key:
        """The key of the k-th best feasible plan (1-based)."""
        if self.by_cost:
            return self._kth_by_cost(k)
        return self._kth_by_objective(k)

    def _smallest_cap(self, k: int, count_under) -> int:
        """The smallest cost cap C with ``count_under(C) >= k``."""
        lo, hi = 0, self.budget if self.budget != NO_BUDGET else self._max_cost()
        while lo < hi:
            mid = (lo + hi) // 2
            if count_under(mid) >= k:
                hi = mid
            else:
                lo = mid + 1
        return lo

    def _kth_by_cost(self, k: int) -> Key:
        cap = self._smallest_cap(k, lambda c: self._count((-float(c), -math.inf), False))
        if not self.has_tie_break:
            return (-float(cap), 0.0)
        below = self._count((-float(cap - 1), -math.inf), False) if cap > 0 else 0
        # the tie-break values of the plans that cost exactly ``cap``, best first
        tied: dict[float, int] = {}
        for g, c in zip(self.groups, self._parts, strict=True):
            target = cap - g.h_cost
            counts = np.searchsorted(c, target, "right") - np.searchsorted(c, target, "left")
            for value, n in zip(
                g.h_sec[counts > 0].tolist(), counts[counts > 0].tolist(), strict=True
            ):
                tied[value] = tied.get(value, 0) + n
        running = below
        for value in sorted(tied, reverse=True):
            running += tied[value]
            if running >= k:
                return (-float(cap), float(value))
        raise AssertionError("the k-th plan must cost the cap")  # pragma: no cover

    def _kth_by_objective(self, k: int) -> Key:
        candidates = np.unique(np.concatenate([
            (u + np.unique(other_util)) for small, _, other_util in self._parts for u, _ in small
        ]))  # fmt: skip
        lo, hi = 0, len(candidates) - 1  # largest candidate t with count(>= t) >= k
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._count((float(candidates[mid]), -math.inf), False) >= k:
                lo = mid
            else:
                hi = mid - 1
        primary = float(candidates[lo])
        if not self.has_tie_break:
            return (primary, 0.0)
        cap = self._smallest_cap(k, lambda c: self._count((primary, -float(c)), False))
        return (primary, -float(cap))

    def _max_cost(self) -> int:
        return int(max(g.h_cost.max() + g.c_cost.max() for g in self.groups))

    def _pair_keys(self, g: Group, rows: slice) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For hotels ``rows`` of ``g`` (one row each) with each completion of the group (one
        column each): whether the pair is under the budget, and its primary and secondary key."""
        h_cost = g.h_cost[rows][:, None]
        cost = h_cost + g.c_cost[None, :]
        under = g.c_cost[None, :] <= self.budget - h_cost
        if self.by_cost:
            return (
                under,
                -cost.astype(np.float64),
                np.broadcast_to(g.h_sec[rows][:, None], cost.shape),
            )
        secondary = -cost.astype(np.float64) if self.has_tie_break else np.zeros(cost.shape)
        return under, g.h_util[rows][:, None] + g.c_util[None, :], secondary

    def find_plan(self, key: Key) -> dict[str, str | None]:
        """A feasible plan with exactly this key (the first in group/package order)."""
        comp = self.components
        for g in self.groups:
            # hotels x completions at once, in blocks of hotels that keep the arrays small
            step = max(1, _PAIR_BLOCK // max(1, len(g.c_cost)))
            for lo in range(0, len(g.hotel_rows), step):
                under, primary, secondary = self._pair_keys(g, slice(lo, lo + step))
                ok = under & (primary == key[0]) & (secondary == key[1])
                hit = np.flatnonzero(ok.any(axis=1))
                if len(hit):
                    i, j = lo + int(hit[0]), int(np.flatnonzero(ok[hit[0]])[0])
                    f, p = int(g.flight_rows[j]), int(g.permit_rows[j])
                    return {
                        "hotel": hotel_package_id(comp.hotels, int(g.hotel_rows[i])),
                        "flight": flight_package_id(comp.flights, f) if f >= 0 else None,
                        "permit": permit_package_id(comp.permits, p) if p >= 0 else None,
                    }
        raise LookupError("no feasible plan with that key")
