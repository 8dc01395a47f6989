"""The 9 Behavior2Trip tools (paper Table 7) in one registry."""

from __future__ import annotations

from travelgym.suites.behavior2trip.context import TripsContext
from travelgym.suites.behavior2trip.tools.mapguide import MapGuide
from travelgym.suites.behavior2trip.tools.pois import (
    AccommodationSearch,
    AttractionSearch,
    EntertainmentSearch,
    RestaurantSearch,
)
from travelgym.suites.behavior2trip.tools.sandboxed import Python
from travelgym.suites.behavior2trip.tools.transport import FlightSearch, TrainSearch, WeatherSearch
from travelgym.toolkit.toolset import ToolSet

TOOLS_INTRO = """The 9 tools of the Behavior2Trip paper (Table 7) over the POI database of 24
Chinese cities (see `database.md`). Dates run from 2025-10-01 to 2025-11-29. City names match
ignoring case, spacing and punctuation (`xian`, `Xi'an`, `XI AN`). Searches return at most `n`
results (1-50) in the order each tool states, with POI ids (`H00012` hotels, `R...` restaurants,
`A...` attractions, `E...` entertainment) that MapGuide and plans can use. A `preferences`
object takes the tool's preference keys with a value or a list of values of the paper's
vocabularies (Table 9); an unknown key or value is a `parameter` error listing the valid ones.
All database access is parameterised SQL on a read-only connection; Python runs in the
sandbox."""

TRIPS_TOOLS = (
    AccommodationSearch,
    AttractionSearch,
    EntertainmentSearch,
    FlightSearch,
    MapGuide,
    RestaurantSearch,
    TrainSearch,
    WeatherSearch,
    Python,
)


TRIPS_TOOLSET = ToolSet(
    TRIPS_TOOLS,
    "Behavior2Trip tool reference",
    TOOLS_INTRO,
    content_errors="a well-formed call that cannot be served: an unknown city or place, a city "
    "without an airport for FlightSearch, the same origin and destination city, a malformed or "
    "out-of-window date",
)
# the registry of the 9 tools (built once); the reference is docs/behavior2trip/tools.md
trips_registry = TRIPS_TOOLSET.registry

__all__ = [
    "TOOLS_INTRO",
    "TRIPS_TOOLS",
    "TRIPS_TOOLSET",
    "TripsContext",
    "trips_registry",
]
