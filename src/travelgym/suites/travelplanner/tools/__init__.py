"""The 7 tools of TravelPlanner's two-stage mode in one registry, over a
:class:`~travelgym.suites.travelplanner.sandbox.Sandbox` held in a :class:`PlannerContext`."""

from __future__ import annotations

from functools import lru_cache

from travelgym.suites.travelplanner.tools.context import PlannerContext
from travelgym.suites.travelplanner.tools.search import (
    accommodation_search,
    attraction_search,
    city_search,
    flight_search,
    google_distance_matrix,
    notebook_write,
    restaurant_search,
)
from travelgym.toolkit import ToolRegistry

PLANNER_TOOLS = (
    flight_search,
    google_distance_matrix,
    accommodation_search,
    restaurant_search,
    attraction_search,
    city_search,
    notebook_write,
)
# the names TravelPlanner's prompts use, for agents and reports that speak them
PAPER_NAMES = {
    "flight_search": "FlightSearch",
    "google_distance_matrix": "GoogleDistanceMatrix",
    "accommodation_search": "AccommodationSearch",
    "restaurant_search": "RestaurantSearch",
    "attraction_search": "AttractionSearch",
    "city_search": "CitySearch",
    "notebook_write": "NotebookWrite",
}


@lru_cache(maxsize=1)
def planner_registry() -> ToolRegistry:
    """The registry of the 7 TravelPlanner tools (built once; state lives in the context)."""
    return ToolRegistry(PLANNER_TOOLS)


def make_registry() -> ToolRegistry:
    """The TravelPlanner tool registry (the same object on every call)."""
    return planner_registry()


__all__ = ["PAPER_NAMES", "PLANNER_TOOLS", "PlannerContext", "make_registry", "planner_registry"]
