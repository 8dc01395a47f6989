"""Validation tools: recommend_hotel, recommend_flight, recommend_permit (Appendix D.5)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from travelgym.suites.compass.context import CompassContext
from travelgym.suites.compass.packages import PackageIdError
from travelgym.suites.compass.resolver import (
    FlightOffer,
    HotelOffer,
    PackageNotFound,
    PermitOffer,
    resolve,
)
from travelgym.toolkit import tool

PackageIds = Annotated[list[str], Field(min_length=1, max_length=3)]


def _validate(ctx: CompassContext, ids: list[str], kind: str, reasoning: str) -> dict:
    results = []
    for package_id in ids:
        try:
            offer = resolve(ctx.conn, package_id, kind=kind, lookups=ctx.cache)
        except (PackageIdError, PackageNotFound) as exc:
            results.append({"package_id": package_id, "valid": False, "reason": str(exc)})
            continue
        results.append({"package_id": offer.package_id, "valid": True, **_summary(offer)})
    return {
        "all_valid": all(r["valid"] for r in results),
        "results": results,
        "reasoning_received": bool(reasoning.strip()),
    }


def _summary(offer: HotelOffer | FlightOffer | PermitOffer) -> dict:
    if isinstance(offer, HotelOffer):
        return {
            "hotel_name": offer.hotel["name"],
            "room_type": offer.room["room_type"],
            "check_in": offer.check_in,
            "check_out": offer.check_out,
            "rooms": offer.rooms,
            "total_price": offer.total_price,
            "bookable": offer.bookable,
        }
    if isinstance(offer, FlightOffer):
        return {
            "airline": offer.airline,
            "route": f"{offer.origin}-{offer.destination}",
            "departure_date": offer.outbound["date"],
            "return_date": offer.inbound["date"],
            "booking_class": offer.booking_class,
            "price_per_passenger": offer.price_per_passenger,
            "bookable": offer.bookable,
        }
    return {
        "template_name": offer.permit["template_name"],
        "date": offer.date,
        "duration_days": offer.days,
        "bookable": offer.bookable,
    }


@tool
def recommend_hotel(ctx: CompassContext, package_ids: PackageIds, reasoning: str) -> dict:
    """MANDATORY validation of hotel package IDs before you recommend them to the user.

    Args:
        package_ids: 1-3 hotel package IDs (pkg_<configid>_<startday>_<endday>_<rooms>).
        reasoning: Why these packages fit the user's requirements.

    Returns:
        For each ID whether it exists, with a short summary (hotel, room, dates, price).
    """
    return _validate(ctx, package_ids, "pkg", reasoning)


@tool
def recommend_flight(ctx: CompassContext, flight_ids: PackageIds, reasoning: str) -> dict:
    """MANDATORY validation of flight package IDs before you recommend them to the user.

    Args:
        flight_ids: 1-3 flight package IDs (flight_<templateid>_<depday>_<retday>).
        reasoning: Why these flights fit the user's requirements.

    Returns:
        For each ID whether it exists, with a short summary (airline, route, dates, price).
    """
    return _validate(ctx, flight_ids, "flight", reasoning)


@tool
def recommend_permit(ctx: CompassContext, permit_ids: PackageIds, reasoning: str) -> dict:
    """MANDATORY validation of permit package IDs before you recommend them to the user.

    Args:
        permit_ids: 1-3 permit package IDs (permit_<permitid>_<day>_<days>).
        reasoning: Why these permits fit the user's requirements.

    Returns:
        For each ID whether it exists, with a short summary (permit, date, duration).
    """
    return _validate(ctx, permit_ids, "permit", reasoning)
