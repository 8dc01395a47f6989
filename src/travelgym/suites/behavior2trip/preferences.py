"""The Behavior2Trip preference schema (paper Table 9): 14 attributes in 5 dimensions, typed.

Values are the vocabularies of :mod:`travelgym.suites.behavior2trip.vocab`. Four dimensions are *preference
categories* (hotel, attraction, dining, transportation): a profile activates one (Easy), several
(Medium) or all four (Hard); an inactive category is ``None``. The fifth dimension, historical
travel experiences, is always present and is filled from the POIs the user booked in the behaviour
trajectory. The ``*_match`` helpers say whether a POI's labels satisfy a category's preferences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from travelgym.suites.behavior2trip import vocab

StarLevel = Literal[vocab.STAR_LEVELS]  # type: ignore[valid-type]
Facility = Literal[vocab.FACILITIES]  # type: ignore[valid-type]
AttractionType = Literal[vocab.ATTRACTION_TYPES]  # type: ignore[valid-type]
WalkingTolerance = Literal[vocab.WALKING_TOLERANCE]  # type: ignore[valid-type]
Cuisine = Literal[vocab.CUISINES]  # type: ignore[valid-type]
PriceLevel = Literal[vocab.PRICE_LEVELS]  # type: ignore[valid-type]
DiningEnvironment = Literal[vocab.DINING_ENVIRONMENTS]  # type: ignore[valid-type]
IntercityTransport = Literal[vocab.INTERCITY_TRANSPORT]  # type: ignore[valid-type]
IntracityTransport = Literal[vocab.INTRACITY_TRANSPORT]  # type: ignore[valid-type]
SeatClass = Literal[vocab.SEAT_CLASSES]  # type: ignore[valid-type]
City = Literal[vocab.CITIES]  # type: ignore[valid-type]
PoiType = Literal["hotel", "restaurant", "attraction", "entertainment", "flight", "train", "bus"]

# the four preference categories (dimensions a profile can activate), in Table 9 order
CATEGORIES: tuple[str, ...] = (
    "hotel_preferences",
    "attraction_preferences",
    "dining_requirements",
    "transportation_preferences",
)
# preference category -> the POI types its preferences constrain
CATEGORY_POI_TYPES: dict[str, tuple[str, ...]] = {
    "hotel_preferences": ("hotel",),
    "attraction_preferences": ("attraction",),
    "dining_requirements": ("restaurant",),
    "transportation_preferences": ("flight", "train", "bus"),
}
POI_TYPE_CATEGORY = {t: c for c, ts in CATEGORY_POI_TYPES.items() for t in ts}
# intercity mode -> the POI type that carries it; seat classes that exist for that mode
MODE_POI_TYPE = {"Airplane": "flight", "High-speed Rail": "train", "Regular Train": "train",
                 "Long-distance Bus": "bus"}  # fmt: skip
MODE_SEATS = {"Airplane": vocab.FLIGHT_SEAT_CLASSES, "High-speed Rail": vocab.TRAIN_SEAT_CLASSES,
              "Regular Train": vocab.TRAIN_SEAT_CLASSES, "Long-distance Bus": ()}  # fmt: skip


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _unique(values: list) -> list:
    if len(set(values)) != len(values):
        raise ValueError(f"duplicate values: {values}")
    return values


class Experience(_Model):
    """One past booking (a hotel stay, a meal, a visit, a flight or train ride)."""

    poi_id: str
    name: str
    poi_type: PoiType
    city: City
    date: str  # YYYY-MM-DD of the booking action
    labels: list[str] = Field(default_factory=list)


class HistoricalTravelExperiences(_Model):
    accommodations: list[Experience] = Field(default_factory=list)
    restaurants: list[Experience] = Field(default_factory=list)
    attractions: list[Experience] = Field(default_factory=list)
    transportation: list[Experience] = Field(default_factory=list)


class HotelPreferences(_Model):
    star_requirement: list[StarLevel] = Field(min_length=1)
    essential_facilities: list[Facility] = Field(default_factory=list)

    _check = field_validator("star_requirement", "essential_facilities")(_unique)


class AttractionPreferences(_Model):
    preferred_attraction_types: list[AttractionType] = Field(min_length=1)
    walking_tolerance: WalkingTolerance | None = None

    _check = field_validator("preferred_attraction_types")(_unique)


class DiningRequirements(_Model):
    cuisine_preferences: list[Cuisine] = Field(min_length=1)
    price_level: PriceLevel | None = None
    dining_environment: DiningEnvironment | None = None

    _check = field_validator("cuisine_preferences")(_unique)


class TransportationPreferences(_Model):
    intercity_transport: IntercityTransport
    intracity_transport: IntracityTransport | None = None
    seat_class: SeatClass | None = None


class Preferences(_Model):
    """The 5 dimensions; an inactive preference category is ``None``."""

    historical_travel_experiences: HistoricalTravelExperiences = Field(
        default_factory=HistoricalTravelExperiences
    )
    hotel_preferences: HotelPreferences | None = None
    attraction_preferences: AttractionPreferences | None = None
    dining_requirements: DiningRequirements | None = None
    transportation_preferences: TransportationPreferences | None = None

    @property
    def categories(self) -> list[str]:
        """The active preference categories, in Table 9 order."""
        return [c for c in CATEGORIES if getattr(self, c) is not None]

    def attributes(self) -> list[str]:
        """``dimension.attribute`` for every attribute with a value (of the 14)."""
        out = []
        for dim, names in vocab.PREFERENCE_DIMENSIONS.items():
            section = getattr(self, dim)
            for name in names:
                if section is not None and getattr(section, name) not in (None, []):
                    out.append(f"{dim}.{name}")
        return out

    def poi_types(self) -> list[str]:
        """POI types whose choice these preferences constrain."""
        out = []
        for cat in self.categories:
            if cat == "transportation_preferences":
                out.append(MODE_POI_TYPE[self.transportation_preferences.intercity_transport])
            else:
                out.extend(CATEGORY_POI_TYPES[cat])
        return out


# --- does a POI satisfy the preferences? ---------------------------------------------------------

FOCUS = {"hotel": "hotel", "restaurant": "restaurant", "attraction": "attraction",
         "entertainment": "entertainment", "flight": "transport", "train": "transport",
         "bus": "transport"}  # fmt: skip


def focus_of(poi_type: str) -> str:
    """The browsing category of a POI type (flights, trains and buses are all ``transport``)."""
    return FOCUS[poi_type]


@dataclass(frozen=True, slots=True)
class Poi:
    """A POI or transport service with the vocabulary values preferences are matched against.

    ``kind``: star level (hotel), cuisine (restaurant), attraction type, entertainment type or
    intercity mode (transport). ``level``: price level (restaurant), walking level (attraction)
    or seat class (transport). ``city`` is the arrival city of a transport service.
    """

    poi_id: str
    name: str
    poi_type: str
    city: str
    price: float
    kind: str
    level: str | None = None
    env: str | None = None  # dining environment
    facilities: tuple[str, ...] = ()
    origin: str | None = None  # departure city of a transport service

    @property
    def focus(self) -> str:
        return FOCUS[self.poi_type]

    def labels(self) -> list[str]:
        """The vocabulary labels shown with the POI in a trajectory."""
        out = [self.kind]
        if self.level:
            out.append(self.level)
        if self.env:
            out.append(self.env)
        out.extend(self.facilities)
        return out


def poi_matches(prefs: Preferences, poi: Poi) -> bool:
    """True when ``poi`` satisfies the preference category that governs its type (an inactive
    category constrains nothing)."""
    t = poi.poi_type
    if t == "hotel":
        h = prefs.hotel_preferences
        return h is None or hotel_match(h, poi.kind, set(poi.facilities))
    if t == "restaurant":
        r = prefs.dining_requirements
        return r is None or dining_match(r, poi.kind, poi.level, poi.env)
    if t == "attraction":
        a = prefs.attraction_preferences
        return a is None or attraction_match(a, poi.kind, poi.level)
    if t in ("flight", "train", "bus"):
        tr = prefs.transportation_preferences
        return tr is None or transport_match(tr, poi.kind, poi.level)
    return True


def hotel_match(prefs: HotelPreferences, star: str, facilities: set[str]) -> bool:
    return star in prefs.star_requirement and set(prefs.essential_facilities) <= facilities


def attraction_match(prefs: AttractionPreferences, kind: str, walking: str | None) -> bool:
    if kind not in prefs.preferred_attraction_types:
        return False
    return prefs.walking_tolerance is None or walking_ok(prefs.walking_tolerance, walking)


def walking_ok(tolerance: str, walking: str | None) -> bool:
    """A visit needing ``walking`` is fine for a user with ``tolerance`` (Low < Medium < High)."""
    if walking is None:
        return True
    order = vocab.WALKING_TOLERANCE
    return order.index(walking) <= order.index(tolerance)


def dining_match(
    prefs: DiningRequirements, cuisine: str, price_level: str, environment: str
) -> bool:
    if cuisine not in prefs.cuisine_preferences:
        return False
    if prefs.price_level is not None and price_level != prefs.price_level:
        return False
    return prefs.dining_environment is None or environment == prefs.dining_environment


def transport_match(prefs: TransportationPreferences, mode: str, seat: str | None) -> bool:
    if mode != prefs.intercity_transport:
        return False
    return prefs.seat_class is None or seat == prefs.seat_class
