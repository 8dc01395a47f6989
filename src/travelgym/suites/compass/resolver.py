"""One package-ID resolver for the tools, the scorer and the solver.

``resolve(conn, package_id)`` turns an ID into every attribute needed to check a constraint or
compute a utility, or raises :class:`PackageNotFound` / :class:`PackageIdError` with a reason.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Protocol

from travelgym.suites.compass.packages import (
    FlightPackage,
    HotelPackage,
    Package,
    PackageIdError,
    PermitPackage,
    day_to_date,
    parse_package_id,
)

__all__ = ["PackageIdError", "PackageNotFound", "resolve", "resolve_hotel", "resolve_flight"]

BREAKFAST_PLANS = ("breakfast_included", "half_board")
_PET_ORDER = {"not_allowed": 0, "cargo_only": 1, "in_cabin": 2}


class PackageNotFound(LookupError):
    """A well-formed package ID that names nothing in the database."""


@dataclass
class HotelOffer:
    package_id: str
    hotel: dict[str, Any]
    room: dict[str, Any]
    config_id: int
    rate_name: str
    check_in: str
    check_out: str
    nights: int
    rooms: int
    nightly: list[dict[str, Any]]  # one per night: date, price (per room), available
    total_price: float  # rooms x sum of nightly prices
    max_nightly_price: float
    min_available: int
    capacity: int  # rooms x max occupancy
    bookable: bool  # every night offered with at least `rooms` rooms left
    free_cancellation: bool  # on every night
    no_prepayment: bool
    breakfast_included: bool
    cancellation_policy: str  # the strictest over the nights
    meal_plan: str
    prepayment: str


@dataclass
class FlightOffer:
    package_id: str
    template_id: int
    airline: str
    airline_name: str
    booking_class: str
    origin: str
    destination: str
    outbound: dict[str, Any]
    inbound: dict[str, Any]
    price_per_passenger: float
    min_seats: int
    bookable: bool
    direct: bool
    total_duration_min: int
    max_leg_duration_min: int
    has_wifi: bool
    pet_policy: str  # the most restrictive of the two legs

    def total_price(self, passengers: int) -> float:
        return round(self.price_per_passenger * passengers, 2)


@dataclass
class PermitOffer:
    package_id: str
    permit: dict[str, Any]
    date: str
    days: int
    slots_remaining: int
    price_per_person: float
    duration_ok: bool
    bookable: bool

    def total_price(self, party: int) -> float:
        return round(self.price_per_person * party, 2)


Offer = HotelOffer | FlightOffer | PermitOffer


class Lookups(Protocol):
    """Where static rows are kept between calls (``ToolCache``): ``lookup(key, compute)``."""

    def lookup(self, key: Hashable, compute: Callable[[], Any]) -> Any: ...


def resolve(conn: sqlite3.Connection, package_id: object, kind: str | None = None,
            lookups: Lookups | None = None) -> Offer:  # fmt: skip
    """Resolve any package ID (``kind`` = pkg / flight / permit restricts the format);
    ``lookups`` keeps a hotel package's static rows (configuration, room, hotel) between
    calls on a read-only database."""
    package = parse_package_id(package_id, kind)
    return resolve_package(conn, package, lookups)


def resolve_package(conn: sqlite3.Connection, package: Package,
                    lookups: Lookups | None = None) -> Offer:  # fmt: skip
    if isinstance(package, HotelPackage):
        return resolve_hotel(conn, package, lookups)
    if isinstance(package, FlightPackage):
        return resolve_flight(conn, package)
    return resolve_permit(conn, package)


def _row(conn: sqlite3.Connection, sql: str, params: tuple) -> dict[str, Any] | None:
    cur = conn.execute(sql, params)
    row = cur.fetchone()
    if row is None:
        return None
    return dict(zip([d[0] for d in cur.description], row, strict=True))


_OFFERS_SQL = (
    "SELECT night, price, available, cancellation_policy, meal_plan, prepayment FROM offers"
    " WHERE config_id = ?"
)


def _config_rows(conn: sqlite3.Connection, config_id: int) -> tuple[dict, dict, dict] | None:
    """A room configuration's row with its room's and its hotel's."""
    config = _row(conn, "SELECT room_id, rate_name FROM room_configs WHERE config_id = ?",
                  (config_id,))  # fmt: skip
    if config is None:
        return None
    room = _row(conn, "SELECT * FROM rooms WHERE room_id = ?", (config["room_id"],))
    hotel = _row(conn, "SELECT * FROM hotels WHERE hotel_id = ?", (room["hotel_id"],))
    return config, room, hotel


def resolve_hotel(conn: sqlite3.Connection, pkg: HotelPackage,
                  lookups: Lookups | None = None) -> HotelOffer:  # fmt: skip
    if lookups is None:
        found = _config_rows(conn, pkg.config_id)
    else:
        found = lookups.lookup(("config_rows", pkg.config_id),
                               lambda: _config_rows(conn, pkg.config_id))  # fmt: skip
    if found is None:
        raise PackageNotFound(f"{pkg.id}: no room configuration {pkg.config_id}")
    config, room, hotel = found[0], dict(found[1]), dict(found[2])  # the offer's own copies
    check_in, check_out = (
        day_to_date(pkg.start_day).isoformat(),
        day_to_date(pkg.end_day).isoformat(),
    )
    if lookups is None:
        rows = conn.execute(_OFFERS_SQL + " AND night >= ? AND night < ? ORDER BY night",
                            (pkg.config_id, check_in, check_out)).fetchall()  # fmt: skip
    else:  # the configuration's whole month once, then the stay's nights (the same rows)
        month = lookups.lookup(("offers", pkg.config_id), lambda: conn.execute(
            _OFFERS_SQL + " ORDER BY night", (pkg.config_id,)).fetchall())  # fmt: skip
        rows = [r for r in month if check_in <= r[0] < check_out]
    nightly = [{"date": r[0], "price": r[1], "available": r[2]} for r in rows]
    complete = len(rows) == pkg.nights
    prices = [r[1] for r in rows]
    min_available = min((r[2] for r in rows), default=0)
    cancel = _strictest(
        [r[3] for r in rows], ("non_refundable", "partially_refundable", "free_cancellation")
    )
    meal = _strictest([r[4] for r in rows], ("room_only", "breakfast_included", "half_board"))
    prepay = _strictest([r[5] for r in rows], ("prepayment_required", "no_prepayment"))
    return HotelOffer(
        package_id=pkg.id,
        hotel=hotel,
        room=room,
        config_id=pkg.config_id,
        rate_name=config["rate_name"],
        check_in=check_in,
        check_out=check_out,
        nights=pkg.nights,
        rooms=pkg.rooms,
        nightly=nightly,
        total_price=round(pkg.rooms * sum(prices), 2),
        max_nightly_price=max(prices, default=0.0),
        min_available=min_available,
        capacity=pkg.rooms * room["max_occupancy"],
        bookable=complete and min_available >= pkg.rooms,
        free_cancellation=complete and cancel == "free_cancellation",
        no_prepayment=complete and prepay == "no_prepayment",
        breakfast_included=complete and meal in BREAKFAST_PLANS,
        cancellation_policy=cancel,
        meal_plan=meal,
        prepayment=prepay,
    )


def _strictest(values: list[str], order: tuple[str, ...]) -> str:
    """The first value of ``order`` (strictest first) present in ``values``."""
    present = set(values)
    for value in order:
        if value in present:
            return value
    return order[0]


_LEG_SQL = """SELECT f.*, p.price, p.seats FROM flights f
               LEFT JOIN flight_prices p ON p.flight_id = f.flight_id AND p.booking_class = ?
                    AND p.date = ?
              WHERE f.flight_id = ?"""


def resolve_flight(conn: sqlite3.Connection, pkg: FlightPackage) -> FlightOffer:
    template = _row(
        conn, "SELECT * FROM flight_templates WHERE template_id = ?", (pkg.template_id,)
    )
    if template is None:
        raise PackageNotFound(f"{pkg.id}: no flight template {pkg.template_id}")
    cls = template["booking_class"]
    out = _row(
        conn, _LEG_SQL, (cls, day_to_date(pkg.dep_day).isoformat(), template["outbound_flight_id"])
    )
    ret = _row(
        conn, _LEG_SQL, (cls, day_to_date(pkg.ret_day).isoformat(), template["return_flight_id"])
    )
    out["date"], ret["date"] = (
        day_to_date(pkg.dep_day).isoformat(),
        day_to_date(pkg.ret_day).isoformat(),
    )
    priced = out["price"] is not None and ret["price"] is not None
    seats = min(out["seats"] or 0, ret["seats"] or 0)
    airline_name = conn.execute(
        "SELECT name FROM airlines WHERE code = ?", (out["airline"],)
    ).fetchone()[0]
    pet = min(out["pet_policy"], ret["pet_policy"], key=_PET_ORDER.__getitem__)
    return FlightOffer(
        package_id=pkg.id,
        template_id=pkg.template_id,
        airline=out["airline"],
        airline_name=airline_name,
        booking_class=cls,
        origin=out["origin"],
        destination=out["destination"],
        outbound=out,
        inbound=ret,
        price_per_passenger=round((out["price"] or 0) + (ret["price"] or 0), 2) if priced else 0.0,
        min_seats=seats,
        bookable=priced and seats >= 1,
        direct=out["stops"] == 0 and ret["stops"] == 0,
        total_duration_min=out["duration_min"] + ret["duration_min"],
        max_leg_duration_min=max(out["duration_min"], ret["duration_min"]),
        has_wifi=bool(out["has_wifi"] and ret["has_wifi"]),
        pet_policy=pet,
    )


def resolve_permit(conn: sqlite3.Connection, pkg: PermitPackage) -> PermitOffer:
    permit = _row(conn, "SELECT * FROM permits WHERE permit_id = ?", (pkg.permit_id,))
    if permit is None:
        raise PackageNotFound(f"{pkg.id}: no permit {pkg.permit_id}")
    date = day_to_date(pkg.day).isoformat()
    slot = conn.execute(
        "SELECT slots_remaining FROM permit_availability WHERE permit_id = ? AND date = ?",
        (pkg.permit_id, date),
    ).fetchone()
    slots = slot[0] if slot else 0
    duration_ok = permit["min_duration_days"] <= pkg.days <= permit["max_duration_days"]
    return PermitOffer(
        package_id=pkg.id,
        permit=permit,
        date=date,
        days=pkg.days,
        slots_remaining=slots,
        price_per_person=permit["price_per_person"],
        duration_ok=duration_ok,
        bookable=duration_ok and slots > 0,
    )
