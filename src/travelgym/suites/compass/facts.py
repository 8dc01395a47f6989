"""Facts: the flat attributes of a plan's components that constraints and objectives read.

The solver builds facts from SQL rows, the scorer from resolved package IDs; constraints and
objectives are written once against these dictionaries. Money is in integer cents so that the
solver and the checker compare budgets exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from travelgym.suites.compass.packages import date_to_day
from travelgym.suites.compass.resolver import FlightOffer, HotelOffer, PermitOffer

HOTEL_FLAGS = (
    "has_pool", "has_restaurant", "has_parking", "has_gym", "is_pet_friendly", "has_wifi",
    "has_breakfast", "is_accessible", "has_ev_charging", "has_laundry",
)  # fmt: skip
ROOM_FLAGS = (
    "has_kitchenette", "has_air_conditioning", "has_private_bathroom", "has_balcony", "has_view",
    "has_coffee_maker",
)  # fmt: skip
HOTEL_COLUMNS = (
    "park_id",
    "hotel_id",
    "star_rating",
    "review_score",
    "review_count",
    "distance_km",
)
ROOM_COLUMNS = ("bed_type", "max_occupancy")


def cents(amount: float) -> int:
    """Dollars to integer cents (prices carry at most two decimals)."""
    return int(round(amount * 100))


Facts = dict[str, Any]


def hotel_facts(offer: HotelOffer) -> Facts:
    """Facts of a resolved hotel package."""
    facts = {k: offer.hotel[k] for k in HOTEL_COLUMNS}
    facts.update({k: bool(offer.hotel[k]) for k in HOTEL_FLAGS})
    facts.update({k: offer.room[k] for k in ROOM_COLUMNS})
    facts.update({k: bool(offer.room[k]) for k in ROOM_FLAGS})
    facts.update(
        package_id=offer.package_id,
        config_id=offer.config_id,
        start=date_to_day_str(offer.check_in),
        end=date_to_day_str(offer.check_out),
        rooms=offer.rooms,
        cost=cents(offer.total_price),
        max_night=cents(offer.max_nightly_price),
        bookable=offer.bookable,
        free_cancellation=offer.free_cancellation,
        no_prepayment=offer.no_prepayment,
        breakfast_included=offer.breakfast_included,
    )
    return facts


def flight_facts(offer: FlightOffer, drive_hours: dict[str, float]) -> Facts:
    """Facts of a resolved flight package (per passenger price; seats on the fuller leg)."""
    out, ret = offer.outbound, offer.inbound
    return {
        "package_id": offer.package_id,
        "template_id": offer.template_id,
        "origin": offer.origin,
        "destination": offer.destination,
        "start": date_to_day_str(out["date"]),
        "end": date_to_day_str(ret["date"]),
        "airline": offer.airline,
        "booking_class": offer.booking_class,
        "per_pax": cents(offer.price_per_passenger),
        "seats": offer.min_seats,
        "bookable": offer.bookable,
        "direct": offer.direct,
        "total_duration": offer.total_duration_min,
        "max_leg_duration": offer.max_leg_duration_min,
        "has_wifi": offer.has_wifi,
        "pet_in_cabin": offer.pet_policy == "in_cabin",
        "out_departure": out["departure_time"],
        "out_arrival": _arrival(out),
        "ret_departure": ret["departure_time"],
        "ret_arrival": _arrival(ret),
        "drive_hours": drive_hours.get(offer.destination),
    }


def _arrival(leg: dict[str, Any]) -> str:
    """Arrival as HH:MM, with hours past 24 for next-day arrivals (sorts after same-day)."""
    hours, minutes = leg["arrival_time"].split(":")
    return f"{int(hours) + 24 * int(leg['arrival_day_offset']):02d}:{minutes}"


def permit_facts(offer: PermitOffer) -> Facts:
    p = offer.permit
    return {
        "package_id": offer.package_id,
        "permit_id": p["permit_id"],
        "park_id": p["park_id"],
        "permit_type": p["permit_type"],
        "start": date_to_day_str(offer.date),
        "days": offer.days,
        "per_person": cents(offer.price_per_person),
        "slots": offer.slots_remaining,
        "max_party_size": p["max_party_size"],
        "bookable": offer.bookable,
    }


def date_to_day_str(iso: str) -> int:
    import datetime as dt

    return date_to_day(dt.date.fromisoformat(iso))


@dataclass
class PlanFacts:
    """A plan's components as facts (None where the plan has no such component)."""

    hotel: Facts | None
    flight: Facts | None
    permit: Facts | None
    travellers: int

    def total_cost(self) -> int:
        """Total cost in cents: hotel + flight x travellers + permit x travellers."""
        total = self.hotel["cost"] if self.hotel else 0
        if self.flight:
            total += self.flight["per_pax"] * self.travellers
        if self.permit:
            total += self.permit["per_person"] * self.travellers
        return total
