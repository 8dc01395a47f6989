"""The ``oracle`` agent: the scripted planner told the hidden profile instead of inferring it.

It measures the benchmark, not a model: with the true preferences and every fact taken from the
9 tools (each call recorded like any agent's), the share of instances it passes is a lower
bound on how many instances a perfect agent could pass, and its failures name what the data or
the checks make impossible (a preferred mode that runs only at night on the travel dates, too
few restaurants at the preferred price level and environment, ...). Its planning differs from
the baseline's only where the true preferences license it: main meals only at the preferred
price level and environment, legs only of the preferred mode and seat class, attractions only
within the walking tolerance, the preferred cuisines and attraction types kept for one meal
and one visit a day, POIs booked before not avoided (no check asks for that), travel days
shaped around each leg's times, and the first place of a travel day near its station.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from travelgym.suites.behavior2trip.agents.base import TripRequest, TripToolSession
from travelgym.suites.behavior2trip.agents.day_timing import (
    ORACLE_FULL_DAYS,
    ORACLE_PULLS,
    fits_a_day,
    solve_day,
    travel_shapes,
)
from travelgym.suites.behavior2trip.agents.infer import Inferred
from travelgym.suites.behavior2trip.agents.oracle_distances import (
    SPREADS,
    SPREADS_KEPT,
    anchor_km,
    estimate,
    nearest,
    pool_spread,
)
from travelgym.suites.behavior2trip.agents.schedule import (
    Stop,
)
from travelgym.suites.behavior2trip.agents.scripted import (
    ARRIVAL_TEMPLATES,
    LOCAL_DAILY_LIMIT,
    MAX_LEGS_TRIED,
    PRICE_UNIT,
    Planner,
    _hours,
    _since,
)
from travelgym.suites.behavior2trip.agents.scripted_plan import DayDraft, Pick
from travelgym.suites.behavior2trip.agents.scripted_search import (
    daytime,
    km,
)
from travelgym.suites.behavior2trip.preferences import Preferences
from travelgym.suites.behavior2trip.schema import DATES


def preferences_of(prefs: Preferences) -> Inferred:
    """The hidden preferences as the planner's search preferences (Table 7 keys)."""
    out = Inferred()
    if (h := prefs.hotel_preferences) is not None:
        out.hotel = {"star_rating": list(h.star_requirement)}
        if h.essential_facilities:
            out.hotel["amenities"] = list(h.essential_facilities)
    if (a := prefs.attraction_preferences) is not None:
        out.attraction = {"attraction_type": list(a.preferred_attraction_types)}
        if a.walking_tolerance:
            out.attraction["walk_tolerance"] = [a.walking_tolerance]
    if (d := prefs.dining_requirements) is not None:
        out.restaurant = {"cuisine": list(d.cuisine_preferences)}
        if d.price_level:
            out.restaurant["price_level"] = [d.price_level]
        if d.dining_environment:
            out.restaurant["environment"] = [d.dining_environment]
    if (t := prefs.transportation_preferences) is not None:
        out.mode, out.seat = t.intercity_transport, t.seat_class
    return out


LEGS_KEPT = 4096  # routes and dates whose legs a session remembers (a few KB each)
SHARED = ("planner tables",)  # the session memo's entry for OraclePlanner._shared
SHARED_KEPT = 4096  # tables and distance lists kept across planners (50 rows each at most)


class Unplannable(Exception):
    """A day the oracle cannot plan by every rule (the witness search gives up at once)."""


class OraclePlanner(Planner):
    """:class:`Planner` with the true preferences and only the choices they allow. With
    ``give_up`` a day that cannot meet every rule raises :class:`Unplannable` instead of
    falling back to the baseline's best effort (the witness search needs no plan then)."""

    solve_day = staticmethod(solve_day)  # the network's shape: the same times, sooner

    def __init__(self, request: TripRequest, env: TripToolSession, prefs: Preferences,
                 give_up: bool = False) -> None:  # fmt: skip
        super().__init__(request, env)
        self.true_prefs, self.give_up = prefs, give_up

    def run(self) -> str:
        tick = time.perf_counter()
        self.prefs = preferences_of(self.true_prefs)
        self.env.add_step(text="took the hidden profile's preferences (oracle)",
                          think=f"plan for: {self.prefs.describe()}", duration_s=_since(tick))  # fmt: skip
        if self.give_up:
            self.screen_legs()
        return self.plan_steps()

    def screen_legs(self) -> None:
        """Give up before any search when a travel day has no leg it could be shaped around
        (the cheapest test of a request: most unplannable ones fail here)."""
        ins = self.ins
        for origin, destination, date, arrival in ((self.home, self.dest, ins.start_date, True),
                                                   (self.dest, self.home, ins.end_date, False)):  # fmt: skip
            if not any(fits_a_day(g, arrival) for g in self.legs(origin, destination, date)):
                raise Unplannable(f"no leg from {origin} to {destination} on {date} fits a day")

    def meal_pools(self, city: str) -> dict[str, list[dict]]:
        """Main meals only at the preferred price level and environment, when stated; the
        preferred cuisine's restaurants kept for one meal a day (not spent on a second).
        Made once per city (the preferences and the searches do not change)."""
        memo = self.__dict__.setdefault("_meals_of", {})
        if city not in memo:
            memo[city] = self._meal_pools(city)
        return memo[city]

    def _meal_pools(self, city: str) -> dict[str, list[dict]]:
        pools = super().meal_pools(city)
        if pools["level"] or (self.prefs.restaurant or {}).keys() & {"price_level", "environment"}:
            pools["any"] = pools["level"]
        keep = {r["id"] for r in pools["cuisine"]}
        for tier in ("level", "any"):
            rest = [r for r in pools[tier] if r["id"] not in keep]
            pools[tier] = rest or pools[tier]
        return pools

    def attraction_pools(self, city: str) -> list[list[dict]]:
        """The preferred attractions, then the others within the walking tolerance (the
        preferred ones kept for one visit a day)."""
        tiers = super().attraction_pools(city)
        keep = {r["id"] for r in tiers[0]}
        return [tiers[0], [r for r in tiers[-1] if r["id"] not in keep] or tiers[-1]]

    def legs(self, origin: str, destination: str, date: str) -> list[dict[str, Any]]:
        """Daytime legs of the preferred mode only (when one is preferred); made once per
        route, date, mode and seat (by the session's memo when it has one: read-only)."""
        memo = getattr(self.env, "memo", None)
        if memo is None:
            memo = self.__dict__.setdefault("_legs_of", {})
        key = ("legs", origin, destination, date, self.prefs.mode, self.prefs.seat)
        if key not in memo:
            if len(memo) >= LEGS_KEPT:
                memo.clear()
            memo[key] = self._legs(origin, destination, date)
        return memo[key]

    def _legs(self, origin: str, destination: str, date: str) -> list[dict[str, Any]]:
        mode, seat = self.prefs.mode, self.prefs.seat
        if mode is not None and not getattr(self.env, "records", True):
            # only the preferred mode's legs are kept: unrecorded, no other mode is searched
            options = sorted(self.options(origin, destination, date, mode),
                             key=lambda g: (g["price"], g["dep"]))  # fmt: skip
            legs = [g for g in options if daytime(g)]
        else:
            legs = [g for g in super().legs(origin, destination, date) if daytime(g)]
        if mode is None:
            return legs
        return [g for g in legs if g["vocab"] == mode
                and (seat is None or g["mode"] == "bus" or g["seat_class"] == seat)]  # fmt: skip

    def options(self, origin: str, destination: str, date: str, mode: str) -> list[dict[str, Any]]:
        """:meth:`Planner.options`; through an unrecorded session made once per route, mode
        and seat (and date, for flights: trains and buses run the same every day of the data
        window)."""
        memo = getattr(self.env, "memo", None)
        if memo is None or getattr(self.env, "records", True):
            return super().options(origin, destination, date, mode)
        day = date if mode == "Airplane" or date not in DATES else None
        key = ("options", origin, destination, day, mode, self.prefs.seat)
        if key not in memo:
            if len(memo) >= LEGS_KEPT:
                memo.clear()
            memo[key] = super().options(origin, destination, date, mode)
        return list(memo[key])

    def try_template(self, template, leg, start, level, pull):
        """The baseline's day, remembering the day's leg (see :meth:`anchor`). A witness
        search (giving up, no steps recorded) stops choosing a day's places as soon as its
        local transport exceeds the daily limit: no such day meets every rule."""
        self._leg = leg
        if level == "exact" and self.give_up and not getattr(self.env, "records", True):
            return self._try_exact(template, leg, start, pull)
        return super().try_template(template, leg, start, level, pull)

    def _try_exact(self, template, leg, start, pull) -> DayDraft | None:
        """:meth:`Planner.try_template` at level ``exact``, cut short once the local legs so
        far (the same legs :meth:`time` routes) exceed :data:`LOCAL_DAILY_LIMIT` minutes."""
        spent = 0

        def admit(where: Pick | None, pick: Pick) -> bool:
            nonlocal spent
            if where is not None and where.city_out == pick.city:
                spent += self._local_route(where, pick)["minutes"]
            return spent <= LOCAL_DAILY_LIMIT

        chosen = self.pick_slots(template, leg, start, "exact", pull, admit)
        if chosen is None:
            return None
        picks, used = chosen
        draft = self.time(picks, start)
        if not draft.meets("exact"):
            return None
        # no route is asked again (the baseline does, for its record): MapGuide routes the same
        # places (their ids, or the names it located) by the estimates' formula, so equally
        self.used = used
        return draft

    def _local_route(self, prev: Pick, pick: Pick) -> dict[str, Any]:
        """The local leg :meth:`time` takes from ``prev`` to ``pick`` (in one city), remembered
        per planner by the rows and legs the two stops stand for (the days tried ask the same
        pairs again and again; a route is read, never changed)."""
        key = (pick.city, id(prev.row), id(prev.leg), id(pick.row), id(pick.leg))
        memo = self.__dict__.setdefault("_routes_of", {})
        hit = memo.get(key)
        if hit is None:
            # the rows and legs are held with the route: their ids stay their own
            hit = memo[key] = (prev.row, prev.leg, pick.row, pick.leg, self._route(prev, pick))
        return hit[4]

    def _route(self, prev: Pick, pick: Pick) -> dict[str, Any]:
        """:meth:`_local_route` (no memo)."""
        a, b = self.coords(prev, out=True), self.coords(pick, out=False)
        if a is None or b is None:
            return self.box.route(pick.city, prev.place_out, pick.place_in)
        return estimate(pick.city, a, b, self.box.travellers)

    def anchor(self, near, city: str) -> dict | None:
        """A travel day's first place is chosen near the station or airport of its leg, not
        near the city centre: the transfer counts against the day's local-transport limit."""
        leg = getattr(self, "_leg", None)
        if near is None and leg is not None and city == leg["from_city"]:
            return self.locate(city, leg["from_place"]) or super().anchor(near, city)
        return super().anchor(near, city)

    def choose(self, kind: str, city: str, hint: int, near: Pick | None, used: set[str],
               has_pref: dict[str, bool], pull: float) -> Pick | None:  # fmt: skip
        """:meth:`Planner.choose` over each pool's rows read once (:meth:`_table`): the same
        pick, the same scores. Remembered per planner by everything the choice reads (the
        templates, legs and pulls tried for a day ask the same slot again and again)."""
        anchor = self.anchor(near, city)
        flag = "attraction" if kind == "attraction" else ("meal" if kind != "breakfast" else None)
        home = self.hotel if city == self.dest else None
        key = (kind, city, hint, anchor and (anchor["lat"], anchor["lon"]), frozenset(used),
               flag and has_pref[flag], self.thrift, home and (id(home), pull))  # fmt: skip
        memo = self.__dict__.setdefault("_choices", {})
        hit = memo.get(key)
        if hit is None:
            before = dict(has_pref)
            pick = self._choose(kind, city, hint, anchor, used, has_pref, pull)
            # the hotel row is held with the choice: its id stays its own
            hit = memo[key] = (pick, has_pref != before, home)
        pick, marks, _ = hit
        if marks:
            has_pref[flag] = True
        return pick and Pick(pick.kind, pick.city, pick.row)

    def _choose(self, kind: str, city: str, hint: int, anchor: dict | None, used: set[str],
                has_pref: dict[str, bool], pull: float) -> Pick | None:  # fmt: skip
        """:meth:`choose` from its ``anchor`` (no memo)."""
        home = self.hotel if city == self.dest else None

        def best(pool: list[dict], price: str, lo: int, hi: int) -> dict | None:
            table = self._table(pool, price)
            fits = [t for t in self._open_rows(table, lo, hi) if t[1] not in used]
            if not fits:
                return None
            home_km = None if home is None else self._home_km(pool, home)
            away = self._away_km(pool, table, anchor) if anchor else None
            return nearest(fits, away, home_km, pull)

        return self.first_fit(kind, city, hint, has_pref, best)

    def _table(self, pool: list[dict], price: str) -> list[tuple]:
        """Per row of ``pool``: the row, its id, opening minutes, index, radians of its
        latitude and their cosine, and the price and rating terms of :meth:`Planner._score`."""
        memo = self.__dict__.setdefault("_tables", {})
        key = (id(pool), price, self.thrift)
        hit = memo.get(key)
        if hit is None or hit[0] is not pool:
            rows = self._shared(("table", price, self.thrift), pool,
                                lambda: self._make_table(pool, price))  # fmt: skip
            hit = memo[key] = (pool, rows)  # the pool is held: its id stays its own
        return hit[1]

    def _make_table(self, pool: list[dict], price: str) -> list[tuple]:
        """:meth:`_table` (no memo)."""
        rows = []
        for i, r in enumerate(pool):
            p2 = math.radians(r["lat"])
            rows.append((r, r["id"], _hours(r), i, p2, math.cos(p2),
                         self.thrift * (r.get(price) or 0) / PRICE_UNIT, r["rating"] / 10))  # fmt: skip
        return rows

    def _shared(self, key: tuple, pool: list[dict], make: Callable[[], Any]) -> Any:
        """``make()`` remembered across the planners of a session that has a memo, by ``key``
        and the ids of ``pool``'s rows in order: the tools answer every planner's search with
        the same rows of a read-only database (a row of one id is the same, whichever search
        found it), and planners of other preferences filter the same searches alike."""
        memo = getattr(self.env, "memo", None)
        if memo is None:
            return make()
        shared = memo.get(SHARED)
        if shared is None:
            shared = memo[SHARED] = {}
        full = (*key, tuple([r["id"] for r in pool]))
        hit = shared.get(full)
        if hit is None:
            if len(shared) >= SHARED_KEPT:
                shared.clear()
            hit = shared[full] = make()
        return hit

    def _open_rows(self, table: list[tuple], lo: int, hi: int) -> list[tuple]:
        """The entries of ``table`` open from ``lo`` to ``hi`` (in order), kept per table and
        window (a day's slots ask the same few windows again and again)."""
        memo = self.__dict__.setdefault("_open", {})
        key = (id(table), lo, hi)
        hit = memo.get(key)
        if hit is None or hit[0] is not table:
            rows = [t for t in table if t[2] is None or (t[2][0] <= lo and hi <= t[2][1])]
            hit = memo[key] = (table, rows)  # the table is held: its id stays its own
        return hit[1]

    def _away_km(self, pool: list[dict], table: list[tuple], anchor: dict) -> list[float]:
        """:func:`anchor_km` of ``pool``'s rows, kept per pool and anchor (the same anchors
        recur across pulls, templates, legs and planners)."""
        memo = self.__dict__.setdefault("_away_kms", {})
        key = (id(pool), anchor["lat"], anchor["lon"])
        hit = memo.get(key)
        if hit is None or hit[0] is not pool:
            away = self._shared(("away", anchor["lat"], anchor["lon"]), pool,
                                lambda: anchor_km(table, anchor))  # fmt: skip
            hit = memo[key] = (pool, away)
        return hit[1]

    def _home_km(self, pool: list[dict], hotel: dict) -> list[float]:
        """``km(hotel, row)`` of each row of ``pool``."""
        memo = self.__dict__.setdefault("_home_kms", {})
        key = (id(pool), hotel["lat"], hotel["lon"])
        hit = memo.get(key)
        if hit is None or hit[0] is not pool:
            home = self._shared(("home", hotel["lat"], hotel["lon"]), pool,
                                lambda: [km(hotel, r) for r in pool])  # fmt: skip
            hit = memo[key] = (pool, home)
        return hit[1]

    def choose_hotel(self) -> dict[str, Any] | None:
        """The most central hotel (nearest to the restaurants and attractions the days need)
        among the affordable ones of the baseline's tier."""
        pool = list(self.hotels)
        if not pool:
            return None
        by_price = sorted(pool, key=lambda r: (r["price_per_night"], -r["rating"]))
        keep = max(1, (len(by_price) * (3 - self.thrift)) // 3)
        meals = self.meal_pools(self.dest)
        sights = self.sights[self.dest]
        pools = [meals["level"] or meals["any"], meals["breakfast"], sights[0] or sights[-1]]
        where = [tuple((r["lat"], r["lon"]) for r in p) for p in pools]
        where = [p for p in where if p]
        # the places are hashed once a call, not once a hotel; a pool's terms serve every
        # planner whose hotel search meets it (other preferences share the breakfast places)
        if len(SPREADS) >= SPREADS_KEPT and any(p not in SPREADS for p in where):
            SPREADS.clear()
        known = [(p, SPREADS.setdefault(p, {})) for p in where]

        def spread(hotel: dict) -> float:
            key = (hotel["lat"], hotel["lon"])
            terms = []
            for places, terms_of in known:
                term = terms_of.get(key)
                if term is None:
                    term = terms_of[key] = pool_spread(hotel, places)
                terms.append(term)
            return sum(terms)  # hotel_spread's sum: the same terms in the same order

        return min(by_price[:keep], key=spread)

    def time(self, picks: list[Pick], start: Pick | None) -> DayDraft:
        """:meth:`Planner.time` with :func:`solve_day` on the network's shape and the local
        legs between known coordinates remembered (:func:`estimate`). Remembered per planner
        by the picks' rows and legs (a copy each time: a chosen day's legs are updated)."""
        key = tuple((p.kind, p.city, id(p.row), id(p.leg)) if p else None for p in (start, *picks))
        memo = self.__dict__.setdefault("_timed", {})
        hit = memo.get(key)
        if hit is None:
            # the picks are held with the day: the ids of their rows and legs stay their own
            hit = memo[key] = (picks, start, super().time(picks, start))
        draft = hit[2]
        return DayDraft([Stop(**vars(s)) for s in draft.stops], [dict(x) for x in draft.locals],
                        draft.timed, draft.local_ok)  # fmt: skip

    def full_day(self) -> DayDraft:
        """The first template and pull meeting every rule, else the baseline's day."""
        for template in ORACLE_FULL_DAYS:
            for pull in ORACLE_PULLS:
                draft = self.try_template(template, None, self.hotel_pick(), "exact", pull)
                if draft is not None:
                    return draft
        if self.give_up:
            raise Unplannable("a day at the destination")
        return super().full_day()

    def travel_day(self, legs: list[dict], templates, start) -> DayDraft:
        """The first leg, template and pull meeting every rule (every meal kept), else the
        baseline's travel day."""
        arrival = templates is ARRIVAL_TEMPLATES
        fitting = [g for g in legs if fits_a_day(g, arrival)]
        for leg in fitting[:MAX_LEGS_TRIED]:
            for template in travel_shapes(leg, arrival):
                for pull in ORACLE_PULLS:
                    draft = self.try_template(template, leg, start, "exact", pull)
                    if draft is not None:
                        return draft
        if self.give_up:
            raise Unplannable("a travel day")
        return super().travel_day(legs, templates, start)


class OracleTripAgent:
    """Plans from the hidden profile through the tools (``reads_hidden_profile``: the episode
    hands it the profile; no other agent gets it)."""

    name = "oracle"
    keep_results = False
    reads_hidden_profile = True

    async def solve(self, request: TripRequest, env: TripToolSession,
                    profile: Any = None) -> str:  # fmt: skip
        if profile is None:
            raise ValueError("the oracle plans from the hidden profile; none was given")
        return OraclePlanner(request, env, profile.preferences).run()


def oracle_plan(instance: Any, conn: Any, give_up: bool = False, context: Any = None,
                session: Any = None) -> str | None:  # fmt: skip
    """The oracle's plan (JSON text) for ``instance`` over a read-only database connection
    (and optionally a shared tools context over it), without an episode around it; with
    ``give_up`` None as soon as a day cannot meet every rule (a quick test of whether the
    oracle can pass an instance). ``session`` (e.g. a :class:`CachedToolSession`) replaces
    the recording tool session."""
    env = session or TripToolSession(conn, keep_results=False, context=context)
    planner = OraclePlanner(TripRequest.of(instance), env, instance.profile.preferences, give_up)
    try:
        return planner.run()
    except Unplannable:
        return None


__all__ = ["OraclePlanner", "OracleTripAgent", "oracle_plan", "preferences_of"]
