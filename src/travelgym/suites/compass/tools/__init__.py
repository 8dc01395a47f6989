"""The 18 COMPASS tools (paper Table 1 / Appendix D) in one registry."""

from __future__ import annotations

from travelgym.suites.compass.context import CompassContext
from travelgym.suites.compass.tools.flights import (
    get_airport_coordinates,
    get_flight_details,
    search_airports,
    search_flights,
)
from travelgym.suites.compass.tools.hotels import (
    get_hotel_details,
    get_room_details,
    search_hotel,
    search_location_name,
)
from travelgym.suites.compass.tools.permits import (
    get_permit_details,
    list_permits,
    search_permit_availability,
)
from travelgym.suites.compass.tools.utility import (
    calculate,
    calculate_distance,
    get_weekday,
    notebook,
)
from travelgym.suites.compass.tools.validation import (
    recommend_flight,
    recommend_hotel,
    recommend_permit,
)
from travelgym.toolkit.budget import RESULT_BUDGET_CHARS
from travelgym.toolkit.toolset import ToolSet

TOOLS_INTRO = f"""The 18 tools of the COMPASS paper (Table 1, Appendix D) over the booking database.
Dates are in August 2025. Searches return package IDs (see `package_ids.md`) with totals for
the requested stay and party; they are bounded to 20 results a page (fewer when 20 do not fit
the result size, below), ordered as each tool says, so an agent pages (`page`) or narrows its
filters to see more. All database access is parameterised SQL on a read-only connection.

**Result size.** A tool result an agent reads is at most {RESULT_BUDGET_CHARS:,} characters
of JSON (non-ASCII escaped, as a tool message carries it; `travelgym.toolkit.budget`). The tools
page by that budget, so no result is ever cut mid-document: a page of `search_hotel` or
`search_flights` holds up to 20 results and only as many whole results as fit (20 flight
packages never do), and a page cut short by the budget adds `next_page`, the page that
continues it; `pages` counts the pages so made, and following them visits every result once,
in order. `notebook`'s `list_all` pages its notes the same way (`page`; `page`, `pages` and
`next_page` appear when the notes take more than one page), and a note is kept up to
10,000 characters of JSON. The other lists (a park's airports and permits, a permit's dates,
a hotel's rooms, 5 place matches) are bounded by the database and always fit. A result that
would still exceed the budget (an agent's own oversized argument echoed back) is answered by
the agent layer with a complete JSON document: the leading whole items of its largest list and
a `truncated` note, or a `result_too_large` error."""

COMPASS_TOOLS = (
    search_hotel,
    get_hotel_details,
    get_room_details,
    search_location_name,
    search_airports,
    search_flights,
    get_flight_details,
    get_airport_coordinates,
    list_permits,
    search_permit_availability,
    get_permit_details,
    notebook,
    get_weekday,
    calculate,
    calculate_distance,
    recommend_hotel,
    recommend_flight,
    recommend_permit,
)


COMPASS_TOOLSET = ToolSet(
    COMPASS_TOOLS,
    "COMPASS tool reference",
    TOOLS_INTRO,
    content_errors="a well-formed call that cannot be served: unknown park, hotel, airport or "
    "permit, a malformed or out-of-window date, a package ID that is malformed or names nothing",
)
# the registry of the 18 tools (built once); the reference is docs/compass/tools.md
compass_registry = COMPASS_TOOLSET.registry

__all__ = [
    "COMPASS_TOOLS",
    "COMPASS_TOOLSET",
    "TOOLS_INTRO",
    "CompassContext",
    "compass_registry",
]
