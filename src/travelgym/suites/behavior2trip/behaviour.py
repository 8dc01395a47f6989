"""Behaviour trajectories (paper Section 3.2.2, Figure 9): candidate pools, a deterministic
role-play generator, and the rule validator every trajectory must pass.

A :class:`CandidatePool` holds, per *thread* (one POI category in one city), preference-matched
POIs and noise POIs (same city and category, but against a preference). Threads are grouped in
trip blocks (transport, then hotel, then attractions, dining and entertainment). The generator
walks each thread through one to three sessions: clicks first, favourites of some clicked POIs,
and bookings of favourites in the thread's last session; noise POIs are only clicked, one at a
time, between matched actions. :func:`validate_trajectory` checks the Figure 9 rules and returns
the violations (``"rule: detail"``); the pools live in :mod:`.behaviour_pool`, the rules in
:mod:`.behaviour_rules`.

At a ``noise`` level ``p > 0`` (``--noise``, docs/behavior2trip/instances.md) the behaviour is
that of a real platform: ``round(p * F)`` of the ``F`` favourites go to an off-profile POI of
the same thread instead (taken from the favourites that lead to no booking; the off-profile POI
is clicked just before, the on-profile one stays clicked), and ``round(p * T)`` drifting sessions (``T``: the trip's threads) browse 2-4
off-profile POIs of an active category in a city the trip never visits. Bookings stay on
preference-matched POIs. At ``p = 0`` nothing of this is drawn: the draws are the paper's.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from travelgym.suites.behavior2trip.actions import (
    CATEGORY_FOCUS,
    FOCUS_RANK,
    YEAR,
    Action,
)
from travelgym.suites.behavior2trip.behaviour_pool import (
    CandidatePool,
    PoiCatalog,
    PoolError,
    Thread,
    signature,
)
from travelgym.suites.behavior2trip.preferences import (
    Poi,
)
from travelgym.suites.behavior2trip.profiles import Draws, Profile

# --- calibration (Table 2) --------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    pois: tuple[int, int]  # distinct POIs in the trajectory, noise included (inclusive range)
    noise: tuple[int, int]  # noise POIs
    per_thread: tuple[float, float]  # matched POIs per thread (sets the number of trips)
    max_trips: int
    commit: float  # scales the favourite and booking probabilities (actions per POI)


SPECS = {
    "easy": Spec(pois=(9, 14), noise=(0, 0), per_thread=(3.5, 6.0), max_trips=4, commit=0.75),
    "medium": Spec(pois=(23, 33), noise=(1, 1), per_thread=(3.0, 5.0), max_trips=6, commit=0.85),
    "hard": Spec(pois=(41, 56), noise=(5, 9), per_thread=(3.0, 4.5), max_trips=8, commit=1.0),
}
MAX_PER_THREAD = 8
MAX_CONTEXT = 3  # entertainment POIs per thread (context, not a preference)
P_FAVOURITE = 0.17
P_BOOK = {
    "transport": 0.6,
    "hotel": 0.6,
    "attraction": 0.4,
    "restaurant": 0.4,
    "entertainment": 0.2,
}
P_CONTEXT = 0.5  # chance that a Medium/Hard trip city also gets an entertainment thread
OFF_PER_THREAD = 3  # off-profile POIs a thread may favourite at a noise level above 0
DRIFT_CLICKS = (2, 4)  # clicks of a drifting session (inclusive range)


# --- candidate pools ---------------------------------------------------------------------------


def build_pool(profile: Profile, catalog: PoiCatalog, d: Draws,
               noise: float = 0.0) -> CandidatePool:  # fmt: skip
    """Choose trip cities (favouring those offering more of what the user likes), then fill each
    (city, category) thread with matched POIs and some threads with noise POIs; at a ``noise``
    level above 0 also the off-profile POIs favourites may go to and the drifting sessions'
    threads (:func:`_add_off_profile`).

    Raises :class:`PoolError` when some active category has no matching POI in any city.
    """
    spec = SPECS[profile.difficulty]
    prefs = profile.preferences
    foci = [CATEGORY_FOCUS[c] for c in profile.categories]
    home = profile.persona.home_city
    n_noise = d.randint(*spec.noise)
    wanted = d.randint(*spec.pois) - n_noise
    sigs = [(f, signature(prefs, f)) for f in foci]
    offers: dict[str, dict[str, list[Poi]]] = {}
    for city in catalog.cities:
        if city != home:
            offer = {f: m for f, sig in sigs if (m := catalog.matched_sig(f, city, home, sig))}
            if offer:
                offers[city] = offer
    missing = set(foci) - {f for o in offers.values() for f in o}
    if missing:
        raise PoolError(f"{profile.profile_id}: no city offers matching {sorted(missing)}")
    per_thread = spec.per_thread[0] + d.random() * (spec.per_thread[1] - spec.per_thread[0])
    trips = max(1, min(spec.max_trips, round(wanted / (len(foci) * per_thread))))
    # weighted order without replacement (Efraimidis-Spirakis), weight = coverage squared
    order = sorted(offers, key=lambda c: d.random() ** (1.0 / len(offers[c]) ** 2), reverse=True)
    chosen: list[str] = []
    covered: set[str] = set()
    capacity = 0
    for city in order:
        if len(chosen) >= trips and covered >= set(foci) and capacity >= wanted:
            break
        adds = bool(set(offers[city]) - covered)
        if len(chosen) < trips or adds or (capacity < wanted and len(chosen) < spec.max_trips):
            chosen.append(city)
            covered |= set(offers[city])
            capacity += sum(min(len(m), MAX_PER_THREAD) for m in offers[city].values())
    context = profile.difficulty == "easy" or len(foci) == 1
    threads = []
    for i, city in enumerate(chosen):
        offer = dict(offers[city])
        if (context and i == 0) or (not context and d.random() < P_CONTEXT):
            offer["entertainment"] = catalog.group("entertainment", city)
        threads.extend(_block(city, offer, d))
    _allocate(threads, wanted, d)
    _add_noise(threads, n_noise, catalog, home, prefs, d)
    drift = _add_off_profile(threads, noise, catalog, home, prefs, foci, d) if noise else []
    return CandidatePool(profile.profile_id, profile.difficulty, threads, n_noise, noise, drift)


def _block(city: str, offer: dict[str, list[Poi]], d: Draws) -> list[Thread]:
    """One trip block: transport, then hotel, then attractions, dining, entertainment shuffled."""
    early = sorted((f for f in offer if FOCUS_RANK[f] < 2), key=FOCUS_RANK.get)
    late = [f for f in offer if FOCUS_RANK[f] == 2]
    d.shuffle(late)
    return [Thread(city, f, list(offer[f])) for f in early + late if offer[f]]


def _allocate(threads: list[Thread], wanted: int, d: Draws) -> None:
    """Give each thread a share of the ``wanted`` matched POIs (at least one each)."""
    caps = [min(len(t.matched), MAX_CONTEXT if t.focus == "entertainment" else MAX_PER_THREAD)
            for t in threads]  # fmt: skip
    sizes = [1] * len(threads)
    open_ = [i for i, c in enumerate(caps) if sizes[i] < c]
    while sum(sizes) < wanted and open_:
        i = d.choice(open_)
        sizes[i] += 1
        if sizes[i] >= caps[i]:
            open_.remove(i)
    for t, n in zip(threads, sizes, strict=True):
        t.matched = d.sample(t.matched, n)


def _add_noise(threads, n_noise: int, catalog: PoiCatalog, home: str, prefs, d: Draws) -> None:
    """Draw ``n_noise`` noise POIs into the threads of active categories."""
    slots = [t for t in threads if t.focus != "entertainment"]
    candidates: dict[int, list[Poi]] = {}
    for _ in range(n_noise):
        open_ = [i for i, t in enumerate(slots) if candidates.get(i, True)]
        if not open_:
            return
        i = d.choice(open_)
        if i not in candidates:
            t = slots[i]
            candidates[i] = catalog.unmatched(t.focus, t.city, home, prefs)
        if candidates[i]:
            poi = candidates[i].pop(
                min(int(d.random() * len(candidates[i])), len(candidates[i]) - 1)
            )
            slots[i].noise.append(poi)


def _add_off_profile(threads: list[Thread], noise: float, catalog: PoiCatalog, home: str, prefs,
                     foci: list[str], d: Draws) -> list[Thread]:  # fmt: skip
    """At a noise level above 0: up to :data:`OFF_PER_THREAD` off-profile POIs per thread of
    an active category, and ``round(noise * threads)`` drift threads (returned), each an
    active category in a city that is neither home nor a trip city, with 2-4 off-profile POIs."""
    for t in threads:
        if t.focus == "entertainment":
            continue
        taken = {p.poi_id for p in t.noise}
        spare = [p for p in catalog.unmatched(t.focus, t.city, home, prefs)
                 if p.poi_id not in taken]  # fmt: skip
        t.off = d.sample(spare, min(OFF_PER_THREAD, len(spare)))
    visited = {t.city for t in threads} | {home}
    cities = [c for c in catalog.cities if c not in visited]
    drift = []
    for _ in range(round(noise * len(threads))):
        if not cities:
            break
        city = cities.pop(d.randint(0, len(cities) - 1))
        focus = d.choice(sorted(foci))
        spare = catalog.unmatched(focus, city, home, prefs)
        if spare:
            drift.append(Thread(city, focus, [], d.sample(spare, min(d.randint(*DRIFT_CLICKS),
                                                                      len(spare)))))  # fmt: skip
    return drift


# --- the deterministic generator ---------------------------------------------------------------


class Clock:
    """Timestamps: sessions start in waking hours (evenings most), actions seconds apart; a new
    trip block starts days to weeks later; everything stays in 2024."""

    START = dt.datetime(YEAR, 1, 1)
    HOURS = tuple(range(7, 24))
    HOUR_WEIGHTS = (1, 2, 3, 3, 3, 4, 4, 3, 3, 3, 3, 4, 5, 6, 6, 5, 3)

    def __init__(self, d: Draws, blocks: int) -> None:
        self.d = d
        self.day = d.randint(0, 40)
        self.t = self.day * 86400
        self.block_gap = (6, max(7, min(35, 250 // max(blocks, 1))))

    def session(self, new_block: bool) -> None:
        d = self.d
        self.day += (
            d.randint(*self.block_gap) if new_block else d.weighted((0, 1, 2, 3), (3, 4, 2, 1))
        )
        start = (
            self.day * 86400 + d.weighted(self.HOURS, self.HOUR_WEIGHTS) * 3600 + d.randint(0, 3599)
        )
        if start <= self.t + 600:  # same day, already past that hour: the next day
            self.day += 1
            start += 86400
        self.t = start

    def tick(self, action: str) -> str:
        d = self.d
        if action == "click":
            self.t += d.randint(6, 95)
        elif action == "add_to_favorites":
            self.t += d.randint(3, 40)
        else:
            self.t += d.randint(30, 300)
        return (self.START + dt.timedelta(seconds=self.t)).isoformat()


def _thread_steps(t: Thread, d: Draws, commit: float = 1.0) -> list[list[tuple[str, Poi]]]:
    """The matched actions of one thread, session by session (funnel order)."""
    n = len(t.matched)
    n_sessions = 1 if n <= 3 else (2 if n <= 6 or d.random() < 0.5 else 3)
    n_sessions = min(n_sessions, n)
    # new POIs per session, the first sessions exploring the most
    sizes = [1] * n_sessions
    for _ in range(n - n_sessions):
        sizes[min(int(d.random() ** 1.6 * n_sessions), n_sessions - 1)] += 1
    fav = {p.poi_id for p in t.matched if d.random() < P_FAVOURITE * commit}
    books = 1 if d.random() < P_BOOK[t.focus] * commit else 0
    if books and n >= 5 and t.focus in ("attraction", "restaurant") and d.random() < 0.3:
        books = 2
    if books and not fav:
        fav.add(d.choice(t.matched).poi_id)
    book_ids = set(d.sample(sorted(fav), books)) if books else set()
    sessions: list[list[tuple[str, Poi]]] = []
    start = 0
    for s, size in enumerate(sizes):
        steps: list[tuple[str, Poi]] = []
        pending: list[Poi] = []
        for poi in t.matched[start : start + size]:
            steps.append(("click", poi))
            if pending and d.random() < 0.6:
                steps.append(("add_to_favorites", pending.pop()))
            if poi.poi_id in fav:
                pending.append(poi)
        steps.extend(("add_to_favorites", p) for p in pending)
        if s == n_sessions - 1:
            for poi in t.matched:
                if poi.poi_id in book_ids:
                    if t.matched.index(poi) < start:  # found earlier: look at it again first
                        steps.append(("click", poi))
                    steps.append(("book", poi))
        start += size
        sessions.append(steps)
    return sessions


def _insert_noise(sessions: list[list[tuple[str, Poi]]], noise: list[Poi], d: Draws) -> None:
    """Click each noise POI once, after a matched action (never first in a session, never next to
    another noise click)."""
    for poi in noise:
        slots = [(si, i) for si, steps in enumerate(sessions) for i in range(1, len(steps) + 1)
                 if not _is_noise(steps[i - 1]) and (i == len(steps) or not _is_noise(steps[i]))]  # fmt: skip
        if not slots:
            return
        si, i = d.choice(slots)
        sessions[si].insert(i, ("noise", poi))


def _is_noise(step: tuple[str, Poi]) -> bool:
    return step[0] in ("noise", "noise_favourite")


def generate_trajectory(profile: Profile, pool: CandidatePool, d: Draws) -> list[Action]:
    """The deterministic role-play of Figure 9 over ``pool``."""
    plan: list[tuple[Thread, list[list[tuple[str, Poi]]]]] = []
    for t in pool.threads:
        sessions = _thread_steps(t, d, SPECS[pool.difficulty].commit)
        _insert_noise(sessions, t.noise, d)
        plan.append((t, sessions))
    if pool.level:
        _off_profile_favourites(plan, pool.level, d)
    if not any(k == "book" for _, ss in plan for s in ss for k, _ in s):
        _force_booking(plan)
    order = [(t, steps, False) for t, sessions in plan for steps in sessions]
    for t in pool.drift:  # drifting sessions, anywhere after the first
        order.insert(d.randint(1, len(order)), (t, [("noise", p) for p in t.noise], True))
    blocks = len({t.city for t in pool.threads})
    clock = Clock(d, blocks)
    out: list[Action] = []
    last_city = None
    for session, (t, steps, drifting) in enumerate(order, start=1):
        clock.session(new_block=not drifting and t.city != last_city)
        if not drifting:  # a drift is no new trip block, nor does it end one
            last_city = t.city
        for kind, poi in steps:
            action = STEP_ACTION.get(kind, kind)
            out.append(make_action(session, action, clock.tick(action), poi))
    return out


STEP_ACTION = {"noise": "click", "noise_favourite": "add_to_favorites"}


def _off_profile_favourites(plan, level: float, d: Draws) -> None:
    """Move ``round(level * F)`` of the ``F`` favourites to off-profile POIs of their thread,
    taken from the favourites of POIs never booked (at most all of those): the favourite step
    goes, and a click and a favourite of an off-profile POI come in its session between two
    on-profile steps (a favourite whose removal or whose session leaves no such place keeps its
    POI)."""
    booked = {p.poi_id for _, ss in plan for s in ss for k, p in s if k == "book"}
    favourites = [(ti, si, p.poi_id) for ti, (_, ss) in enumerate(plan)
                  for si, s in enumerate(ss) for k, p in s if k == "add_to_favorites"]  # fmt: skip
    eligible = [f for f in favourites if f[2] not in booked]
    for ti, si, pid in d.sample(eligible, round(level * len(favourites))):
        t, sessions = plan[ti]
        steps = sessions[si]
        i = next(j for j, (k, p) in enumerate(steps) if k == "add_to_favorites" and p.poi_id == pid)
        if not t.off or (0 < i < len(steps) - 1 and _is_noise(steps[i - 1])
                         and _is_noise(steps[i + 1])):  # fmt: skip
            continue
        rest = steps[:i] + steps[i + 1 :]
        slots = [j for j in range(1, len(rest) + 1) if not _is_noise(rest[j - 1])
                 and (j == len(rest) or not _is_noise(rest[j]))]  # fmt: skip
        if not slots:
            continue
        j = d.choice(slots)
        poi = t.off.pop(min(int(d.random() * len(t.off)), len(t.off) - 1))
        sessions[si] = rest[:j] + [("noise", poi), ("noise_favourite", poi)] + rest[j:]


def _force_booking(plan) -> None:
    """Every trajectory ends in at least one decision: book a favourite of some thread."""
    t, sessions = max(
        plan, key=lambda item: (item[0].focus != "entertainment", len(item[0].matched))
    )
    last = sessions[-1]
    clicked_last = [p for k, p in last if k == "click"]
    poi = clicked_last[-1] if clicked_last else t.matched[0]
    faved = any(k == "add_to_favorites" and p is poi for s in sessions for k, p in s)
    if poi not in clicked_last:
        last.append(("click", poi))
    if not faved:
        last.append(("add_to_favorites", poi))
    last.append(("book", poi))


class DeterministicBackend:
    """The offline role-play backend: :func:`generate_trajectory` behind the backend interface
    shared with :class:`travelgym.suites.behavior2trip.roleplay.RoleplayBackend`."""

    name = "deterministic"

    def generate(self, profile: Profile, pool: CandidatePool, d: Draws) -> list[Action]:
        return generate_trajectory(profile, pool, d)

    async def agenerate(self, profile: Profile, pool: CandidatePool, d: Draws) -> list[Action]:
        return generate_trajectory(profile, pool, d)


def make_action(session: int, action: str, timestamp: str, poi: Poi) -> Action:
    return Action(session=session, action_type=action, timestamp=timestamp, poi_id=poi.poi_id,
                  poi_name=poi.name, poi_type=poi.poi_type, city=poi.city,
                  categories=poi.labels(), price=poi.price, origin=poi.origin)  # fmt: skip


def poi_of(action: Action) -> Poi:
    """The :class:`Poi` an action describes (the inverse of :func:`make_action`)."""
    cats = action.categories
    level = env = None
    facilities: tuple[str, ...] = ()
    if action.poi_type == "hotel":
        facilities = tuple(cats[1:])
    elif action.poi_type == "restaurant":
        level, env = cats[1], cats[2]
    elif len(cats) > 1:
        level = cats[1]
    return Poi(action.poi_id, action.poi_name, action.poi_type, action.city, action.price or 0.0,
               cats[0], level, env, facilities, action.origin)  # fmt: skip
