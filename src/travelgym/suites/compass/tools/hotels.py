"""Hotel tools: search_hotel, get_hotel_details, get_room_details, search_location_name."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from travelgym.suites.compass.context import ACCEPT_CONFIDENCE, CompassContext
from travelgym.suites.compass.packages import HotelPackage, PackageIdError, day_to_date
from travelgym.suites.compass.resolver import PackageNotFound, resolve
from travelgym.suites.compass.tools.common import (
    Page,
    PositiveCount,
    flags,
    paged,
    parse_date,
    rows,
)
from travelgym.toolkit import ContentError, tool

HOTEL_AMENITIES = (
    "has_pool",
    "has_restaurant",
    "has_parking",
    "has_gym",
    "is_pet_friendly",
    "has_wifi",
    "has_breakfast",
    "is_accessible",
    "has_ev_charging",
    "has_laundry",
)
ROOM_AMENITIES = (
    "has_kitchenette",
    "has_air_conditioning",
    "has_private_bathroom",
    "has_balcony",
    "has_view",
    "has_coffee_maker",
)
SORT_KEYS = {
    "price": lambda r: (r["total_price"], r["config_id"]),
    "review_score": lambda r: (-r["review_score"], r["total_price"], r["config_id"]),
    "distance": lambda r: (r["distance_km"], r["total_price"], r["config_id"]),
    "review_count": lambda r: (-r["review_count"], r["total_price"], r["config_id"]),
    "star_rating": lambda r: (-r["star_rating"], r["total_price"], r["config_id"]),
}

# One row per room configuration of the park: stay totals over the nights [start, end).
# MAX over the policy texts is "the strictest" thanks to their alphabetical order:
# free_cancellation < non_refundable < partially_refundable, no_prepayment < prepayment_required,
# breakfast_included < half_board < room_only.
_STAY_SQL = """
SELECT config_id, COUNT(*), SUM(price), MIN(price), MAX(price), MIN(available),
       MAX(cancellation_policy), MAX(prepayment), MAX(meal_plan)
  FROM offers
 WHERE config_id IN (SELECT c.config_id FROM hotels h
                       JOIN rooms r ON r.hotel_id = h.hotel_id
                       JOIN room_configs c ON c.room_id = r.room_id
                      WHERE h.park_id = ?)
   AND night >= ? AND night < ?
 GROUP BY config_id
"""


@tool
def search_hotel(
    ctx: CompassContext,
    location: str,
    start_date: str,
    end_date: str,
    num_guests: PositiveCount,
    num_rooms: Annotated[int, Field(ge=1, le=9)] | None = None,
    min_price_nightly: Annotated[float, Field(ge=0)] | None = None,
    max_price_nightly: Annotated[float, Field(ge=0)] | None = None,
    min_review_score: Annotated[float, Field(ge=0, le=10)] | None = None,
    min_star_rating: Annotated[float, Field(ge=0, le=5)] | None = None,
    max_distance_km: Annotated[float, Field(ge=0)] | None = None,
    free_cancellation: bool | None = None,
    no_prepayment_needed: bool | None = None,
    has_parking: bool | None = None,
    breakfast_included: bool | None = None,
    is_pet_friendly: bool | None = None,
    sort_by: Literal["price", "review_score", "distance", "review_count", "star_rating"] = "price",
    page: Page = 1,
) -> dict:
    """Search bookable hotel packages near a national park for a stay (August 2025).

    A package is one room configuration (room type + rate plan) for the whole stay and the
    number of rooms the group needs (fewest rooms that hold num_guests, unless num_rooms is
    given). Only packages with every night available for that many rooms are returned. Results
    are sorted by sort_by (price = total price ascending; review_score, review_count and
    star_rating descending; distance ascending), ties broken by total price then configuration,
    up to 20 per page: use page to see more, or narrow the filters. A page holds fewer when 20
    would not fit the size of a tool result; it then gives next_page, the page that continues it.

    Args:
        location: National park name, alias or gateway town (e.g. 'Yosemite', 'Zion').
        start_date: Check-in date, YYYY-MM-DD (2025-08-01 to 2025-08-31).
        end_date: Check-out date, YYYY-MM-DD, after start_date (up to 2025-09-01).
        num_guests: Number of guests in the group.
        num_rooms: Rooms to book; default the fewest that hold num_guests.
        min_price_nightly: Every night costs at least this per room (USD).
        max_price_nightly: No night costs more than this per room (USD).
        min_review_score: Minimum guest review score (0-10).
        min_star_rating: Minimum hotel star rating (0-5).
        max_distance_km: Maximum driving distance from the hotel to the park (km).
        free_cancellation: Only rate plans with free cancellation on every night.
        no_prepayment_needed: Only rate plans without prepayment.
        has_parking: Only hotels with parking.
        breakfast_included: Only rate plans that include breakfast.
        is_pet_friendly: Only pet-friendly hotels.
        sort_by: Result order: price, review_score, distance, review_count or star_rating.
        page: 1-based page number.

    Returns:
        The park, stay, result counts and one page of packages with package_id, hotel, room,
        rate plan, rooms, average nightly price per room, total price and policies.
    """
    park = _resolve_location(ctx, location)
    start = parse_date(start_date, "start_date")
    end = parse_date(end_date, "end_date", last_day=32)
    if end <= start:
        raise ContentError("end_date must be after start_date")
    filters = (num_guests, num_rooms, min_price_nightly, max_price_nightly, min_review_score,
               min_star_rating, max_distance_km, free_cancellation, no_prepayment_needed,
               has_parking, breakfast_included, is_pet_friendly, sort_by)  # fmt: skip
    # every page is a slice of the same full list: built once per search, not once per page
    results = ctx.cache.search(("search_hotel", park["park_id"], start, end, *filters),
                               lambda: _hotel_results(ctx, park["park_id"], start, end, *filters))  # fmt: skip
    head = {
        "park": park["name"],
        "check_in": day_to_date(start).isoformat(),
        "check_out": day_to_date(end).isoformat(),
        "nights": end - start,
        "num_guests": num_guests,
        "sort_by": sort_by,
    }
    out = paged(ctx, ("search_hotel", park["park_id"], start, end, *filters), head, results, page)
    out["results"] = [dict(r) for r in out["results"]]
    return out


def _stay_totals(ctx: CompassContext, park_id: str, start: int, end: int) -> list[tuple]:
    """The offers of every room configuration of the park aggregated over the stay's nights."""
    cur = ctx.conn.cursor()
    cur.row_factory = None
    cur.execute(_STAY_SQL, (park_id, day_to_date(start).isoformat(), day_to_date(end).isoformat()))
    return cur.fetchall()


def _hotel_results(ctx: CompassContext, park_id: str, start: int, end: int, num_guests: int,
                   num_rooms: int | None, min_price_nightly: float | None,
                   max_price_nightly: float | None, min_review_score: float | None,
                   min_star_rating: float | None, max_distance_km: float | None,
                   free_cancellation: bool | None, no_prepayment_needed: bool | None,
                   has_parking: bool | None, breakfast_included: bool | None,
                   is_pet_friendly: bool | None, sort_by: str) -> list[dict]:  # fmt: skip
    """Every package of a search (all pages), sorted."""
    nights = end - start
    configs = ctx.park_configs(park_id)
    totals = ctx.cache.search(("stay_totals", park_id, start, end),
                              lambda: _stay_totals(ctx, park_id, start, end))  # fmt: skip
    results = []
    for config_id, n, total, low, high, avail, cancel, prepay, meal in totals:
        c = configs[config_id]
        rooms = num_rooms or -(-num_guests // c["max_occupancy"])
        if n != nights or avail < rooms or rooms * c["max_occupancy"] < num_guests:
            continue
        free, no_prepay = cancel == "free_cancellation", prepay == "no_prepayment"
        breakfast = meal != "room_only"
        if (
            (min_price_nightly is not None and low < min_price_nightly)
            or (max_price_nightly is not None and high > max_price_nightly)
            or (min_review_score is not None and c["review_score"] < min_review_score)
            or (min_star_rating is not None and c["star_rating"] < min_star_rating)
            or (max_distance_km is not None and c["distance_km"] > max_distance_km)
            or (free_cancellation and not free)
            or (no_prepayment_needed and not no_prepay)
            or (breakfast_included and not breakfast)
            or (has_parking and not c["has_parking"])
            or (is_pet_friendly and not c["is_pet_friendly"])
        ):
            continue
        results.append(
            {
                "package_id": HotelPackage(config_id, start, end, rooms).id,
                "config_id": config_id,
                **c,
                "rooms": rooms,
                "avg_nightly_price": round(total / nights, 2),
                "total_price": round(rooms * total, 2),
                "free_cancellation": free,
                "no_prepayment": no_prepay,
                "breakfast_included": breakfast,
            }
        )
    results.sort(key=SORT_KEYS[sort_by])
    return results


def _resolve_location(ctx: CompassContext, location: str) -> dict:
    """The park of a park name or alias (see ``resolve_park``) or of a gateway town's name."""
    lowered = location.strip().lower()
    for place in ctx.places:
        if place.location_type == "gateway_town" and place.label.lower() == lowered:
            return ctx.parks[place.park_id]
    return ctx.resolve_park(location)


@tool
def get_hotel_details(ctx: CompassContext, hotel_identifier: str | int) -> dict:
    """Get a hotel's details by numeric ID or by name (partial and misspelled names work).

    Args:
        hotel_identifier: Hotel ID (e.g. 17) or name (e.g. 'Canyon Lodge Springdale').

    Returns:
        Hotel details (park, town, coordinates, star rating, review score and count, distance
        to the park, amenity flags) and its room types; for a name, the match confidence and
        other close matches.
    """
    text = hotel_identifier.strip() if isinstance(hotel_identifier, str) else ""
    confidence, alternatives = 100.0, []
    if isinstance(hotel_identifier, int) or (text.isascii() and text.isdigit()):
        # ASCII digits only ('²'.isdigit() is true but int() refuses it); ids beyond SQLite's
        # 64-bit integers (or Python's 4300-digit conversion limit) cannot name a hotel.
        digits = text.lstrip("0") or "0"
        if isinstance(hotel_identifier, int):
            hotel_id = int(hotel_identifier)
        elif len(digits) <= 18:
            hotel_id = int(digits)
        else:
            hotel_id = -1
        if not 0 <= hotel_id < 2**63:
            raise ContentError("no hotel with that id; hotel ids are small positive integers")
    else:
        matches = ctx.match_hotels(text) if text else []
        if not matches or matches[0][2] < ACCEPT_CONFIDENCE:
            hint = "; ".join(f"{name} (id {hid})" for hid, name, _ in matches[:3]) or "none"
            raise ContentError(f"no hotel named {text!r}; closest: {hint}")
        hotel_id, _, confidence = matches[0]
        alternatives = [{"hotel_id": h, "name": n, "confidence": c} for h, n, c in matches[1:4]]
    found = rows(ctx.conn.execute("SELECT * FROM hotels WHERE hotel_id = ?", (hotel_id,)))
    if not found:
        raise ContentError(f"no hotel with id {hotel_id}")
    hotel = found[0]
    rooms = rows(
        ctx.conn.execute(
            "SELECT room_id, room_type, bed_configuration, max_occupancy FROM rooms"
            " WHERE hotel_id = ? ORDER BY room_id",
            (hotel_id,),
        )
    )
    return {
        "hotel_id": hotel_id,
        "name": hotel["name"],
        "brand": hotel["brand"],
        "park": ctx.parks[hotel["park_id"]]["name"],
        "town": hotel["town"],
        "latitude": hotel["lat"],
        "longitude": hotel["lon"],
        "star_rating": hotel["star_rating"],
        "review_score": hotel["review_score"],
        "review_count": hotel["review_count"],
        "distance_km": hotel["distance_km"],
        "amenities": flags(hotel, HOTEL_AMENITIES),
        "rooms": rooms,
        "match_confidence": confidence,
        "other_matches": alternatives,
    }


@tool
def get_room_details(ctx: CompassContext, package_id: str) -> dict:
    """Get the room, rate plan, policies and nightly prices of a hotel package.

    Args:
        package_id: Hotel package ID, format pkg_<configid>_<startday>_<endday>_<rooms>.

    Returns:
        Room type, bed configuration, occupancy, room amenities, rate plan and policies,
        per-night prices and availability, total price and whether it is bookable.
    """
    try:
        offer = resolve(ctx.conn, package_id, kind="pkg", lookups=ctx.cache)
    except (PackageIdError, PackageNotFound) as exc:
        raise ContentError(str(exc)) from None
    room = offer.room
    return {
        "package_id": offer.package_id,
        "hotel_id": offer.hotel["hotel_id"],
        "hotel_name": offer.hotel["name"],
        "room_type": room["room_type"],
        "bed_configuration": room["bed_configuration"],
        "bed_type": room["bed_type"],
        "max_occupancy": room["max_occupancy"],
        "size_sqm": room["size_sqm"],
        "room_amenities": flags(room, ROOM_AMENITIES),
        "rate_name": offer.rate_name,
        "cancellation_policy": offer.cancellation_policy,
        "meal_plan": offer.meal_plan,
        "prepayment": offer.prepayment,
        "check_in": offer.check_in,
        "check_out": offer.check_out,
        "nights": offer.nights,
        "rooms": offer.rooms,
        "capacity": offer.capacity,
        "nightly": offer.nightly,
        "total_price": offer.total_price,
        "bookable": offer.bookable,
    }


@tool
def search_location_name(ctx: CompassContext, query: str) -> dict:
    """Find national parks, gateway towns and airports by a partial or informal name.

    Args:
        query: Location search text (e.g. 'yosemity', 'Smokies', 'Moab').

    Returns:
        Up to 5 matches, best first, each with name, location_type (national_park,
        gateway_town, airport), park or airport code, coordinates and confidence_score (0-100).
    """
    text = query.strip()
    if not text:
        raise ContentError("query is empty; give part of a park, town or airport name")
    matches = []
    for place, score in ctx.match_places(text[:200]):
        item = {
            "name": place.name,
            "location_type": place.location_type,
            "confidence_score": score,
            "latitude": place.lat,
            "longitude": place.lon,
        }
        if place.park_id:
            item["park"] = ctx.parks[place.park_id]["name"]
        if place.location_type == "airport":
            item["airport_code"] = place.ref
        matches.append(item)
    return {"query": text, "matches": matches}
