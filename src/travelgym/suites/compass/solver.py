"""The exact ground-truth solver.

The feasible set is {(hotel, flight, permit)} per (park, check-in, check-out) group: hotels come
from one SQL query over every allowed stay, flights from one query joined on the same dates and
the park's airports, permits from one query; every constraint contributes its SQL filter. The
product of components within a group is never materialised: utilities and costs are additive,
so sizes, ranks and top-A % thresholds come from sorted arrays and ``searchsorted`` counting
under the budget (see ``docs/compass/ground_truth.md``).
"""

from __future__ import annotations

import math
import sqlite3
from operator import itemgetter
from typing import Protocol

import numpy as np

from travelgym.suites.compass.constraints import TaskSpec
from travelgym.suites.compass.facts import HOTEL_FLAGS, ROOM_FLAGS
from travelgym.suites.compass.packages import (
    day_to_date,
)
from travelgym.suites.compass.ranking import (
    Components,
    Group,
    Key,
    Ranking,
    rank_position,
)
from travelgym.suites.compass.tasks import GroundTruth, Task

TOP_PERCENTS = (5, 10, 20)
NO_BUDGET = 1 << 60


Columns = dict[str, np.ndarray]


def _columns(names: list[str], rows: list[tuple]) -> Columns:
    if not rows:  # object dtype so that comparisons with strings still work on no rows
        return {n: np.array([], dtype=object) for n in names}
    return {n: np.array(col) for n, col in zip(names, zip(*rows, strict=True), strict=True)}


def _where(task: Task, spec: TaskSpec, method: str) -> tuple[str, list]:
    clauses, params = [], []
    for constraint in task.constraints:
        clause = getattr(constraint, method)(spec)
        if clause:
            clauses.append(f"({clause[0]})")
            params.extend(clause[1])
    return (" AND ".join(clauses) or "1"), params


def _stays_values(pairs: list[tuple[int, int]]) -> tuple[str, list]:
    rows, params = [], []
    for s, e in pairs:
        rows.append("(?, ?, ?, ?, ?)")
        params += [s, e, e - s, day_to_date(s).isoformat(), day_to_date(e).isoformat()]
    return ", ".join(rows), params


_HOTEL_COLUMNS = ", ".join(
    ["h.park_id", "h.hotel_id", "h.star_rating", "h.review_score", "h.review_count", "h.distance_km"]
    + [f"h.{f}" for f in HOTEL_FLAGS] + ["r.bed_type", "r.max_occupancy"] + [f"r.{f}" for f in ROOM_FLAGS]
)  # fmt: skip


def query_hotels(conn: sqlite3.Connection, task: Task, spec: TaskSpec) -> Columns:
    """Every bookable hotel package that passes the hotel-side constraints, as fact columns."""
    values, vparams = _stays_values(task.dates.date_pairs())
    where, wparams = _where(task, spec, "hotel_where")
    having, hparams = _where(task, spec, "stay_having")
    # Aggregate the offers per (configuration, stay) first, then attach the static attributes:
    # grouping narrow rows is several times faster than grouping the wide joined rows.
    sql = f"""
        WITH stays(s, e, nights, s_date, e_date) AS (VALUES {values}),
        agg AS (
            SELECT c.config_id, stays.s, stays.e, SUM(o.price) AS total, MAX(o.price) AS high,
                   MAX(o.cancellation_policy) AS cancel, MAX(o.prepayment) AS prepay,
                   MAX(o.meal_plan) AS meal
              FROM hotels h
              JOIN rooms r ON r.hotel_id = h.hotel_id
              JOIN room_configs c ON c.room_id = r.room_id
              JOIN stays
              JOIN offers o ON o.config_id = c.config_id AND o.night >= stays.s_date
                   AND o.night < stays.e_date
             WHERE {where}
             GROUP BY c.config_id, stays.s, stays.e
            HAVING COUNT(*) = stays.nights AND MIN(o.available) >= ? AND {having})
        SELECT {_HOTEL_COLUMNS}, agg.config_id, agg.s, agg.e,
               CAST(ROUND(agg.total * ? * 100) AS INTEGER), CAST(ROUND(agg.high * 100) AS INTEGER),
               agg.cancel = 'free_cancellation', agg.prepay = 'no_prepayment',
               agg.meal != 'room_only'
          FROM agg
          JOIN room_configs c ON c.config_id = agg.config_id
          JOIN rooms r ON r.room_id = c.room_id
          JOIN hotels h ON h.hotel_id = r.hotel_id
         ORDER BY agg.s, agg.e, agg.config_id"""
    names = [c.split(".")[1] for c in _HOTEL_COLUMNS.split(", ")]
    names += ["config_id", "start", "end", "cost", "max_night", "free_cancellation",
              "no_prepayment", "breakfast_included"]  # fmt: skip
    cur = conn.cursor()
    cur.row_factory = None
    rows = cur.execute(sql, [*vparams, *wparams, spec.rooms, *hparams, spec.rooms]).fetchall()
    cols = _columns(names, rows)
    for flag in (
        *HOTEL_FLAGS,
        *ROOM_FLAGS,
        "free_cancellation",
        "no_prepayment",
        "breakfast_included",
    ):
        cols[flag] = cols[flag].astype(bool)
    cols["rooms"] = np.full(len(rows), spec.rooms)
    return cols


def query_flights(conn: sqlite3.Connection, task: Task, spec: TaskSpec) -> Columns:
    """Every bookable round trip on an allowed stay's dates into the park's airports."""
    values, vparams = _stays_values(task.dates.date_pairs())
    where, wparams = _where(task, spec, "flight_where")
    sql = f"""
        WITH stays(s, e, nights, s_date, e_date) AS (VALUES {values})
        SELECT t.template_id, t.booking_class, pa.park_id, pa.drive_hours, stays.s, stays.e,
               o.origin, o.destination, o.airline,
               CAST(ROUND(ROUND(po.price + pr.price, 2) * 100) AS INTEGER), MIN(po.seats, pr.seats),
               o.stops + r.stops, o.duration_min + r.duration_min,
               MAX(o.duration_min, r.duration_min), o.has_wifi AND r.has_wifi,
               o.pet_policy = 'in_cabin' AND r.pet_policy = 'in_cabin',
               o.departure_time,
               printf('%02d', CAST(substr(o.arrival_time, 1, 2) AS INTEGER) + 24 * o.arrival_day_offset)
                 || substr(o.arrival_time, 3),
               r.departure_time,
               printf('%02d', CAST(substr(r.arrival_time, 1, 2) AS INTEGER) + 24 * r.arrival_day_offset)
                 || substr(r.arrival_time, 3)
          FROM flight_templates t
          JOIN flights o ON o.flight_id = t.outbound_flight_id
          JOIN flights r ON r.flight_id = t.return_flight_id
          JOIN park_airports pa ON pa.airport_code = o.destination
          JOIN stays
          JOIN flight_prices po ON po.flight_id = o.flight_id
               AND po.booking_class = t.booking_class AND po.date = stays.s_date
          JOIN flight_prices pr ON pr.flight_id = r.flight_id
               AND pr.booking_class = t.booking_class AND pr.date = stays.e_date
         WHERE {where}
         ORDER BY stays.s, stays.e, t.template_id"""
    names = ["template_id", "booking_class", "park_id", "drive_hours", "start", "end", "origin",
             "destination", "airline", "per_pax", "seats", "stops", "total_duration",
             "max_leg_duration", "has_wifi", "pet_in_cabin", "out_departure", "out_arrival",
             "ret_departure", "ret_arrival"]  # fmt: skip
    cur = conn.cursor()
    cur.row_factory = None
    cols = _columns(names, cur.execute(sql, [*vparams, *wparams]).fetchall())
    cols["direct"] = cols["stops"] == 0
    for flag in ("has_wifi", "pet_in_cabin"):
        cols[flag] = cols[flag].astype(bool)
    return cols


def query_permits(conn: sqlite3.Connection, task: Task, spec: TaskSpec) -> Columns:
    """Every bookable permit start date for the required permit(s) and duration."""
    where, params = _where(task, spec, "permit_where")
    sql = f"""SELECT p.permit_id, p.park_id, p.permit_type, CAST(ROUND(p.price_per_person * 100) AS INTEGER),
                     p.max_party_size, CAST(substr(av.date, 9, 2) AS INTEGER), av.slots_remaining
                FROM permits p JOIN permit_availability av ON av.permit_id = p.permit_id
               WHERE av.slots_remaining > 0 AND {where} ORDER BY av.date, p.permit_id"""
    names = [
        "permit_id",
        "park_id",
        "permit_type",
        "per_person",
        "max_party_size",
        "start",
        "slots",
    ]
    cols = _columns(names, conn.execute(sql, params).fetchall())
    cols["days"] = np.full(len(cols["start"]), task.permit.days)
    return cols


def _keys(cols: Columns) -> list[tuple]:
    return list(
        zip(cols["park_id"].tolist(), cols["start"].tolist(), cols["end"].tolist(), strict=True)
    )


def _as_array(value, n: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(value, dtype=np.float64), (n,)).copy()


def build_components(conn: sqlite3.Connection, task: Task) -> Components:
    """The feasible components of ``task`` grouped by (park, check-in, check-out)."""
    return group_components(task, *component_columns(conn, task))


def component_columns(
    conn: sqlite3.Connection, task: Task
) -> tuple[Columns, Columns | None, Columns | None]:
    """The hotel, flight and permit columns of ``task`` (flights from level 2, permits at
    level 3), each row satisfying its own component's constraints."""
    spec = TaskSpec(task.travellers, task.rooms)
    hotels = query_hotels(conn, task, spec)
    flights = query_flights(conn, task, spec) if task.level >= 2 else None
    permits = query_permits(conn, task, spec) if task.level == 3 else None
    return hotels, flights, permits


def facts_to_columns(rows: list[dict], names: list[str]) -> Columns:
    """Columns from a list of facts dictionaries (agents build facts from tool outputs)."""
    if len(names) == 1:
        return _columns(names, [(r[names[0]],) for r in rows])
    return _columns(names, list(map(itemgetter(*names), rows)))


def group_components(
    task: Task, hotels: Columns, flights: Columns | None, permits: Columns | None
) -> Components:
    """Group component columns that each satisfy their own constraints by (park, in, out)."""
    n, obj = task.travellers, task.objective
    rows_by_key: dict[tuple, list[int]] = {}
    for i, key in enumerate(_keys(hotels)):
        rows_by_key.setdefault(key, []).append(i)
    flights_by_key: dict[tuple, list[int]] = {}
    if flights is not None:
        for i, key in enumerate(_keys(flights)):
            flights_by_key.setdefault(key, []).append(i)
    h_cost_all = hotels["cost"].astype(np.int64)
    h_util_all = _as_array(obj.hotel_utility(hotels, n), len(h_cost_all))
    secondary = obj.secondary()
    # Only a cost objective's tie-break lives on the hotel; every other tie-break is the cost.
    by_cost = getattr(obj, "metric", None) == "total_cost"
    h_sec_all = (
        _as_array(secondary.hotel_utility(hotels, n), len(h_cost_all))
        if secondary is not None and by_cost
        else np.zeros(len(h_cost_all))
    )
    if flights is not None:
        f_cost_all = flights["per_pax"].astype(np.int64) * n
        f_util_all = _as_array(obj.flight_utility(flights, n), len(f_cost_all))
    if permits is not None:
        p_cost_all = permits["per_person"].astype(np.int64) * n
        p_util_all = _as_array(obj.permit_utility(permits, n), len(p_cost_all))
    groups = []
    for key in sorted(rows_by_key):
        hotel_rows = np.array(rows_by_key[key])
        flight_rows = np.array([-1])
        permit_rows = np.array([-1])
        if flights is not None:
            flight_rows = np.array(flights_by_key.get(key, []), dtype=np.int64)
            permit_rows = np.full(len(flight_rows), -1)
        if permits is not None:
            _, s, e = key
            fits = [i for i in range(len(permits["start"])) if permits["park_id"][i] == key[0]
                    and task.permit.fits_stay(int(permits["start"][i]), s, e)]  # fmt: skip
            # the product flights x permits, as paired row indices
            flight_rows, permit_rows = (
                np.repeat(flight_rows, len(fits)),
                np.tile(np.array(fits, dtype=np.int64), len(flight_rows)),
            )
        if len(hotel_rows) == 0 or len(flight_rows) == 0:
            continue
        g = Group(key, hotel_rows, flight_rows, permit_rows)
        g.h_cost, g.h_util = h_cost_all[hotel_rows], h_util_all[hotel_rows]
        g.h_sec = h_sec_all[hotel_rows]
        g.c_cost = np.zeros(len(flight_rows), dtype=np.int64)
        g.c_util = np.zeros(len(flight_rows), dtype=np.float64)
        if flights is not None:
            g.c_cost += f_cost_all[flight_rows]
            g.c_util += f_util_all[flight_rows]
        if permits is not None:
            g.c_cost += p_cost_all[permit_rows]
            g.c_util += p_util_all[permit_rows]
        groups.append(g)
    return Components(hotels, flights, permits, groups)


def solve(conn: sqlite3.Connection, task: Task) -> GroundTruth:
    """Exact ground truth of one task on its scored key."""
    return solve_ranked(task, Ranking(task, build_components(conn, task)))


def solve_ranked(task: Task, ranking: Ranking) -> GroundTruth:
    """The ground truth of ``task`` from its ``Ranking`` (which the caller may reuse)."""
    size = ranking.size
    if size == 0:
        return GroundTruth(
            task_id=task.task_id,
            feasible_count=0,
            optimum=math.nan,
            optimum_value=math.nan,
            thresholds={},
            optimal_plan={},
        )
    return ranked_ground_truth(task, ranking, size)


class RankedSet(Protocol):
    """A task's feasible set ranked on its scored key (``ranking.Ranking`` and the reference
    solver's sorted list)."""

    def kth_best(self, k: int) -> Key: ...

    def count_at_least(self, key: Key) -> int: ...

    def find_plan(self, key: Key) -> dict[str, str | None]: ...

    def distinct_utilities(self) -> int: ...


def ranked_ground_truth(task: Task, ranked: RankedSet, size: int) -> GroundTruth:
    """The ground truth of a task with ``size`` (at least one) feasible plans, ``ranked``: the
    optimum, the top-A % thresholds, the plans each credits and the number of distinct
    utilities."""
    best = ranked.kth_best(1)
    thresholds = {str(a): ranked.kth_best(rank_position(a, size)) for a in TOP_PERCENTS}
    metric_value = task.objective.metric_value
    return GroundTruth(
        task_id=task.task_id,
        feasible_count=size,
        optimum=best[0],
        optimum_value=metric_value(best[0]),
        optimum_key=best,
        thresholds=thresholds,
        threshold_values={a: metric_value(key[0]) for a, key in thresholds.items()},
        credited={a: ranked.count_at_least(key) for a, key in thresholds.items()},
        optimal_count=ranked.count_at_least(best),
        distinct_values=ranked.distinct_utilities(),
        optimal_plan=ranked.find_plan(best),
    )
