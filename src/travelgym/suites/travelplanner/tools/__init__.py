"""The 7 tools of TravelPlanner's two-stage mode in one registry, over a
:class:`~travelgym.suites.travelplanner.sandbox.Sandbox` held in a :class:`PlannerContext`."""

from __future__ import annotations

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
from travelgym.toolkit.toolset import ToolSet

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


TOOLS_INTRO = ("TravelPlanner's two-stage tools (Xie et al., 2024) over the ingested database: "
               "searches reply with rows in TravelPlanner's column names; notebook_write records "
               "the last search's result for the planning stage.")  # fmt: skip
CONTENT_ERRORS = ("a well-formed call that cannot be served: a date that is not a calendar date, "
                  "a state with no city of the city set, notebook_write before any search")  # fmt: skip
PLANNER_TOOLSET = ToolSet(PLANNER_TOOLS, "TravelPlanner tool reference", TOOLS_INTRO,
                          CONTENT_ERRORS)  # fmt: skip
# the registry of the 7 tools (built once; state lives in the context) and their reference
planner_registry = PLANNER_TOOLSET.registry
render_reference = PLANNER_TOOLSET.reference


def make_registry() -> ToolRegistry:
    """The TravelPlanner tool registry (the same object on every call)."""
    return planner_registry()


__all__ = ["CONTENT_ERRORS", "PAPER_NAMES", "PLANNER_TOOLS", "PLANNER_TOOLSET", "TOOLS_INTRO",
           "PlannerContext", "make_registry", "planner_registry", "render_reference"]  # fmt: skip
