"""Airport and flight tools: search_airports, search_flights, get_flight_details,
get_airport_coordinates."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from travelgym.suites.compass.context import CompassContext
from travelgym.suites.compass.packages import FlightPackage, PackageIdError, day_to_date
from travelgym.suites.compass.resolver import PackageNotFound, resolve
from travelgym.suites.compass.tools.common import Page, paged, park_listing, parse_date, rows
from travelgym.toolkit import ContentError, tool

BookingClass = Literal["economy", "premium_economy", "business"]
_LEG_FIELDS = (
    "flight_number",
    "origin",
    "destination",
    "departure_time",
    "arrival_time",
    "arrival_day_offset",
    "duration_min",
    "stops",
    "layover_airport",
    "layover_min",
)

_SEARCH_SQL = """
SELECT t.template_id, t.booking_class, o.airline,
       o.flight_id AS o_id, o.flight_number AS o_number, o.departure_time AS o_dep,
       o.arrival_time AS o_arr, o.arrival_day_offset AS o_offset, o.duration_min AS o_dur,
       o.stops AS o_stops, o.layover_airport AS o_layover, o.has_wifi AS o_wifi,
       o.pet_policy AS o_pet,
       r.flight_id AS r_id, r.flight_number AS r_number, r.departure_time AS r_dep,
       r.arrival_time AS r_arr, r.arrival_day_offset AS r_offset, r.duration_min AS r_dur,
       r.stops AS r_stops, r.layover_airport AS r_layover, r.has_wifi AS r_wifi,
       r.pet_policy AS r_pet,
       po.price AS o_price, po.seats AS o_seats, pr.price AS r_price, pr.seats AS r_seats
  FROM flights o
  JOIN flight_templates t ON t.outbound_flight_id = o.flight_id
  JOIN flights r ON r.flight_id = t.return_flight_id
  JOIN flight_prices po ON po.flight_id = o.flight_id AND po.booking_class = t.booking_class
       AND po.date = ?
  JOIN flight_prices pr ON pr.flight_id = r.flight_id AND pr.booking_class = t.booking_class
       AND pr.date = ?
 WHERE o.origin = ? AND o.destination = ? AND po.seats >= ? AND pr.seats >= ?
"""


def _airport(ctx: CompassContext, code: str, name: str) -> dict:
    text = code.strip().upper()
    found = rows(ctx.conn.execute("SELECT * FROM airports WHERE code = ?", (text,)))
    if not found:
        codes = [r[0] for r in ctx.conn.execute("SELECT code FROM airports ORDER BY code")]
        raise ContentError(
            f"{name} {code!r} is not a known 3-letter airport code; use search_airports for a "
            f"park's airports or search_location_name for a city. Known: {', '.join(codes)}"
        )
    return found[0]


@tool
def search_airports(ctx: CompassContext, park_name: str) -> dict:
    """Find the airports that serve a national park, nearest first.

    Args:
        park_name: National park name or alias (e.g. 'Yosemite', 'Grand Canyon').

    Returns:
        The park and its airports with airport_code, airport_name, city, drive_hours,
        drive_km and airport_type (major or regional), ordered by drive time.
    """
    return park_listing(
        ctx,
        park_name,
        "airports",
        """SELECT a.code AS airport_code, a.name AS airport_name, a.city, a.state,
                  pa.drive_hours, pa.drive_km, a.airport_type
             FROM park_airports pa JOIN airports a ON a.code = pa.airport_code
            WHERE pa.park_id = ? ORDER BY pa.drive_hours, a.code""",
    )


@tool
def search_flights(
    ctx: CompassContext,
    origin: str,
    destination: str,
    departure_date: str,
    return_date: str,
    passengers: Annotated[int, Field(ge=1, le=9)] = 1,
    max_price: Annotated[float, Field(ge=0)] | None = None,
    airline_preference: str | None = None,
    booking_class: BookingClass | None = None,
    direct_flights_only: bool = False,
    page: Page = 1,
) -> dict:
    """Search round-trip flight packages between two airports on given dates (August 2025).

    Only packages with enough seats for all passengers on both legs are returned, sorted by
    price per passenger (ascending), ties by package ID, up to 20 per page: use page to see
    more. A page holds fewer when 20 would not fit the size of a tool result; it then gives
    next_page, the page that continues it.

    Args:
        origin: Departure airport, 3-letter code (e.g. 'JFK').
        destination: Arrival airport, 3-letter code (e.g. 'FAT').
        departure_date: Outbound date, YYYY-MM-DD.
        return_date: Return date, YYYY-MM-DD, after departure_date.
        passengers: Number of passengers (1-9).
        max_price: Maximum round-trip price per passenger (USD).
        airline_preference: Airline code or name (e.g. 'UA' or 'United Airlines').
        booking_class: economy, premium_economy or business.
        direct_flights_only: Only packages whose both legs are non-stop.
        page: 1-based page number.

    Returns:
        Result counts and one page of packages with package_id, airline, class, both legs'
        times, durations and stops, price per passenger and total price.
    """
    src, dst = _airport(ctx, origin, "origin"), _airport(ctx, destination, "destination")
    dep = parse_date(departure_date, "departure_date")
    ret = parse_date(return_date, "return_date")
    if ret <= dep:
        raise ContentError("return_date must be after departure_date")
    airline = _airline_code(ctx, airline_preference) if airline_preference else None
    key = (src["code"], dst["code"], dep, ret, passengers, max_price, airline, booking_class,
           direct_flights_only)  # fmt: skip
    # every page is a slice of the same full list: built once per search, not once per page
    results = ctx.cache.search(("search_flights", *key), lambda: _flight_results(ctx, *key))
    head = {
        "origin": src["code"],
        "destination": dst["code"],
        "departure_date": day_to_date(dep).isoformat(),
        "return_date": day_to_date(ret).isoformat(),
        "passengers": passengers,
    }
    out = paged(ctx, ("search_flights", *key), head, results, page)
    out["results"] = [{**r, "outbound": dict(r["outbound"]), "return": dict(r["return"])}
                      for r in out["results"]]  # fmt: skip
    return out


def _flight_results(ctx: CompassContext, src: str, dst: str, dep: int, ret: int, passengers: int,
                    max_price: float | None, airline: str | None, booking_class: str | None,
                    direct_flights_only: bool) -> list[dict]:  # fmt: skip
    """Every package of a search (all pages), sorted."""
    found = rows(
        ctx.conn.execute(
            _SEARCH_SQL,
            (
                day_to_date(dep).isoformat(),
                day_to_date(ret).isoformat(),
                src,
                dst,
                passengers,
                passengers,
            ),
        )
    )
    results = []
    for r in found:
        per_pax = round(r["o_price"] + r["r_price"], 2)
        if airline and r["airline"] != airline:
            continue
        if booking_class and r["booking_class"] != booking_class:
            continue
        if direct_flights_only and (r["o_stops"] or r["r_stops"]):
            continue
        if max_price is not None and per_pax > max_price:
            continue
        results.append(
            {
                "package_id": FlightPackage(r["template_id"], dep, ret).id,
                "airline": r["airline"],
                "booking_class": r["booking_class"],
                "outbound": _leg(r, "o", src, dst),
                "return": _leg(r, "r", dst, src),
                "direct": not (r["o_stops"] or r["r_stops"]),
                "price_per_passenger": per_pax,
                "total_price": round(per_pax * passengers, 2),
                "seats_left": min(r["o_seats"], r["r_seats"]),
            }
        )
    results.sort(key=lambda x: (x["price_per_passenger"], x["package_id"]))
    return results


def _leg(r: dict, p: str, origin: str, destination: str) -> dict:
    return {
        "flight_number": r[f"{p}_number"],
        "origin": origin,
        "destination": destination,
        "departure_time": r[f"{p}_dep"],
        "arrival_time": r[f"{p}_arr"] + ("+1" if r[f"{p}_offset"] else ""),
        "duration_min": r[f"{p}_dur"],
        "stops": r[f"{p}_stops"],
        "layover_airport": r[f"{p}_layover"],
        "has_wifi": bool(r[f"{p}_wifi"]),
        "pet_policy": r[f"{p}_pet"],
    }


def _airline_code(ctx: CompassContext, text: str) -> str:
    wanted = text.strip().lower()
    for code, name in ctx.conn.execute("SELECT code, name FROM airlines ORDER BY code"):
        if wanted in (code.lower(), name.lower()) or (len(wanted) > 3 and wanted in name.lower()):
            return code
    names = ", ".join(f"{c} ({n})" for c, n in ctx.conn.execute("SELECT code, name FROM airlines"))
    raise ContentError(f"unknown airline {text!r}; airlines: {names}")


@tool
def get_flight_details(ctx: CompassContext, package_id: str) -> dict:
    """Get every detail of a round-trip flight package.

    Args:
        package_id: Flight package ID, format flight_<templateid>_<depday>_<retday>.

    Returns:
        Airline, class, both legs (flight number, airports, dates, times, duration, stops,
        layover, Wi-Fi, pet policy, price and seats), price per passenger and bookability.
    """
    try:
        offer = resolve(ctx.conn, package_id, kind="flight")
    except (PackageIdError, PackageNotFound) as exc:
        raise ContentError(str(exc)) from None
    legs = {}
    for key, leg in (("outbound", offer.outbound), ("return", offer.inbound)):
        legs[key] = {f: leg[f] for f in _LEG_FIELDS} | {
            "date": leg["date"],
            "has_wifi": bool(leg["has_wifi"]),
            "pet_policy": leg["pet_policy"],
            "price": leg["price"],
            "seats_left": leg["seats"] or 0,
        }
    return {
        "package_id": offer.package_id,
        "airline": offer.airline,
        "airline_name": offer.airline_name,
        "booking_class": offer.booking_class,
        **legs,
        "direct": offer.direct,
        "total_duration_min": offer.total_duration_min,
        "price_per_passenger": offer.price_per_passenger,
        "seats_left": offer.min_seats,
        "bookable": offer.bookable,
    }


@tool
def get_airport_coordinates(ctx: CompassContext, airport_code: str) -> dict:
    """Get the latitude and longitude of an airport.

    Args:
        airport_code: 3-letter airport code (e.g. 'LAX', 'JAC').

    Returns:
        airport_code, name, city, latitude and longitude.
    """
    a = _airport(ctx, airport_code, "airport_code")
    return {
        "airport_code": a["code"],
        "name": a["name"],
        "city": a["city"],
        "latitude": a["lat"],
        "longitude": a["lon"],
    }
