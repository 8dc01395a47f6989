"""The scripted Behavior2Trip baseline: no LLM. It reads the behaviour trajectory with simple
rules (:mod:`~travelgym.suites.behavior2trip.agents.infer`), gathers hotels, restaurants, attractions,
entertainment, transport, weather and routes through the tools, and assembles a complete,
time-consistent day-by-day plan in the plan format: three meals in their windows, one hotel
checked into after 18:00, one or two attractions a day, legs and gaps timed by
:mod:`~travelgym.suites.behavior2trip.agents.schedule`, cheaper choices when the budget is exceeded.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from typing import Any

from travelgym.suites.behavior2trip.agents.base import TripRequest, TripToolSession
from travelgym.suites.behavior2trip.agents.infer import infer_preferences
from travelgym.suites.behavior2trip.agents.schedule import Stop, fallback_times, solve_day
from travelgym.suites.behavior2trip.agents.scripted_plan import (  # the templates: re-exported
    ARRIVAL_TEMPLATES,
    DEPARTURE_TEMPLATES,
    FULL_DAY,
    DayDraft,
    Pick,
    plan_cost,
    render_day,
    weather_text,
)
from travelgym.suites.behavior2trip.agents.scripted_search import (
    BREAKFAST_CUISINES,
    DAY,
    Toolbox,
    daytime,
    hours_of,
    km,
    leg_options,
)

MODES = ("High-speed Rail", "Airplane", "Regular Train", "Long-distance Bus")
MAX_LEGS_TRIED = 12
THRIFT_LEVELS = (0, 1, 2)
LOCAL_DAILY_LIMIT = 120  # minutes of local transport a day (Table 8)
PRICE_UNIT = 40.0  # CNY that weigh as much as one km when saving money
LEVELS = ("exact", "timed", "any")
DROP_ORDER = ("entertainment", "attraction", "lunch", "breakfast", "dinner", "hotel")
PULLS = (0.7, 2.0, 5.0)  # how strongly a day's POIs are drawn towards the hotel


class ScriptedTripAgent:
    """The rule-based baseline (needs no model; tool results are not kept in the trajectory)."""

    name = "scripted"
    keep_results = False

    async def solve(self, request: TripRequest, env: TripToolSession) -> str:
        if not request.trajectory_withheld:
            return Planner(request, env).run()
        from travelgym.suites.behavior2trip.clarify_agent import ask_preferences

        planner = Planner(request, env)  # RQ1: ask the user (when allowed) instead of inferring
        planner.prefs = await ask_preferences(request, env)
        return planner.plan_steps()


class Planner:
    solve_day = staticmethod(solve_day)  # times a day's stops (an oracle solves faster)

    def __init__(self, request: TripRequest, env: TripToolSession) -> None:
        self.request, self.env, self.thrift = request, env, 0
        self.ins = request.instruction
        self.home, self.dest = self.ins.departure_city, self.ins.destination_city
        self.box = Toolbox(env, self.ins.travellers)

    def run(self) -> str:
        """The episode: infer, search, assemble, deliver. Each step's thought (what it is about to
        do, what is known) is written before its calls (begin_step), as in a gold chain."""
        tick = time.perf_counter()
        self.env.begin_step("first I infer the traveller's hotel, attraction, restaurant and "
                            "transport preferences from its clicks, favourites and bookings")  # fmt: skip
        self.prefs = infer_preferences(self.request.trajectory)
        self.env.add_step(text="read the behaviour trajectory", duration_s=_since(tick))
        return self.plan_steps()

    def plan_steps(self) -> str:
        """Everything after the preferences are known: search, assemble, deliver."""
        tick = time.perf_counter()
        self.env.begin_step(f"preferences: {self.prefs.describe()}. I will search "
                            f"{self.dest} for hotels, attractions and entertainment that match "
                            f"them, and its weather for the {self.ins.days} days from "
                            f"{self.ins.start_date}")  # fmt: skip
        self.gather()
        self.env.add_step(text=f"search {self.dest}", duration_s=_since(tick))
        tick = time.perf_counter()
        budget = self.ins.budget_cny  # 0: the request states none
        self.env.begin_step(f"found {len(self.hotels)} hotels, {len({r['id'] for tier in self.sights[self.dest] for r in tier})} "
                            f"attractions, {len(self.fun)} entertainment venues and {len(self.weather)} "
                            f"days of weather in {self.dest}. I will search restaurants and the {self.home}-"
                            f"{self.dest} transport, route and time each day"
                            + (f", and choose cheaper places if the plan costs more than the budget "
                               f"of {budget:,} CNY" if budget else ""))  # fmt: skip
        best: tuple[float, list[dict]] | None = None
        for thrift in THRIFT_LEVELS:
            self.thrift = thrift
            days = self.assemble()
            cost = plan_cost(days, self.ins.travellers, self.ins.rooms)
            if best is None or cost < best[0]:
                best = (cost, days)
            if not budget or cost <= budget:  # no budget stated: the first plan is the plan
                break
        self.env.add_step(text="route and time the days", duration_s=_since(tick))
        answer = json.dumps(best[1], ensure_ascii=False)
        verdict = (
            "no budget was stated"
            if not budget
            else f"{'within' if best[0] <= budget else 'over'} the budget of {budget:,} CNY"
        )
        self.env.begin_step(f"the routed plan costs {best[0]:,.0f} CNY in total, {verdict}")
        self.env.add_step(text="deliver the plan", answer=True)
        return answer

    def gather(self) -> None:
        """The searches every plan needs (more are made on demand, all cached)."""
        p = self.prefs
        self.hotels = self._first(
            ("AccommodationSearch", self.dest, p.hotel),
            ("AccommodationSearch", self.dest, p.hotel and {"star_rating": p.hotel["star_rating"]}),
            ("AccommodationSearch", self.dest, None),
        )  # fmt: skip
        self.sights = {self.dest: self.attraction_pools(self.dest)}
        self.fun = self.box.search("EntertainmentSearch", self.dest, p.entertainment, n=20)
        weather = self.box.call("WeatherSearch", city=self.dest, date=self.ins.start_date,
                                n=self.ins.days) or {}  # fmt: skip
        self.weather = {w["date"]: weather_text(w) for w in weather.get("results", [])}
        self.city_info = weather.get("description") or f"{self.dest}, China."

    def _first(self, *searches) -> list[dict]:
        """The results of the first search that finds anything."""
        for name, city, prefs in searches:
            rows = self.box.search(name, city, prefs)
            if rows:
                return rows
        return []

    def attraction_pools(self, city: str) -> list[list[dict]]:
        """Attractions of a city in tiers: of the inferred types, of types only clicked, then
        any within the inferred walking tolerance (never one the user already booked)."""
        p = self.prefs
        walk = {k: v for k, v in (p.attraction or {}).items() if k == "walk_tolerance"}
        tiers = [self.box.search("AttractionSearch", city, p.attraction) if p.attraction else []]
        if p.weak_attraction_types:
            weak = {"attraction_type": p.weak_attraction_types, **walk}
            tiers.append(self.box.search("AttractionSearch", city, weak))
        tiers.append(self.box.search("AttractionSearch", city, walk or None))
        return [[r for r in tier if r["id"] not in p.booked] for tier in tiers]

    def meal_pools(self, city: str) -> dict[str, list[dict]]:
        """Restaurants of a city in tiers: ``breakfast`` places (opening early); for main meals
        ``cuisine`` (a preferred cuisine at the preferred price level and environment),
        ``weak`` (the same with cuisines only clicked), ``level`` (that price level and
        environment) and ``any``."""
        r = self.prefs.restaurant or {}
        level = {k: v for k, v in r.items() if k in ("price_level", "environment")}
        weak = {**level, "cuisine": self.prefs.weak_cuisines}
        return {
            "cuisine": self.box.search("RestaurantSearch", city, r) if r.get("cuisine") else [],
            "weak": self.box.search("RestaurantSearch", city, weak) if weak["cuisine"] else [],
            "level": self.box.search("RestaurantSearch", city, level) if level else [],
            "any": self.box.search("RestaurantSearch", city, None),
            "breakfast": self.box.search("RestaurantSearch", city, {"cuisine": BREAKFAST_CUISINES}),
        }

    # --- the plan ------------------------------------------------------------------------------

    def assemble(self) -> list[dict[str, Any]]:
        self.used: set[str] = set()
        self.hotel = self.choose_hotel()
        n = self.ins.days
        drafts = [self.arrival_day()]
        for _ in range(1, n - 1):
            drafts.append(self.full_day())
        drafts.append(self.departure_day())
        return [render_day(d, i, self.ins, self.weather, self.city_info)
                for i, d in enumerate(drafts, start=1)]  # fmt: skip

    def choose_hotel(self) -> dict[str, Any] | None:
        pool = list(self.hotels)
        if not pool:
            return None
        by_price = sorted(pool, key=lambda r: (r["price_per_night"], -r["rating"]))
        if self.thrift >= 2:
            return by_price[0]
        if self.thrift == 1:
            good = [r for r in by_price if r["rating"] >= 4.0]
            return (good or by_price)[0]
        cheaper = by_price[: max(1, (len(by_price) * 3) // 5)]
        return max(cheaper, key=lambda r: (r["rating"], r["review_count"]))

    def arrival_day(self) -> DayDraft:
        legs = self.legs(self.home, self.dest, self.ins.start_date)
        return self.travel_day(legs, ARRIVAL_TEMPLATES, start=None)

    def departure_day(self) -> DayDraft:
        legs = self.legs(self.dest, self.home, self.ins.end_date)
        return self.travel_day(legs, DEPARTURE_TEMPLATES, start=self.hotel_pick())

    def full_day(self) -> DayDraft:
        """A day at the destination: the first pull meeting every rule, else the timed day with
        the least local transport."""
        for pull in PULLS:
            draft = self.try_template(FULL_DAY, None, self.hotel_pick(), "exact", pull)
            if draft is not None:
                return draft
        used, best = self.used, None
        for pull in PULLS:
            self.used = set(used)
            draft = self.try_template(FULL_DAY, None, self.hotel_pick(), "timed", pull)
            if draft is not None and (best is None or draft.local_minutes < best[0].local_minutes):
                best = (draft, self.used)
        if best is not None:
            self.used = best[1]
            return best[0]
        self.used = used
        return self.try_template(FULL_DAY, None, self.hotel_pick(), "any", PULLS[0])

    def hotel_pick(self) -> Pick | None:
        return Pick("hotel", self.dest, self.hotel) if self.hotel else None

    def travel_day(self, legs: list[dict], templates, start: Pick | None) -> DayDraft:
        """The first leg and template (in preference order: legs of the inferred mode first)
        meeting the rules, else the one that breaks the fewest."""
        wanted = [g for g in legs if g["vocab"] == self.prefs.mode]
        groups = [wanted, [g for g in legs if g not in wanted]] if wanted else [legs]
        variants = [t for template in templates for t in _without_a_meal(template)]
        for group in groups:
            for level, options in (("exact", templates), ("timed", templates), ("timed", variants)):
                for pull in PULLS:
                    for leg in group[:MAX_LEGS_TRIED]:
                        for template in options:
                            if not _could_fit(template, leg):
                                continue
                            draft = self.try_template(template, leg, start, level, pull)
                            if draft is not None:
                                return draft
        leg = next((g for group in groups for g in group), None)
        template = templates[0] if leg else tuple(s for s in templates[0] if s[0] != "leg")
        return self.try_template(template, leg, start, "any", PULLS[0])

    def legs(self, origin: str, destination: str, date: str) -> list[dict[str, Any]]:
        """Candidate legs: the inferred mode first (daytime ones by price), then the others."""
        wanted = self.prefs.mode
        order = ([wanted] if wanted else []) + [m for m in MODES if m != wanted]
        daytime_legs, night_legs = [], []
        for mode in order:
            options = self.options(origin, destination, date, mode)
            options.sort(key=lambda g: (g["price"], g["dep"]))
            daytime_legs += [g for g in options if daytime(g)]
            night_legs += [g for g in options if not daytime(g)]
        if wanted is None:
            daytime_legs.sort(key=lambda g: g["price"])
        return daytime_legs + night_legs

    def options(self, origin: str, destination: str, date: str, mode: str) -> list[dict[str, Any]]:
        """The legs of one mode on a date (:func:`leg_options`, a new list)."""
        return leg_options(self.box, origin, destination, date, mode, self.prefs.seat)

    # --- one day from a template -----------------------------------------------------------

    def pick_slots(self, template, leg: dict | None, start: Pick | None, level: str,
                   pull: float, admit: Callable[[Pick | None, Pick], bool] | None = None,
                   ) -> tuple[list[Pick], set] | None:  # fmt: skip
        """The template's slots filled in order from ``start`` and the POI ids then used, or
        None when a slot has no POI (below level ``any``) or ``admit(previous, pick)`` refuses
        a pick (a caller's bound on the day so far)."""
        used = set(self.used)
        picks: list[Pick] = []
        where = start
        has_pref = {"attraction": False, "meal": False}
        for slot in template:
            if slot[0] == "leg":
                if leg is None:
                    continue
                pick = Pick("leg", leg["from_city"], leg=leg)
            elif slot[0] == "hotel":
                if self.hotel is None:
                    continue
                pick = Pick("hotel", self.dest, self.hotel)
            else:
                kind, role, hint = slot
                city = self.home if role == "home" else self.dest
                pick = self.choose(kind, city, hint, where, used, has_pref, pull)
                if pick is None:
                    if level == "any":
                        continue
                    return None
                used.add(pick.row["id"])
            if admit is not None and not admit(where, pick):
                return None
            picks.append(pick)
            where = pick
        return picks, used

    def try_template(self, template, leg: dict | None, start: Pick | None, level: str,
                     pull: float) -> DayDraft | None:  # fmt: skip
        """Choose POIs for the template's slots, route and time them; None when the day does
        not meet ``level`` (see :meth:`DayDraft.meets`)."""
        chosen = self.pick_slots(template, leg, start, level, pull)
        if chosen is None:
            return None
        picks, used = chosen
        draft = self.time(picks, start)
        if level == "any" and not draft.timed:
            draft = self.best_effort(picks, start) or draft
        if not draft.meets(level):
            return None
        self.used = used
        for leg in draft.locals:  # the chosen routes, asked of MapGuide (same formula)
            leg.update(self.box.route(leg["city"], leg["origin"], leg["target"]))
        return draft

    def best_effort(self, picks: list[Pick], start: Pick | None) -> DayDraft | None:
        """A timed day without a few of its stops (those that cannot fit), if any."""
        order = sorted((i for i, p in enumerate(picks) if p.leg is None),
                       key=lambda i: DROP_ORDER.index(picks[i].kind))  # fmt: skip
        for size in (1, 2, 3, 4):
            for drop in itertools.combinations(order, size):
                draft = self.time([p for i, p in enumerate(picks) if i not in drop], start)
                if draft.timed:
                    return draft
        return None

    def choose(self, kind: str, city: str, hint: int, near: Pick | None, used: set[str],
               has_pref: dict[str, bool], pull: float) -> Pick | None:  # fmt: skip
        """The closest suitable unused POI for a slot (cheaper ones weigh in when saving)."""
        anchor = self.anchor(near, city)
        home = self.hotel if city == self.dest else None

        def best(pool: list[dict], price: str, lo: int, hi: int) -> dict | None:
            fits = [r for r in pool if r["id"] not in used and _open(r, lo, hi)]
            if not fits:
                return None
            return min(fits, key=lambda r: self._score(r, anchor, home, pull, price))

        return self.first_fit(kind, city, hint, has_pref, best)

    def first_fit(self, kind: str, city: str, hint: int, has_pref: dict[str, bool],
                  best: Callable[[list[dict], str, int, int], dict | None]) -> Pick | None:  # fmt: skip
        """The slot's pick from the first of its pools (today's preferred tiers first while
        the day has none of them) where ``best(pool, price key, opens by, closes after)`` finds
        a row; a pick from a preferred tier marks ``has_pref``."""
        preferred: list[list[dict]] = []  # tiers that satisfy today's preference slot
        if kind == "attraction":
            if city not in self.sights:
                self.sights[city] = self.attraction_pools(city)
            *preferred, others = self.sights[city]
            pools = [others, self.fun]
            need, price, flag = (
                (hint, hint + (180 if hint >= 14 * 60 else 90)),
                "ticket_price",
                kind,
            )
        else:
            meals = self.meal_pools(city)
            if kind == "breakfast":
                pools, need, flag = [meals["breakfast"]], (hint, hint + 45), None
            else:
                preferred = [meals["cuisine"], meals["weak"]]
                pools, need, flag = [meals["level"], meals["any"]], (hint, hint + 60), "meal"
            price = "price_per_person"
        if flag and not has_pref[flag]:
            pools = preferred + pools
        lo, hi = need
        for pool in pools:
            row = best(pool, price, lo, hi)
            if row is None:
                continue
            if flag and any(pool is t for t in preferred):
                has_pref[flag] = True  # today's preferred (or likely preferred) one
            return Pick("entertainment" if pool is self.fun else kind, city, row)
        return None

    def _score(self, row: dict, anchor: dict | None, hotel: dict | None, pull: float,
               price_key: str) -> float:  # fmt: skip
        """Lower is better: km from the previous stop and (pulled) from the hotel, the price
        when saving, a little for the rating."""
        distance = km(anchor, row) if anchor else 0.0
        if hotel is not None:
            distance += pull * km(hotel, row)
        return distance + self.thrift * (row.get(price_key) or 0) / PRICE_UNIT - row["rating"] / 10

    def anchor(self, near: Pick | None, city: str) -> dict | None:
        """Coordinates to choose near: the previous stop, else the hotel or the city centre."""
        if near is not None and near.city_out == city:
            if near.row is not None:
                return near.row
            return self.locate(city, near.place_out)
        if city == self.dest and self.hotel:
            return self.hotel
        return self.locate(city, city)

    def coords(self, pick: Pick, out: bool) -> dict | None:
        """Where a stop is (a leg: its arrival or departure station or airport)."""
        if pick.row is not None:
            return pick.row
        return self.locate(
            pick.city_out if out else pick.city, pick.place_out if out else pick.place_in
        )

    def locate(self, city: str, place: str) -> dict | None:
        return self.box.locate(city, place)

    def _local_route(self, prev: Pick, pick: Pick) -> dict[str, Any]:
        """The local leg from ``prev`` to ``pick`` (in one city), asked of MapGuide (with
        both ends' coordinates when known)."""
        ends = (self.coords(prev, out=True), self.coords(pick, out=False))
        return self.box.route(pick.city, prev.place_out, pick.place_in,
                              ends if None not in ends else None)  # fmt: skip

    def time(self, picks: list[Pick], start: Pick | None) -> DayDraft:
        """Route consecutive stops and solve the day's timing."""
        stops, locals_ = [], []
        prev = start
        for pick in picks:
            hours = _hours(pick.row) if pick.row is not None and pick.kind != "hotel" else None
            stop = Stop(pick.kind if pick.kind != "entertainment" else "attraction", ref=pick,
                        hours=hours)  # fmt: skip
            if pick.leg is not None:
                stop.fixed = (pick.leg["dep"], pick.leg["arr"])
            if pick.kind in ("attraction", "entertainment"):
                stop.longest = int(max(90, 1.5 * 60 * (pick.row.get("duration_hours") or 2)))
            if prev is not None and prev.city_out == pick.city:
                route = self._local_route(prev, pick)
                after = len(stops) - 1 if stops else None  # leaves when that stop ends
                locals_.append({"from": prev.label_out, "to": pick.label_in, "after": after,
                                "before": len(stops), "city": pick.city, "origin": prev.place_out,
                                "target": pick.place_in, **route})  # fmt: skip
                if stops:
                    stops[-1].travel = route["minutes"]
                elif stop.hours is not None or stop.kind == "breakfast":  # leave at 06:00 or later
                    lo, hi = stop.hours or (0, 2 * DAY)
                    stop.hours = (max(lo, 6 * 60 + route["minutes"]), hi)
            elif stops:
                stops[-1].travel = 0
            stops.append(stop)
            prev = pick
        timed = self.solve_day(stops) or self.solve_day(stops, relaxed=True)
        if not timed:
            fallback_times(stops)
        if stops and stops[-1].kind == "hotel":  # check in once the day is over
            stops[-1].start = stops[-1].end = max(stops[-1].start, 18 * 60)
        draft = DayDraft(stops, locals_, timed)
        draft.local_ok = draft.local_minutes <= LOCAL_DAILY_LIMIT
        return draft


# --- helpers -----------------------------------------------------------------------------------


def _could_fit(template, leg: dict[str, Any]) -> bool:
    """Whether the template can be timed around the leg at all (ideal places: no travel,
    always open); cached per template and leg times."""
    key = (template, leg["dep"], leg["arr"])
    if key not in _FIT_CACHE:
        stops = [Stop("leg", fixed=(leg["dep"], leg["arr"])) if slot[0] == "leg" else Stop(slot[0], longest=240)
                 for slot in template]  # fmt: skip
        _FIT_CACHE[key] = solve_day(stops, relaxed=True)
    return _FIT_CACHE[key]


_FIT_CACHE: dict[tuple, bool] = {}


def _without_a_meal(template) -> list[tuple]:
    """The template once without each of its meals (for legs that leave no time for one)."""
    meals = [i for i, slot in enumerate(template) if slot[0] in ("breakfast", "lunch", "dinner")]
    return [tuple(s for j, s in enumerate(template) if j != i) for i in meals]


def _open(row: dict[str, Any], start: int, end: int) -> bool:
    hours = _hours(row)
    return hours is None or (hours[0] <= start and end <= hours[1])


def _hours(row: dict[str, Any]) -> tuple[int, int] | None:
    """:func:`hours_of`, cached by opening and closing time."""
    key = (row.get("open_time"), row.get("close_time"))
    if key not in _HOURS_CACHE:
        _HOURS_CACHE[key] = hours_of(row)
    return _HOURS_CACHE[key]


_HOURS_CACHE: dict[tuple, tuple[int, int] | None] = {}


def _since(tick: float) -> float:
    return round(time.perf_counter() - tick, 4)
