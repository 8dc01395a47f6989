"""The ``oracle`` agent: the scripted planner told the hidden profile instead of inferring it.

It measures the benchmark, not a model: with the true preferences and every fact taken from the
9 tools (each call recorded like any agent's), a plan passing every applicable check should
exist and be found. It never reads the witness stored with an instance; the instance generator
runs this same planner to build that witness, so the oracle's score is the check that the tools,
the checks and the generator agree. Differences from the baseline's planning are only those the
true preferences license: main meals only at the preferred price level and environment, legs
only of the preferred mode and seat class, attractions only within the walking tolerance, and
POIs booked before are not avoided (no check asks for that).
"""

from __future__ import annotations

import time
from typing import Any

from travelgym.suites.behavior2trip.agents.base import TripRequest, TripToolSession
from travelgym.suites.behavior2trip.agents.infer import Inferred
from travelgym.suites.behavior2trip.agents.scripted import (
    ARRIVAL_TEMPLATES,
    DEPARTURE_TEMPLATES,
    FULL_DAY,
    MAX_LEGS_TRIED,
    Planner,
    _could_fit,
    _since,
)
from travelgym.suites.behavior2trip.agents.scripted_plan import DayDraft
from travelgym.suites.behavior2trip.agents.scripted_search import daytime, km
from travelgym.suites.behavior2trip.preferences import Preferences


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


# Days the baseline's templates miss: the whole arrival day at home before an evening leg, the
# whole departure day at home after a morning leg, a full day whose afternoon is one long visit.
ORACLE_ARRIVALS = ARRIVAL_TEMPLATES + (
    (("breakfast", "home", 8 * 60), ("attraction", "home", 9 * 60 + 30),
     ("lunch", "home", 12 * 60), ("attraction", "home", 14 * 60), ("dinner", "home", 17 * 60 + 15),
     ("leg",), ("hotel",)),
    (("breakfast", "home", 8 * 60), ("attraction", "home", 9 * 60 + 30),
     ("lunch", "home", 12 * 60), ("leg",), ("attraction", "dest", 16 * 60),
     ("dinner", "dest", 19 * 60), ("hotel",)),
    (("breakfast", "home", 8 * 60), ("attraction", "home", 9 * 60 + 30),
     ("lunch", "home", 12 * 60), ("attraction", "home", 14 * 60), ("leg",),
     ("dinner", "dest", 19 * 60 + 30), ("hotel",)),
    (("breakfast", "home", 7 * 60), ("leg",), ("attraction", "dest", 10 * 60),
     ("lunch", "dest", 12 * 60), ("attraction", "dest", 14 * 60), ("dinner", "dest", 18 * 60),
     ("hotel",)),
)  # fmt: skip
ORACLE_DEPARTURES = DEPARTURE_TEMPLATES + (
    (("breakfast", "dest", 6 * 60 + 30), ("leg",), ("attraction", "home", 11 * 60),
     ("lunch", "home", 12 * 60 + 30), ("attraction", "home", 14 * 60 + 30),
     ("dinner", "home", 18 * 60)),
    (("leg",), ("breakfast", "home", 9 * 60), ("attraction", "home", 10 * 60),
     ("lunch", "home", 12 * 60), ("attraction", "home", 14 * 60), ("dinner", "home", 18 * 60)),
    (("breakfast", "dest", 8 * 60), ("attraction", "dest", 9 * 60 + 30), ("leg",),
     ("lunch", "home", 13 * 60), ("dinner", "home", 17 * 60 + 30)),
)  # fmt: skip
ORACLE_FULL_DAYS = (
    FULL_DAY,
    (("breakfast", "dest", 8 * 60), ("attraction", "dest", 9 * 60 + 30),
     ("lunch", "dest", 12 * 60), ("attraction", "dest", 14 * 60), ("dinner", "dest", 17 * 60 + 30),
     ("hotel",)),
)  # fmt: skip
ORACLE_PULLS = (0.7, 2.0, 5.0, 12.0)
NEAREST = 12  # POIs of each pool that weigh in a hotel's centrality


class OraclePlanner(Planner):
    """:class:`Planner` with the true preferences and only the choices they allow."""

    strict = True

    def __init__(self, request: TripRequest, env: TripToolSession, prefs: Preferences) -> None:
        super().__init__(request, env)
        self.true_prefs = prefs

    def run(self) -> str:
        tick = time.perf_counter()
        self.prefs = preferences_of(self.true_prefs)
        self.env.add_step(text="took the hidden profile's preferences (oracle)",
                          think=f"plan for: {self.prefs.describe()}", duration_s=_since(tick))  # fmt: skip
        return self.plan_steps()

    def meal_pools(self, city: str) -> dict[str, list[dict]]:
        """Main meals only at the preferred price level and environment, when stated."""
        pools = super().meal_pools(city)
        if pools["level"] or (self.prefs.restaurant or {}).keys() & {"price_level", "environment"}:
            pools["any"] = pools["level"]
        return pools

    def legs(self, origin: str, destination: str, date: str) -> list[dict[str, Any]]:
        """Daytime legs of the preferred mode only (when one is preferred)."""
        legs = [g for g in super().legs(origin, destination, date) if daytime(g)]
        if self.prefs.mode is None:
            return legs
        return [g for g in legs if g["vocab"] == self.prefs.mode]

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

        def spread(hotel: dict) -> float:
            return sum(sum(sorted(km(hotel, r) for r in p)[:NEAREST]) for p in pools if p)

        return min(by_price[:keep], key=spread)

    def full_day(self) -> DayDraft:
        """The first template and pull meeting every rule, else the baseline's day."""
        for template in ORACLE_FULL_DAYS:
            for pull in ORACLE_PULLS:
                draft = self.try_template(template, None, self.hotel_pick(), "exact", pull)
                if draft is not None:
                    return draft
        return super().full_day()

    def travel_day(self, legs: list[dict], templates, start) -> DayDraft:
        """The first leg, template and pull meeting every rule (every meal kept), else the
        baseline's travel day."""
        options = ORACLE_ARRIVALS if templates is ARRIVAL_TEMPLATES else ORACLE_DEPARTURES
        for pull in ORACLE_PULLS:
            for leg in legs[:MAX_LEGS_TRIED]:
                for template in options:
                    if not _could_fit(template, leg):
                        continue
                    draft = self.try_template(template, leg, start, "exact", pull)
                    if draft is not None:
                        return draft
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


def oracle_plan(instance: Any, conn: Any) -> str:
    """The oracle's plan (JSON text) for ``instance`` over a read-only database connection,
    without an episode around it (the instance generator's witness)."""
    env = TripToolSession(conn, keep_results=False)
    return OraclePlanner(TripRequest.of(instance), env, instance.profile.preferences).run()


__all__ = ["OraclePlanner", "OracleTripAgent", "oracle_plan", "preferences_of"]

