"""A literal, slow implementation of the paper's Algorithm 1, kept to check the fast solver.

It expands the enumerable constraints (parks, date ranges), resolves every candidate package
through the package resolver, keeps the plans that pass every constraint's checker, and sorts
the whole feasible set by utility. No SQL filter and no counting trick is shared with
``solver.py``; only the resolver, the checkers, the utility definitions and the reading of
the ground truth off a ranked set (``solver.ranked_ground_truth``) are.
"""

from __future__ import annotations

import itertools
import math
import sqlite3

from travelgym.suites.compass.facts import PlanFacts, flight_facts, hotel_facts, permit_facts
from travelgym.suites.compass.objectives import plan_key, plan_utility
from travelgym.suites.compass.packages import FlightPackage, HotelPackage, PermitPackage
from travelgym.suites.compass.ranking import Key
from travelgym.suites.compass.resolver import resolve_package
from travelgym.suites.compass.solver import ranked_ground_truth
from travelgym.suites.compass.tasks import GroundTruth, Task


def _component_ok(task: Task, plan: PlanFacts, component: str) -> bool:
    """Prune one component with the constraints about that component alone."""
    if not getattr(plan, component)["bookable"]:
        return False
    return all(c.check(plan) is None for c in task.constraints if c.component == component)


def enumerate_feasible(
    conn: sqlite3.Connection, task: Task
) -> list[tuple[tuple[float, float], dict]]:
    """Every feasible plan with its scored key, best first (equal keys by package IDs)."""
    n = task.travellers
    feasible = []
    for park_id in task.park.park_ids:
        configs = [r[0] for r in conn.execute(
            "SELECT c.config_id FROM room_configs c JOIN rooms r ON r.room_id = c.room_id"
            " JOIN hotels h ON h.hotel_id = r.hotel_id WHERE h.park_id = ? ORDER BY c.config_id",
            (park_id,))]  # fmt: skip
        drive = dict(
            conn.execute(
                "SELECT airport_code, drive_hours FROM park_airports WHERE park_id = ?", (park_id,)
            )
        )
        templates = [r[0] for r in conn.execute(
            "SELECT t.template_id FROM flight_templates t JOIN flights o"
            " ON o.flight_id = t.outbound_flight_id JOIN park_airports pa"
            " ON pa.airport_code = o.destination WHERE pa.park_id = ? ORDER BY t.template_id",
            (park_id,))] if task.level >= 2 else []  # fmt: skip
        permits = [
            r[0]
            for r in conn.execute(
                "SELECT permit_id FROM permits WHERE park_id = ? ORDER BY permit_id", (park_id,)
            )
        ]
        for start, end in task.dates.date_pairs():
            hotels = []
            for config_id in configs:
                facts = hotel_facts(
                    resolve_package(conn, HotelPackage(config_id, start, end, task.rooms))
                )
                if _component_ok(task, PlanFacts(facts, None, None, n), "hotel"):
                    hotels.append(facts)
            flights: list = [None]
            if task.level >= 2:
                flights = []
                for tid in templates:
                    facts = flight_facts(
                        resolve_package(conn, FlightPackage(tid, start, end)), drive
                    )
                    if _component_ok(task, PlanFacts(None, facts, None, n), "flight"):
                        flights.append(facts)
            permit_list: list = [None]
            if task.level == 3:
                permit_list = []
                for pid, day in itertools.product(permits, range(start, end + 1)):
                    facts = permit_facts(
                        resolve_package(conn, PermitPackage(pid, day, task.permit.days))
                    )
                    if facts["bookable"]:
                        permit_list.append(facts)
            for h, f, p in itertools.product(hotels, flights, permit_list):
                plan = PlanFacts(h, f, p, n)
                if all(c.check(plan) is None for c in task.constraints):
                    ids = {"hotel": h["package_id"], "flight": f and f["package_id"],
                           "permit": p and p["package_id"]}  # fmt: skip
                    feasible.append((plan_key(task.objective, plan), ids))
    feasible.sort(
        key=lambda item: (-item[0][0], -item[0][1], tuple(v or "" for v in item[1].values()))
    )
    return feasible


def reference_solve(conn: sqlite3.Connection, task: Task) -> GroundTruth:
    """Algorithm 1: the exact ground truth by full enumeration."""
    feasible = enumerate_feasible(conn, task)
    if not feasible:
        return GroundTruth(task_id=task.task_id, feasible_count=0, optimum=None, optimum_value=None,
                           thresholds={}, optimal_plan={})  # fmt: skip
    return ranked_ground_truth(task, _SortedFeasible(feasible), len(feasible))


class _SortedFeasible:
    """``enumerate_feasible``'s list, best first, as a ``solver.RankedSet``."""

    def __init__(self, feasible: list[tuple[Key, dict]]) -> None:
        self.feasible = feasible

    def kth_best(self, k: int) -> Key:
        return self.feasible[k - 1][0]

    def count_at_least(self, key: Key) -> int:
        return sum(other >= key for other, _ in self.feasible)

    def find_plan(self, key: Key) -> dict:
        return next(ids for other, ids in self.feasible if other == key)

    def distinct_utilities(self) -> int:
        return len({key[0] for key, _ in self.feasible})


def plan_utility_of(conn: sqlite3.Connection, task: Task, ids: dict) -> float:
    """Utility of a plan given by IDs (through the resolver), for cross-checks."""
    from travelgym.suites.compass.scoring import resolve_plan

    plan, _ = resolve_plan(conn, task, ids)
    return float(plan_utility(task.objective, plan)) if plan.hotel else -math.inf
