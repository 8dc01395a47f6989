"""The hard-constraint language: each kind is one class compiled three ways (SQL filter, plan
checker, sentence). ``Constraint`` is the discriminated union used in task files."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, TypeAdapter

from travelgym.suites.compass.constraints.base import ConstraintBase, TaskSpec
from travelgym.suites.compass.constraints.stay import (
    BedType,
    Budget,
    DateConstraint,
    DateWindow,
    HotelAmenity,
    MaxDistance,
    MaxNightlyPrice,
    MinReviewScore,
    MinStarRating,
    Park,
    RatePolicy,
    RoomFeature,
    Rooms,
    StayDates,
    Travellers,
    WeekendStay,
)
from travelgym.suites.compass.constraints.trip import (
    Airline,
    BookingClass,
    DirectFlights,
    FlightTimeWindow,
    MaxAirportDrive,
    MaxFlightDuration,
    OriginCity,
    PermitRequired,
    TripCoherence,
)

Constraint = Annotated[
    Park
    | StayDates
    | WeekendStay
    | DateWindow
    | Travellers
    | Rooms
    | Budget
    | MaxNightlyPrice
    | MinStarRating
    | MinReviewScore
    | MaxDistance
    | HotelAmenity
    | RoomFeature
    | BedType
    | RatePolicy
    | TripCoherence
    | OriginCity
    | DirectFlights
    | Airline
    | BookingClass
    | FlightTimeWindow
    | MaxFlightDuration
    | MaxAirportDrive
    | PermitRequired,
    Field(discriminator="kind"),
]
CONSTRAINT_ADAPTER: TypeAdapter = TypeAdapter(list[Constraint])

__all__ = [
    "CONSTRAINT_ADAPTER",
    "FUNDAMENTAL_KINDS",
    "Airline",
    "BedType",
    "BookingClass",
    "Budget",
    "Constraint",
    "ConstraintBase",
    "DateConstraint",
    "DateWindow",
    "DirectFlights",
    "FlightTimeWindow",
    "HotelAmenity",
    "MaxAirportDrive",
    "MaxDistance",
    "MaxFlightDuration",
    "MaxNightlyPrice",
    "MinReviewScore",
    "MinStarRating",
    "OriginCity",
    "Park",
    "PermitRequired",
    "RatePolicy",
    "RoomFeature",
    "Rooms",
    "StayDates",
    "TaskSpec",
    "Travellers",
    "TripCoherence",
    "WeekendStay",
]
