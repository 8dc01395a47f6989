"""The scripted baseline (no model). Sole-planning: it reads the request's reference
information as a sandbox and plans from it. Two-stage: it gathers the same information through
the tools (CitySearch for a multi-city trip, then per city AccommodationSearch,
RestaurantSearch and AttractionSearch, per leg FlightSearch and GoogleDistanceMatrix, each
result written to the notebook), reads the notebook back as a sandbox and plans from it."""

from __future__ import annotations

from typing import Any

from travelgym.suites.travelplanner.agents.planner import Leg, build_plan, layout
from travelgym.suites.travelplanner.plans import plan_json
from travelgym.suites.travelplanner.records import Query
from travelgym.suites.travelplanner.sandbox_reference import ReferenceSandbox
from travelgym.suites.travelplanner.session import PlannerRequest, PlannerSession

MAX_CANDIDATES = 8  # cities of a state searched for a multi-city trip


def reference_cities(sandbox: ReferenceSandbox, org: str) -> list[str]:
    """The cities the reference describes accommodations of, in order (not the origin)."""
    seen: list[str] = []
    for row in sandbox.accommodation_rows:
        if row.city != org and row.city not in seen:
            seen.append(row.city)
    return seen


class ScriptedPlanner:
    """The scripted baseline in both modes (the request says which)."""

    name = "scripted"
    keep_results = True

    async def solve(self, request: PlannerRequest, env: PlannerSession) -> str | None:
        """Plan from the reference information (sole planning) or through the tools."""
        query = request.as_query()
        if request.mode == "sole-planning":
            sandbox = ReferenceSandbox(query)
            note = f"read {len(request.reference_information or [])} reference entries"
        else:
            sandbox = self.gather(query, env)
            note = f"planned from {len(env.notebook)} notebook entries"
        plan = plan_json(build_plan(query, sandbox, reference_cities(sandbox, query.org)))
        env.add_step(text=note, answer=True)
        return plan

    def gather(self, query: Query, env: PlannerSession) -> ReferenceSandbox:
        """Search what the plan needs, noting each result; the notebook as a sandbox."""
        if query.visiting_city_number == 1:
            candidates = [query.dest]
        else:
            found = self._call(env, "city_search", {"state": query.dest})
            candidates = [c for c in (found or {}).get("cities", []) if c != query.org]
        chosen: list[str] = []
        for city in candidates[:MAX_CANDIDATES]:
            rooms = self._call(env, "accommodation_search", {"city": city}, f"Accommodations in "
                               f"{city}")  # fmt: skip
            if not rooms or not rooms.get("count"):
                continue
            self._call(env, "restaurant_search", {"city": city}, f"Restaurants in {city}")
            self._call(env, "attraction_search", {"city": city}, f"Attractions in {city}")
            chosen.append(city)
            if len(chosen) == query.visiting_city_number:
                break
        for leg in self._legs(query, chosen):
            ends = {"departure_city": leg.origin, "destination_city": leg.destination}
            self._call(env, "flight_search", {**ends, "date": leg.date},
                       f"Flight from {leg.origin} to {leg.destination} on {leg.date}")  # fmt: skip
            for mode, label in (("self-driving", "Self-driving"), ("taxi", "Taxi")):
                self._call(env, "google_distance_matrix", {"origin": leg.origin,
                           "destination": leg.destination, "mode": mode},
                           f"{label} from {leg.origin} to {leg.destination}")  # fmt: skip
        env.add_step(text=f"searched {len(chosen)} cities and their legs")
        return ReferenceSandbox(query.model_copy(update={"reference_information": env.notebook}))

    def _legs(self, query: Query, cities: list[str]) -> list[Leg]:
        """Every leg of every visiting order of ``cities``, once each."""
        import itertools

        legs: dict[tuple[str, str, str], Leg] = {}
        for order in itertools.permutations(cities):
            for day in layout(query, list(order)):
                if isinstance(day, Leg):
                    legs.setdefault((day.origin, day.destination, day.date), day)
        return list(legs.values())

    def _call(self, env: PlannerSession, name: str, arguments: dict[str, Any],
              note: str | None = None) -> Any:  # fmt: skip
        record = env.call(name, arguments)
        if not record.ok:
            return None
        payload = env.payload(record)
        if note is not None:
            env.call("notebook_write", {"short_description": note})
        return payload
