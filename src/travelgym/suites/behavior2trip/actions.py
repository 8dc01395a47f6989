"""One logged user action of a behaviour trajectory (click, favourite, book) and its vocabulary."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from travelgym.suites.behavior2trip.preferences import City, PoiType

ActionType = Literal["click", "add_to_favorites", "book"]
ACTION_TYPES = ("click", "add_to_favorites", "book")
FOCUS_RANK = {"transport": 0, "hotel": 1, "attraction": 2, "restaurant": 2, "entertainment": 2}
CATEGORY_FOCUS = {"hotel_preferences": "hotel", "attraction_preferences": "attraction",
                  "dining_requirements": "restaurant", "transportation_preferences": "transport"}  # fmt: skip
YEAR = 2024


class Action(BaseModel):
    """One logged user action (Figure 1 / Figure 6)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    session: int
    action_type: ActionType
    timestamp: str  # ISO 8601, seconds, local time
    poi_id: str
    poi_name: str
    poi_type: PoiType
    city: City  # where the POI is (transport: the arrival city)
    categories: list[str]  # the POI's vocabulary labels (star level, cuisine, type, seat, ...)
    price: float | None = None  # CNY: per night, per person, ticket or fare
    origin: City | None = None  # transport: the departure city
