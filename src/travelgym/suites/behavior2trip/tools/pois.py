"""POI search tools: AccommodationSearch, AttractionSearch, EntertainmentSearch, RestaurantSearch.

Each returns the city, the canonical preferences it applied, how many POIs match and the top
``n`` of them ordered by average rating (descending), then review count (descending), then id.
"""

from __future__ import annotations

from typing import Any

from travelgym.suites.behavior2trip import vocab
from travelgym.suites.behavior2trip.context import TripsContext
from travelgym.suites.behavior2trip.gen_poi_specs import WALKING_LIMITS_KM
from travelgym.suites.behavior2trip.tools.common import N, matches, preferences_type
from travelgym.suites.behavior2trip.tools.poi_rows import city_rows, search_rows
from travelgym.toolkit import tool

ORDER = "avg_rating DESC, review_count DESC, {id} ASC"
ORDER_TEXT = "average rating (highest first), then review count (most first), then id"

HOTEL_KEYS = {"star_rating": vocab.STAR_LEVELS, "amenities": vocab.FACILITIES}
ATTRACTION_KEYS = {"attraction_type": vocab.ATTRACTION_TYPES,
                   "walk_tolerance": vocab.WALKING_TOLERANCE}  # fmt: skip
ENTERTAINMENT_KEYS = {"type": vocab.ENTERTAINMENT_TYPES}
RESTAURANT_KEYS = {"cuisine": vocab.CUISINES, "price_level": vocab.PRICE_LEVELS,
                   "environment": vocab.DINING_ENVIRONMENTS}  # fmt: skip
HotelPreferences = preferences_type(HOTEL_KEYS)
AttractionPreferences = preferences_type(ATTRACTION_KEYS)
EntertainmentPreferences = preferences_type(ENTERTAINMENT_KEYS)
RestaurantPreferences = preferences_type(RESTAURANT_KEYS)

_HOTEL_COLS = """hotel_id AS id, name, city, district, address, phone, lat, lon,
    secondary_category AS star_level, tertiary_category AS style, avg_price AS price_per_night,
    avg_rating AS rating, review_count, rating_rank, facilities, check_in_time, check_out_time,
    parking_info, business_hours, room_info AS rooms, details, reviews"""
_ATTRACTION_COLS = """attraction_id AS id, name, city, district, address, phone, lat, lon,
    attraction_type, custom_type AS tags, opening_hours, open_time, close_time, best_season,
    recommended_duration, duration_hours, walking_km, walking_level, avg_price AS ticket_price,
    ticket_info, avg_rating AS rating, review_count, details, reviews"""
_ENTERTAINMENT_COLS = """entertainment_id AS id, name, city, district, address, phone, lat, lon,
    secondary_category AS type, tertiary_category AS subtype, business_hours, open_time,
    close_time, avg_price AS price_per_person, avg_rating AS rating, review_count, rating_rank,
    details"""
_RESTAURANT_COLS = """restaurant_id AS id, name, city, district, address, phone, lat, lon,
    secondary_category AS cuisine, tertiary_category AS subcuisine, price_level,
    avg_price AS price_per_person, dining_environment AS environment, business_hours, open_time,
    close_time, avg_rating AS rating, review_count, rating_rank, parking_info, details, reviews"""


def _search(
    ctx: TripsContext,
    table: str,
    id_col: str,
    columns: str,
    city: str,
    n: int,
    prefs: dict[str, list[str]] | None,
    tests: list[tuple[str, str, Any]],
) -> dict[str, Any]:
    """The city's POIs of ``table`` in the tools' order that pass ``tests``
    (:func:`~travelgym.suites.behavior2trip.tools.poi_rows.matches`, on the selected
    ``columns``): how many, and the first ``n``."""
    row = ctx.resolve_city(city)
    rows = city_rows(ctx, table, columns, ORDER.format(id=id_col), row["city_id"])
    total, results = search_rows(rows, tests, n)
    return {"city": row["name"], "preferences": prefs or {}, **matches(ORDER_TEXT, total, results)}


def _any_of(column: str, values: list[str] | None) -> list[tuple[str, str, Any]]:
    """``column`` (as selected) is one of ``values`` (no test without values)."""
    return [("in", column, list(values))] if values else []


@tool
def AccommodationSearch(
    ctx: TripsContext, city: str, n: N = 5, preferences: HotelPreferences = None
) -> dict:
    """Find hotels and homestays in a city, optionally filtered by the user's preferences.

    Results are ordered by average rating (highest first), then review count, then id.

    Args:
        city: City name, e.g. 'Beijing' or "Xi'an" (any case; common spellings such as 'xian').
        n: Number of hotels to return (1-50).
        preferences: Optional filters. star_rating: star levels, any of them matches (e.g.
            ['5-Star/Luxury']); amenities: facilities the hotel must all have (e.g. ['Gym',
            'Parking']).

    Returns:
        The city, the applied preferences, the number of matching hotels and the top n with id,
        name, district, address, coordinates, star_level, price_per_night (CNY, cheapest room),
        rating, facilities, rooms and reviews.
    """
    prefs = preferences or {}
    tests = _any_of("star_level", prefs.get("star_rating"))
    tests += [("has", "facilities", facility) for facility in prefs.get("amenities", [])]
    return _search(ctx, "hotels", "hotel_id", _HOTEL_COLS, city, n, preferences, tests)


@tool
def AttractionSearch(
    ctx: TripsContext, city: str, n: N = 5, preferences: AttractionPreferences = None
) -> dict:
    """Find attractions in a city, optionally filtered by type and walking tolerance.

    Results are ordered by average rating (highest first), then review count, then id.

    Args:
        city: City name, e.g. 'Hangzhou' (any case; common spellings accepted).
        n: Number of attractions to return (1-50).
        preferences: Optional filters. attraction_type: types, any of them matches (e.g.
            ['Museum/Exhibition']); walk_tolerance: the walking the user can do; a visit fits
            when its walking_km is within the most tolerant level given (Low < 3 km, Medium
            < 5 km, High any).

    Returns:
        The city, the applied preferences, the number of matching attractions and the top n with
        id, name, type, opening hours, recommended duration, walking_km, ticket_price (CNY) and
        coordinates.
    """
    prefs = preferences or {}
    tests = _any_of("attraction_type", prefs.get("attraction_type"))
    if prefs.get("walk_tolerance"):
        limit = max(WALKING_LIMITS_KM[t] for t in prefs["walk_tolerance"])
        if limit != float("inf"):
            tests.append(("below", "walking_km", limit))
    return _search(ctx, "attractions", "attraction_id", _ATTRACTION_COLS, city, n, preferences,
                   tests)  # fmt: skip


@tool
def EntertainmentSearch(
    ctx: TripsContext,
    city: str,
    n: N = 5,
    preferences: EntertainmentPreferences = None,
) -> dict:
    """Find entertainment venues (KTV, bars, shows, spas, cinemas, ...) in a city.

    Results are ordered by average rating (highest first), then review count, then id.

    Args:
        city: City name, e.g. 'Chengdu' (any case; common spellings accepted).
        n: Number of venues to return (1-50).
        preferences: Optional filters. type: entertainment types, any of them matches (e.g.
            ['Theatre/Show', 'Live Music']).

    Returns:
        The city, the applied preferences, the number of matching venues and the top n with id,
        name, type, business hours, price_per_person (CNY), rating and coordinates.
    """
    tests = _any_of("type", (preferences or {}).get("type"))
    return _search(ctx, "entertainment", "entertainment_id", _ENTERTAINMENT_COLS, city, n,
                   preferences, tests)  # fmt: skip


@tool
def RestaurantSearch(
    ctx: TripsContext, city: str, n: N = 5, preferences: RestaurantPreferences = None
) -> dict:
    """Find restaurants in a city, optionally filtered by cuisine, price level and environment.

    Results are ordered by average rating (highest first), then review count, then id.

    Args:
        city: City name, e.g. 'Chongqing' (any case; common spellings accepted).
        n: Number of restaurants to return (1-50).
        preferences: Optional filters, each matching any of its values. cuisine (e.g. ['Hot
            Pot']); price_level: average price per person band (e.g. ['Moderate (80-150
            CNY/person)']); environment: dining environment (e.g. ['Quiet']).

    Returns:
        The city, the applied preferences, the number of matching restaurants and the top n with
        id, name, cuisine, price_level, price_per_person (CNY), environment, opening hours,
        rating and coordinates.
    """
    prefs = preferences or {}
    tests = (
        _any_of("cuisine", prefs.get("cuisine"))
        + _any_of("price_level", prefs.get("price_level"))
        + _any_of("environment", prefs.get("environment"))
    )
    return _search(ctx, "restaurants", "restaurant_id", _RESTAURANT_COLS, city, n, preferences,
                   tests)  # fmt: skip
