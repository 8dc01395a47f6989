"""Seeded generator of the 281 COMPASS tasks with the paper's distribution (Sections 3.2, C.2).

Each task is drawn, solved exactly on its utility f alone (no tie-break: the paper's Section
3.4), and kept only if its feasible set has at least ``MIN_FEASIBLE`` plans (so the top 5 % is a
real target), f takes at least ``MIN_DISTINCT`` distinct values over it, and OR-A % credits at
most ``credit_bound(A, |X_feas|)`` plans for every A (ties on f do not inflate it). A rejected
draw is redrawn whole (park, objective, constraints), so a metric that cannot reach enough
distinct values in a park is replaced by another draw. The generator runs on any database seed:
each seed gets its own deterministic task set with the same slots.
"""

from __future__ import annotations

import collections
import datetime as dt
import math
import os
import sqlite3
import zlib
from collections.abc import Callable

import numpy as np

from travelgym.suites.compass import constraints as C
from travelgym.suites.compass.objectives import (
    FLIGHT_FEATURES,
    HOTEL_FEATURES,
    FeatureCount,
    SingleMetric,
)
from travelgym.suites.compass.packages import day_to_date
from travelgym.suites.compass.personas import sample_persona
from travelgym.suites.compass.reference import DEPARTURE_CITIES, PARKS, nearest_park, park_by_id
from travelgym.suites.compass.solver import (
    TOP_PERCENTS,
    Ranking,
    component_columns,
    group_components,
    solve_ranked,
)
from travelgym.suites.compass.stories import write_story
from travelgym.suites.compass.tasks import Revision, Task

TASK_GENERATOR_VERSION = "3.0.0"
DEFAULT_TASK_SEED = 2025
MIN_FEASIBLE = 20
MIN_DISTINCT = 5  # distinct values of f over X_feas: fewer and OR-A % is a lottery of ties
METRIC_ATTEMPTS = 50  # draws of one metric in a single-metric slot before the next is tried
FEATURE_ATTEMPTS = 400  # draws of one wish-list size in a feature-count slot (a few % pass)
# (level, objective type) -> number of tasks: Level I 142, II 69, III 70; single 154, feature 127
SLOTS = {(1, "single_metric"): 78, (1, "feature_count"): 64, (2, "single_metric"): 38,
         (2, "feature_count"): 31, (3, "single_metric"): 38, (3, "feature_count"): 32}  # fmt: skip
METRICS = {
    1: (["total_cost", "review_score", "distance", "review_count"], [0.5, 0.2, 0.15, 0.15]),
    2: (["total_cost", "airport_drive", "flight_duration", "review_score", "distance"],
        [0.5, 0.15, 0.15, 0.1, 0.1]),
}  # fmt: skip
FEATURE_COUNTS = ([6, 7, 8, 9, 10], [0.1, 0.12, 0.45, 0.08, 0.25])
EXTRA_COUNTS = {1: ([1, 2, 3, 4], [0.15, 0.35, 0.35, 0.15]), 2: ([0, 1, 2], [0.3, 0.45, 0.25]),
                3: ([0, 1], [0.55, 0.45])}  # fmt: skip
REVISION_SHARE = 0.25  # tasks where the user revises one constraint mid-conversation (Sec. 3.1)
RELAX_SHARE = 0.5  # revisions whose first statement is tighter than the final constraint
TWO_PARK_SHARE = 0.12  # Level I-II tasks whose user would take either of two nearby parks


def credit_bound(percent: int, size: int) -> float:
    """The most plans OR-``percent`` % may credit on a task with ``size`` feasible plans."""
    return max(2.0, 2 * percent / 100 * size)


def within_credit_bound(truth) -> bool:
    """Does the ground truth credit at most ``credit_bound`` plans for every A?"""
    return all(
        truth.credited[str(a)] <= credit_bound(a, truth.feasible_count) for a in TOP_PERCENTS
    )


def park_name(park_id: str) -> str:
    return park_by_id(park_id).name


def _rng(seed: int, *parts: object) -> np.random.Generator:
    return np.random.default_rng([seed, *(zlib.crc32(str(p).encode()) for p in parts)])


def _pick(rng: np.random.Generator, options, weights=None):
    return options[int(rng.choice(len(options), p=weights))]


def _dates(rng: np.random.Generator, level: int) -> C.DateConstraint:
    kind = "window" if level == 3 else _pick(rng, ["exact", "weekend", "window"], [0.4, 0.25, 0.35])
    if kind == "weekend":
        return C.WeekendStay()
    if kind == "exact":
        start = int(rng.integers(1, 28))
        return C.StayDates(
            check_in=day_to_date(start), check_out=day_to_date(start + int(rng.integers(2, 5)))
        )
    nights = int(rng.integers(2, 4))
    span = int(rng.integers(nights + 3, nights + 9))
    start = int(rng.integers(1, 32 - span))
    longest = nights + (1 if rng.random() < 0.3 else 0)
    return C.DateWindow(
        earliest_check_in=day_to_date(start),
        latest_check_out=day_to_date(start + span),
        min_nights=nights,
        max_nights=longest,
    )


def _extra_pool(
    rng: np.random.Generator, conn: sqlite3.Connection, park_id: str, level: int
) -> list:
    mean = conn.execute(
        "SELECT AVG(price) FROM offers JOIN room_configs USING (config_id) JOIN rooms USING (room_id)"
        " JOIN hotels USING (hotel_id) WHERE park_id = ?", (park_id,)).fetchone()[0]  # fmt: skip
    pool = [
        C.MinStarRating(value=float(_pick(rng, [2.0, 3.0]))),
        C.MinReviewScore(value=float(_pick(rng, [6.5, 7.0, 7.5, 8.0]))),
        C.MaxDistance(value=float(_pick(rng, [15.0, 20.0, 30.0, 40.0]))),
        C.HotelAmenity(amenity=_pick(rng, ["has_parking", "has_wifi", "is_pet_friendly", "has_pool",
                                           "has_restaurant", "is_accessible", "has_laundry"])),
        C.RoomFeature(feature=_pick(rng, ["has_air_conditioning", "has_private_bathroom",
                                          "has_coffee_maker", "has_kitchenette"])),
        C.BedType(bed_type=_pick(rng, ["king", "queen"])),
        C.RatePolicy(policy=_pick(rng, ["free_cancellation", "no_prepayment", "breakfast_included"])),
        C.MaxNightlyPrice(amount=float(round(mean * rng.uniform(1.0, 1.6), -1))),
    ]  # fmt: skip
    if level >= 2:
        pool += [
            C.DirectFlights(),
            C.BookingClass(booking_class="economy"),
            C.FlightTimeWindow(leg="outbound", event="departure", earliest="06:00",
                               latest=_pick(rng, ["14:00", "16:00", "18:00"])),
            C.MaxFlightDuration(minutes=int(_pick(rng, [360, 420, 480, 600]))),
            C.MaxAirportDrive(hours=float(_pick(rng, [2.0, 3.0, 4.0]))),
        ]  # fmt: skip
    return pool


def _objective(
    rng: np.random.Generator, level: int, otype: str, hard: list, choice: str | int | None = None
) -> SingleMetric | FeatureCount:
    """The objective: ``choice`` is the metric of a single metric or the wish-list size of a
    feature count (drawn with the generator's weights when None)."""
    if otype == "single_metric":
        return SingleMetric(metric=choice or _pick(rng, *METRICS[min(level, 2)]))
    implied = _implied_features(hard)
    pool = [f for f in HOTEL_FEATURES + (FLIGHT_FEATURES if level >= 2 else ()) if f not in implied]
    count = min(len(pool), int(choice or _pick(rng, *FEATURE_COUNTS)))
    chosen = sorted(rng.choice(len(pool), size=count, replace=False).tolist())
    return FeatureCount(features=[pool[i] for i in chosen])


def _implied_features(hard: list) -> set[str]:
    """Wish-list features every feasible plan already has because a hard constraint requires it."""
    implied = set()
    for c in hard:
        for attr in ("amenity", "feature"):
            name = getattr(c, attr, None)
            if name:
                implied.add(name.removeprefix("has_").removeprefix("is_"))
        if c.kind == "bed_type" and c.bed_type == "king":
            implied.add("king_bed")
        if c.kind == "rate_policy":
            implied.add(c.policy)
        if c.kind == "direct_flights":
            implied.add("direct_flights")
        if c.kind == "min_star_rating" and c.value >= 4:
            implied.add("four_stars")
    return implied


def draw_task(
    rng: np.random.Generator,
    conn: sqlite3.Connection,
    task_id: str,
    level: int,
    otype: str,
    rejected: collections.Counter | None = None,
    choice: str | int | None = None,
) -> Task | None:
    """One candidate task (None when it fails the acceptance rules; ``rejected`` counts why);
    ``choice``: the objective's metric or wish-list size (drawn when None, see ``_objective``)."""
    park = PARKS[int(rng.integers(len(PARKS)))]
    park_ids = [park.park_id]
    neighbour = nearest_park(park.park_id)
    if level < 3 and rng.random() < TWO_PARK_SHARE and neighbour is not None:
        park_ids.append(neighbour)
    travellers = int(_pick(rng, [1, 2, 3, 4, 5, 6], [0.15, 0.4, 0.15, 0.2, 0.05, 0.05]))
    rooms = max(1, math.ceil(travellers / int(_pick(rng, [2, 2, 3, 4]))))
    hard = [C.Park(park_ids=park_ids), _dates(rng, level), C.Travellers(count=travellers),
            C.Rooms(count=rooms)]  # fmt: skip
    if level >= 2:
        city = _pick(rng, sorted(DEPARTURE_CITIES))
        hard += [C.TripCoherence(), C.OriginCity(city=city, airport=DEPARTURE_CITIES[city])]
    if level == 3:
        permits = conn.execute(
            "SELECT permit_id, template_name, min_duration_days, max_duration_days FROM permits"
            " WHERE park_id = ? ORDER BY permit_id", (park.park_id,)).fetchall()  # fmt: skip
        pid, name, lo, hi = permits[int(rng.integers(len(permits)))]
        hard.append(
            C.PermitRequired(
                permit_ids=[pid], names=[name], days=int(rng.integers(lo, min(hi, 2) + 1))
            )
        )
    pool = _extra_pool(rng, conn, park.park_id, level)
    n_extra = int(_pick(rng, *EXTRA_COUNTS[level]))
    hard += [pool[i] for i in sorted(rng.choice(len(pool), size=n_extra, replace=False).tolist())]
    objective = _objective(rng, level, otype, hard, choice)
    persona = sample_persona(rng)
    draft = Task(task_id=task_id, level=level, objective=SingleMetric(metric="total_cost"),
                 constraints=hard, persona=persona, story="")  # fmt: skip
    columns = component_columns(conn, draft)
    ranking = Ranking(draft, group_components(draft, *columns))
    size = ranking.size
    if size < MIN_FEASIBLE * 3:
        return _reject(rejected, "unbudgeted set under 60 plans")
    # budget: the total cost at a random quantile of the unbudgeted feasible set, in $50 steps
    quantile = float(rng.uniform(0.35, 0.8))
    cost = -ranking.kth_best(max(1, math.ceil(quantile * size)))[0] / 100
    budget = C.Budget(max_total=float(math.ceil(cost / 50) * 50))
    constraints = _mark_revelation(rng, [*hard[:4], budget, *hard[4:]])
    task = Task(
        task_id=task_id,
        level=level,
        objective=objective,
        constraints=constraints,
        persona=persona,
        story=write_story(rng, [park_name(p) for p in park_ids], travellers, objective),
    )
    # the draft's columns serve the task: the budget is the only constraint it adds, and in
    # SQL only a prune (the hotel alone must fit); the ranking counts under the budget itself
    ranking = Ranking(task, group_components(task, *columns))
    truth = solve_ranked(task, ranking)
    if truth.feasible_count < MIN_FEASIBLE:
        return _reject(rejected, "under 20 feasible plans")
    if truth.distinct_values < MIN_DISTINCT:
        return _reject(rejected, f"under 5 distinct values: {_objective_label(objective)}")
    if not within_credit_bound(truth):
        return _reject(rejected, f"over the credit bound: {_objective_label(objective)}")
    revisions = _revisions(rng, constraints, _cheapest_plan(ranking))
    return task.model_copy(update={"revisions": revisions}) if revisions else task


def _objective_label(objective: SingleMetric | FeatureCount) -> str:
    return getattr(objective, "metric", None) or "feature_count"


def _reject(rejected: collections.Counter | None, reason: str) -> None:
    if rejected is not None:
        rejected[reason] += 1
    return None


def _cheapest_plan(ranking: Ranking) -> float:
    """The total cost (dollars) of the cheapest feasible plan: within a group every hotel pairs
    with every completion, only the budget binds them."""
    return min(int(g.h_cost.min() + g.c_cost.min()) for g in ranking.groups) / 100


def _revisions(rng: np.random.Generator, constraints: list, cheapest: float) -> list[Revision]:
    """In a share of tasks the user first states a budget, a stay or a longest stay one way and
    later revises it mid-task: about half first state it tighter and relax it (a lower budget,
    never below the cheapest feasible plan; a shorter stay; fewer nights), the others first
    state it looser and tighten it. The task's constraint is the final one (the ground truth is
    for it)."""
    if rng.random() >= REVISION_SHARE:
        return []
    relax = rng.random() < RELAX_SHARE
    by_direction: dict[bool, list] = {True: [], False: []}
    for index, c in enumerate(constraints):
        for relaxing, initial in _initial_versions(rng, c, cheapest):
            by_direction[relaxing].append((index, initial))
    candidates = by_direction[relax] or by_direction[not relax]
    if not candidates:
        return []
    index, initial = candidates[int(rng.integers(len(candidates)))]
    return [Revision(constraint_index=index, initial=initial)]


def _initial_versions(rng: np.random.Generator, c, cheapest: float) -> list[tuple[bool, object]]:
    """(relaxed later?, first-stated version) for each way ``c`` can be revised."""
    out = []
    if c.kind == "budget":
        looser = math.ceil(c.max_total * float(rng.uniform(1.15, 1.4)) / 50) * 50
        tighter = max(math.ceil(c.max_total * float(rng.uniform(0.7, 0.87)) / 50) * 50,
                      math.ceil(cheapest / 50) * 50)  # fmt: skip
        out.append((False, c.model_copy(update={"max_total": float(looser)})))
        if tighter < c.max_total:
            out.append((True, c.model_copy(update={"max_total": float(tighter)})))
    elif c.kind == "stay_dates":
        nights = (c.check_out - c.check_in).days
        if nights >= 2 and c.check_out.day < 31:
            later = c.check_out + dt.timedelta(days=1)
            out.append((False, c.model_copy(update={"check_out": later})))
        if nights >= 3:
            earlier = c.check_out - dt.timedelta(days=1)
            out.append((True, c.model_copy(update={"check_out": earlier})))
    elif c.kind == "date_window":
        span = (c.latest_check_out - c.earliest_check_in).days
        if c.max_nights + 1 <= span:
            out.append((False, c.model_copy(update={"max_nights": c.max_nights + 1})))
        if c.max_nights - 1 >= c.min_nights:
            out.append((True, c.model_copy(update={"max_nights": c.max_nights - 1})))
    return out


def _mark_revelation(rng: np.random.Generator, constraints: list) -> list:
    """Park, dates, travellers (and origin, permit) come first; the rest mostly later."""
    initial_kinds = {"park", "stay_dates", "weekend_stay", "date_window", "travellers",
                     "origin_city", "permit_required", "trip_coherence"}  # fmt: skip
    out = []
    for c in constraints:
        progressive = c.kind not in initial_kinds and rng.random() < 0.85
        out.append(c.model_copy(update={"revelation": "progressive" if progressive else "initial"}))
    return out


def slot_choices(seed: int, task_id: str, level: int, otype: str) -> list:
    """What a slot tries, in order: the metrics of a single-metric slot (the level's
    ``METRICS``) or the wish-list sizes of a feature-count slot (``FEATURE_COUNTS``), drawn
    without replacement with their weights, so a choice that fails all its draws hands its
    share to the others in proportion to their weights."""
    options, weights = METRICS[min(level, 2)] if otype == "single_metric" else FEATURE_COUNTS
    order = _rng(seed, task_id, "choices").choice(
        len(options), size=len(options), replace=False, p=weights
    )
    return [options[i] for i in order.tolist()]


IN_PROCESS_MAX = 6  # at most this many slots to draw: no worker processes


def task_slots(seed: int = DEFAULT_TASK_SEED) -> list[tuple[str, int, str]]:
    """(task id, level, objective type) of every task, in the task file's order."""
    order = [slot for slot, count in SLOTS.items() for _ in range(count)]
    shuffled = _rng(seed, "order").permutation(len(order))
    return [(f"compass-{number:03d}", *order[index])
            for number, index in enumerate(shuffled.tolist(), start=1)]  # fmt: skip


def generate_tasks(
    conn: sqlite3.Connection,
    seed: int = DEFAULT_TASK_SEED,
    rejected: collections.Counter | None = None,
    workers: int | None = None,
    slots: list[tuple[str, int, str]] | None = None,
    on_task: Callable[[Task], object] | None = None,
    done: int = 0,
) -> list[Task]:
    """All 281 tasks (or those of ``slots``, entries of :func:`task_slots`); the same
    database and seed give the same tasks, byte for byte. ``rejected`` (when given) counts the
    rejected draws by reason, and the metrics replaced; ``on_task`` (when given) is called with
    each task as it is drawn (in order: what a caller keeps when the drawing stops part-way);
    the bar counts on from ``done`` tasks of the set drawn before. A
    task depends on nothing but its slot,
    the seed and the database (so any slots drawn alone are the same tasks as in the whole
    set), so the slots are drawn over ``workers`` processes (default: every core,
    ``TRAVELGYM_BUILD_WORKERS``), with a progress bar; the tasks and counts are the same
    whatever the number."""
    from travelgym import progress
    from travelgym.parallel import build_workers, ordered_map, worker_pool

    slots = task_slots(seed) if slots is None else list(slots)
    path = _database_file(conn)  # workers open their own connections to it
    n = build_workers() if workers is None else workers
    tasks = []
    # a few slots are drawn here: starting the workers would cost more than it saves
    parallel = path and n > 1 and len(slots) > IN_PROCESS_MAX
    with worker_pool(n if parallel else 0) as pool:  # before the bar's thread starts
        if pool is None:
            drawn = (_draw_counted(conn, seed, slot) for slot in slots)
        else:
            drawn = ordered_map(_draw_job, [(path, seed, slot) for slot in slots], pool,
                                window=4 * n)  # fmt: skip
        with progress.step("compass: tasks", total=done + len(slots), unit="task",
                           initial=done) as bar:  # fmt: skip
            for (task_id, _, _), (task, counts) in zip(slots, drawn, strict=True):
                if rejected is not None:
                    rejected.update(counts)
                if task is None:
                    raise RuntimeError(f"could not draw an acceptable task for {task_id}")
                tasks.append(task)
                if on_task is not None:
                    on_task(task)
                bar.advance()
    return tasks


def _database_file(conn: sqlite3.Connection) -> str | None:
    """The file of ``conn``'s main database (None in memory)."""
    row = conn.execute("PRAGMA database_list").fetchone()
    return row[2] or None


_CONNECTIONS: dict[tuple[int, str], sqlite3.Connection] = {}


def _draw_job(
    job: tuple[str, int, tuple[str, int, str]],
) -> tuple[Task | None, collections.Counter]:
    """One slot in a worker process, over its own read-only connection to the database."""
    from travelgym.db import connect_readonly

    path, seed, slot = job
    key = (os.getpid(), path)  # a connection must not cross a fork
    if key not in _CONNECTIONS:
        _CONNECTIONS[key] = connect_readonly(path)
    return _draw_counted(_CONNECTIONS[key], seed, slot)


def _draw_counted(conn, seed, slot) -> tuple[Task | None, collections.Counter]:
    """:func:`_draw_slot` of ``slot`` with the draws it rejected, counted."""
    counts: collections.Counter = collections.Counter()
    task_id, level, otype = slot
    return _draw_slot(conn, seed, task_id, level, otype, counts), counts


def _draw_slot(conn, seed, task_id, level, otype, rejected) -> Task | None:
    """The first acceptable draw of one slot: up to ``METRIC_ATTEMPTS`` draws (a feature count:
    ``FEATURE_ATTEMPTS``) of each choice in ``slot_choices`` order."""
    attempts = METRIC_ATTEMPTS if otype == "single_metric" else FEATURE_ATTEMPTS
    for choice in slot_choices(seed, task_id, level, otype):
        for attempt in range(attempts):
            rng = _rng(seed, task_id, choice, attempt)
            task = draw_task(rng, conn, task_id, level, otype, rejected, choice)
            if task is not None:
                return task
        what = "metric" if otype == "single_metric" else "wish-list size"
        _reject(rejected, f"{what} replaced: {choice}")
    return None


def task_file_origin(db_content_hash: str, task_seed: int, db_seed: int) -> dict:
    """What a task file's manifest says it was made from: formats, generator, seeds, database."""
    from travelgym.suites.compass.tasks import TASK_FORMAT_VERSION

    return {
        "format_version": TASK_FORMAT_VERSION,
        "generator_version": TASK_GENERATOR_VERSION,
        "task_seed": task_seed,
        "db_seed": db_seed,
        "db_content_hash": db_content_hash,
    }


def write_task_file(
    out, task_seed: int | None = None, data_dir=None, db_seed: int = 0, extra: dict | None = None
) -> dict:
    """Generate the tasks on the ``db_seed`` database and write them with a manifest (plus the
    ``extra`` entries)."""
    from pathlib import Path

    from travelgym.datafiles import dump_jsonl, write_manifest
    from travelgym.db import connect_readonly
    from travelgym.parallel import build_workers
    from travelgym.suites.compass.build import ensure_database

    seed = DEFAULT_TASK_SEED if task_seed is None else task_seed
    workers = build_workers()  # a bad TRAVELGYM_BUILD_WORKERS stops it before any build
    db = ensure_database(seed=db_seed, data_dir=data_dir)
    conn = connect_readonly(db.path)
    try:
        tasks = generate_tasks(conn, seed, workers=workers)
    finally:
        conn.close()
    out = Path(out)
    meta = {
        **task_file_origin(db.metadata["content_hash"], seed, db_seed),
        "count": len(tasks),
        "sha256": dump_jsonl(tasks, out),
        **(extra or {}),
    }
    write_manifest(out, meta)
    return meta
