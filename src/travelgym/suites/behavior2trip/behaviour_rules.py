"""The Figure 9 rules every behaviour trajectory must pass (:func:`validate_trajectory`)."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence

from travelgym.suites.behavior2trip.actions import (
    FOCUS_RANK,
    YEAR,
    Action,
)
from travelgym.suites.behavior2trip.behaviour_pool import CandidatePool

# --- validation --------------------------------------------------------------------------------


def validate_trajectory(
    actions: Sequence[Action], pool: CandidatePool, partial: bool = False
) -> list[str]:
    """The Figure 9 rules a trajectory breaks, as ``"rule: detail"`` strings (``[]``: valid).

    Rules: ``unknown_poi`` / ``poi_mismatch`` (realism: only pool POIs, as the pool describes
    them), ``funnel`` (click before favourite before book), ``rebooked`` (cross-session
    continuity), ``noise_action`` (noise POIs only clicked), ``noise_clustered`` (no two noise
    clicks in a row), ``noise_budget``, ``timestamp`` (strictly increasing, in 2024),
    ``session_order``, ``session_city`` (one city per session), ``session_topic`` (one category
    per session), ``plan_order`` (transport and hotel before attractions and dining in a city
    block), ``commitment`` (a thread books only in its last session), ``category_diversity``
    (two or more categories) and ``no_booking`` (a final decision exists). With ``partial``
    (a trajectory still being written) the last two are not checked.

    At the pool's noise ``level`` ``p > 0`` (``--noise``) the noise rules are relaxed by the
    level, not dropped: a noise POI may be favourited (never booked) right after its click, at
    most ``ceil(p * F)`` of the ``F`` favourites (``noise_action`` beyond), each such
    favourite's click on top of the noise budget; and ``drift``: at most ``ceil(p * T)``
    sessions (``T``: the categories-in-a-city the other sessions browse) may be *drifting*,
    1-4 clicks of noise POIs and nothing else, which the noise budget, the clustering rule and
    the order rules between sessions do not count.
    """
    problems: list[str] = []
    state: dict[str, int] = {}  # poi_id -> 1 clicked, 2 favourited, 3 booked
    prev_ts = ""
    prev_noise = False
    prev_session = 0
    noise_clicks = 0
    noise_favourites = 0
    noise_level = pool.level
    drifting = _drifting(actions, pool) if noise_level else set()
    sessions: dict[int, list[tuple[str, str, bool]]] = {}  # session -> (city, focus, booked)
    for i, a in enumerate(actions):
        entry = pool.by_id.get(a.poi_id)
        if a.session < prev_session or a.session > prev_session + 1:
            problems.append(
                f"session_order: action {i} jumps from session {prev_session} to {a.session}"
            )
        prev_session = a.session
        if not _valid_ts(a.timestamp):
            problems.append(f"timestamp: action {i} has {a.timestamp!r}, not a {YEAR} timestamp")
        elif a.timestamp <= prev_ts:
            problems.append(f"timestamp: action {i} at {a.timestamp} is not after {prev_ts}")
        prev_ts = max(prev_ts, a.timestamp)
        if entry is None:
            problems.append(f"unknown_poi: action {i} uses {a.poi_id}, not in the candidate pool")
            prev_noise = False
            continue
        poi, noise = entry
        if (a.poi_name, a.poi_type, a.city) != (poi.name, poi.poi_type, poi.city):
            problems.append(f"poi_mismatch: action {i} describes {a.poi_id} unlike the pool")
        level = state.get(a.poi_id, 0)
        if a.action_type == "click":
            state[a.poi_id] = max(level, 1)
        elif a.action_type == "add_to_favorites":
            if level < 1:
                problems.append(f"funnel: {a.poi_id} favourited before it was clicked (action {i})")
            state[a.poi_id] = max(level, 2)
        else:
            if level == 3:
                problems.append(f"rebooked: {a.poi_id} booked again (action {i})")
            elif level < 2:
                problems.append(f"funnel: {a.poi_id} booked before it was favourited (action {i})")
            state[a.poi_id] = 3
        sessions.setdefault(a.session, []).append((poi.city, poi.focus, a.action_type == "book"))
        if a.session in drifting:
            prev_noise = False
            continue
        if noise:
            if noise_level and a.action_type == "add_to_favorites":
                noise_favourites += 1
                if not (i and actions[i - 1].poi_id == a.poi_id
                        and actions[i - 1].action_type == "click"):  # fmt: skip
                    problems.append(f"noise_action: noise POI {a.poi_id} favourited, not right "
                                    f"after its click (action {i})")  # fmt: skip
            elif a.action_type != "click":
                problems.append(
                    f"noise_action: noise POI {a.poi_id} got {a.action_type} (action {i})"
                )
            else:
                noise_clicks += 1
            if prev_noise and (not noise_level or a.action_type == "click"):
                problems.append(f"noise_clustered: noise clicks in a row at actions {i - 1}, {i}")
        prev_noise = noise
    favourites = sum(a.action_type == "add_to_favorites" for a in actions)
    if noise_favourites > (allowed := allowance(noise_level, favourites)):
        problems.append(f"noise_action: {noise_favourites} of {favourites} favourites on noise "
                        f"POIs, at most {allowed} at noise {noise_level:g}")  # fmt: skip
    budget = pool.max_noise + noise_favourites
    if noise_clicks > budget:
        problems.append(f"noise_budget: {noise_clicks} noise clicks, at most {budget}")
    if drifting:
        threads = {r[:2] for s, rows in sessions.items() if s not in drifting for r in rows}
        if len(drifting) > (allowed := allowance(noise_level, len(threads))):
            problems.append(f"drift: {len(drifting)} drifting sessions, at most {allowed} at "
                            f"noise {noise_level:g}")  # fmt: skip
    problems += _session_rules({s: r for s, r in sessions.items() if s not in drifting}, partial)
    problems += _session_rules({s: r for s, r in sessions.items() if s in drifting}, True)
    if not partial and not any(a.action_type == "book" for a in actions):
        problems.append("no_booking: the trajectory never books")
    return problems


MAX_DRIFT_CLICKS = 4


def allowance(level: float, n: int) -> int:
    """How many of ``n`` (favourites, threads) the noise ``level`` lets go off-profile:
    ``ceil(level * n)`` (0 at level 0; at least what the generator's ``round`` draws)."""
    return math.ceil(level * n - 1e-9) if level else 0


def _drifting(actions: Sequence[Action], pool: CandidatePool) -> set[int]:
    """The sessions of 1-:data:`MAX_DRIFT_CLICKS` actions, all clicks of noise POIs."""
    rows: dict[int, list[Action]] = {}
    for a in actions:
        rows.setdefault(a.session, []).append(a)
    return {s for s, acts in rows.items() if len(acts) <= MAX_DRIFT_CLICKS
            and all(a.action_type == "click" and pool.by_id.get(a.poi_id, (None, False))[1]
                    for a in acts)}  # fmt: skip


def _valid_ts(ts: str) -> bool:
    try:
        return dt.datetime.fromisoformat(ts).year == YEAR
    except (TypeError, ValueError):
        return False


def _session_rules(sessions: dict[int, list[tuple[str, str, bool]]], partial: bool) -> list[str]:
    problems = []
    summary = []  # (session, city, focus, has_book)
    for s, rows in sessions.items():
        cities = {r[0] for r in rows}
        foci = {r[1] for r in rows}
        if len(cities) > 1:
            problems.append(f"session_city: session {s} spans {', '.join(sorted(cities))}")
        if len(foci) > 1:
            problems.append(f"session_topic: session {s} mixes {', '.join(sorted(foci))}")
        summary.append((s, rows[0][0], rows[0][1], any(r[2] for r in rows)))
    for prev, cur in zip(summary, summary[1:], strict=False):
        if prev[1] == cur[1] and FOCUS_RANK[cur[2]] < FOCUS_RANK[prev[2]]:
            problems.append(
                f"plan_order: session {cur[0]} plans {cur[2]} after {prev[2]} in {cur[1]}"
            )
        if prev[1:3] == cur[1:3] and prev[3] and not cur[3]:
            problems.append(
                f"commitment: session {cur[0]} explores {cur[2]} in {cur[1]} after booking"
            )
    if not partial and sessions and len({r[2] for r in summary}) < 2:
        problems.append("category_diversity: the trajectory covers a single category")
    return problems
