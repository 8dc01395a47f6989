"""Flights, round-trip templates and daily prices from raw Booking.com flight searches.

Reads ``flights/search_<ORIGIN>_<DEST>_<YYYY-MM-DD>.json`` (one-way ``searchFlights`` responses);
the layout and every field mapping are documented in ``docs/compass/ingest.md``.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from travelgym.suites.compass.ingest_json import (
    Loc,
    check,
    get,
    get_path,
    items,
    load_json,
    parse_date,
    parse_datetime,
    scan,
)
from travelgym.suites.compass.reference import AIRLINES, PARKS, airports

PATTERNS = {
    "search": re.compile(r"search_(?P<origin>[^_]+)_(?P<dest>[^_]+)_(?P<date>[^_]+)\.json"),
}
EXPECTED = "search_<ORIGIN>_<DEST>_<YYYY-MM-DD>.json"
CABIN_CLASSES = {
    "ECONOMY": "economy",
    "PREMIUM_ECONOMY": "premium_economy",
    "BUSINESS": "business",
    "FIRST": None,  # not a class of the schema: such offers are skipped
}
CLASS_ORDER = ("economy", "premium_economy", "business")
# Published policies of the reference carriers: all four take small pets in the cabin.
PET_POLICY = {"AA": "in_cabin", "DL": "in_cabin", "UA": "in_cabin", "AS": "in_cabin"}
WIFI_WORDS = ("wifi", "wi-fi", "internet")


@dataclass
class FlightRows:
    """Rows for the flights, flight_templates and flight_prices tables, in insertion order."""

    flights: list[tuple] = field(default_factory=list)
    templates: list[tuple] = field(default_factory=list)
    prices: list[tuple] = field(default_factory=list)


# A leg's schedule: what makes two offers on different dates the same ``flights`` row.
_Schedule = (
    tuple  # (origin, destination, airline, number, dep, arr, offset, duration, hub, layover)
)


def read_flights(root: Path) -> FlightRows:
    """Parse every raw flight search under ``root/flights`` into table rows."""
    known = airports()
    wifi: dict[_Schedule, bool] = {}
    # (schedule, booking_class, date) -> (price, seats); the cheapest fare of the day wins
    fares: dict[tuple[_Schedule, str, str], tuple[float, int]] = {}
    for rel, match in scan(root, "flights", PATTERNS, EXPECTED)["search"]:
        name = Loc(rel)
        for key in ("origin", "dest"):
            if match[key] not in known:
                field_name = "origin" if key == "origin" else "destination"
                raise name.key(field_name).error(f"unknown airport {match[key]!r} in the file name")
        day = parse_date(match["date"], name.key("date"))
        data = load_json(root, rel)
        offers = get(data, "data", name, "dict")
        for offer, loc in items(offers, "flightOffers", name.key("data")):
            parsed = _read_offer(offer, loc, match["origin"], match["dest"], day, known)
            if parsed is None:
                continue
            schedule, has_wifi, cls, price, seats = parsed
            wifi[schedule] = wifi.get(schedule, False) or has_wifi
            key = (schedule, cls, day)
            if key not in fares or price < fares[key][0]:
                fares[key] = (price, seats)
    return _rows(wifi, fares)


def _rows(
    wifi: dict[_Schedule, bool], fares: dict[tuple[_Schedule, str, str], tuple[float, int]]
) -> FlightRows:
    rows = FlightRows()
    ids: dict[_Schedule, int] = {}
    for schedule in sorted(wifi, key=_sort_key):
        ids[schedule] = len(ids) + 1
        origin, dest, airline, number, dep, arr, offset, duration, hub, layover = schedule
        stops = 0 if hub is None else 1
        rows.flights.append(
            (ids[schedule], number, airline, origin, dest, dep, arr, offset, duration, stops, hub)
            + (layover, int(wifi[schedule]), PET_POLICY[airline])
        )
    for (schedule, cls, day), (price, seats) in fares.items():
        rows.prices.append((ids[schedule], cls, day, price, seats))
    rows.prices.sort(key=lambda r: (r[0], CLASS_ORDER.index(r[1]), r[2]))
    classes: dict[int, set[str]] = {}
    for flight_id, cls, *_ in rows.prices:
        classes.setdefault(flight_id, set()).add(cls)
    by_route: dict[tuple[str, str, str], list[int]] = {}
    for row in rows.flights:
        by_route.setdefault((row[3], row[4], row[2]), []).append(row[0])
    park_airports = {code for park in PARKS for code in park.airports}
    for out_id, _, airline, origin, dest, *_ in rows.flights:
        if dest not in park_airports:
            continue  # outbound legs fly towards a park
        # the return leg flies the same route back with the same airline, in the same class
        for back_id in by_route.get((dest, origin, airline), []):
            for cls in CLASS_ORDER:
                if cls in classes[out_id] and cls in classes[back_id]:
                    rows.templates.append((len(rows.templates) + 1, out_id, back_id, cls))
    return rows


def _sort_key(schedule: _Schedule) -> tuple:
    """Sort key of a schedule: None (a direct flight's hub and layover) sorts first."""
    return tuple((v is not None, v if v is not None else 0) for v in schedule)


def _read_offer(
    offer: Any, loc: Loc, origin: str, dest: str, day: str, known: dict
) -> tuple[_Schedule, bool, str, float, int] | None:
    """One offer as (schedule, has_wifi, class, price, seats); None when outside the schema."""
    segments = get(offer, "segments", loc, "list")
    if len(segments) != 1:
        raise loc.key("segments").error(
            f"expected one segment (one-way search), got {len(segments)}"
        )
    seg_loc = loc.key("segments").index(0)
    segment = segments[0]
    for key, expected in (("departureAirport", origin), ("arrivalAirport", dest)):
        code = get_path(segment, f"{key}.code", seg_loc, "str")
        if code != expected:
            raise (
                seg_loc.key(key)
                .key("code")
                .error(f"{code!r} does not match {expected!r} in the file name")
            )
    departure = parse_datetime(
        get(segment, "departureTime", seg_loc, "str"), seg_loc.key("departureTime")
    )
    arrival = parse_datetime(
        get(segment, "arrivalTime", seg_loc, "str"), seg_loc.key("arrivalTime")
    )
    if arrival < departure - dt.timedelta(hours=26):  # local times: only time zones differ
        raise seg_loc.key("arrivalTime").error("before the departure")
    if departure.date().isoformat() != day:
        raise seg_loc.key("departureTime").error(f"departure date is not {day} (the file name)")
    seconds = get(segment, "totalTime", seg_loc, "int")
    if seconds <= 0:
        raise seg_loc.key("totalTime").error(f"{seconds} is not a positive duration")
    legs = [_read_leg(leg, at) for leg, at in items(segment, "legs", seg_loc)]
    if not legs:
        raise seg_loc.key("legs").error("empty")
    price, seats = _price(offer, loc), _seats(offer, loc)
    carriers = {leg["carrier"] for leg in legs}
    cabins = {leg["cabin"] for leg in legs}
    if len(legs) > 2 or len(carriers) > 1 or len(cabins) > 1:
        return None  # two or more stops, mixed carriers or mixed cabins: not in the schema
    airline, cabin = carriers.pop(), cabins.pop()
    if airline not in AIRLINES or cabin is None:
        return None  # a carrier outside the reference airlines, or first class
    hub = layover = None
    if len(legs) == 2:
        hub = legs[0]["to"]
        if legs[1]["from"] != hub:
            raise (
                seg_loc.key("legs")
                .index(1)
                .key("departureAirport")
                .key("code")
                .error(f"{legs[1]['from']!r} is not where legs[0] arrives ({hub!r})")
            )
        layover = int((legs[1]["departs"] - legs[0]["arrives"]).total_seconds() // 60)
        if layover < 0:
            raise (
                seg_loc.key("legs")
                .index(1)
                .key("departureTime")
                .error("departs before legs[0] arrives")
            )
        if hub not in known:
            return None  # a connection outside the reference airports
    schedule = (
        origin,
        dest,
        airline,
        "/".join(leg["number"] for leg in legs),
        departure.strftime("%H:%M"),
        arrival.strftime("%H:%M"),
        (arrival.date() - departure.date()).days,
        int(round(seconds / 60)),
        hub,
        layover,
    )
    return schedule, all(leg["wifi"] for leg in legs), cabin, price, seats


def _read_leg(leg: Any, loc: Loc) -> dict[str, Any]:
    carriers = get(leg, "carriersData", loc, "list")
    if not carriers:
        raise loc.key("carriersData").error("empty")
    carrier = get(carriers[0], "code", loc.key("carriersData").index(0), "str").upper()
    number = get_path(leg, "flightInfo.flightNumber", loc, "int")
    cabin_raw = get(leg, "cabinClass", loc, "str")
    if cabin_raw.upper() not in CABIN_CLASSES:
        known = ", ".join(CABIN_CLASSES)
        raise loc.key("cabinClass").error(f"unknown value {cabin_raw!r} (known: {known})")
    amenities = []
    for entry, at in items(leg, "amenities", loc, required=False):
        text = entry if isinstance(entry, str) else get(entry, "category", at, "str")
        amenities.append(check(text, at, "str").lower())
    return {
        "carrier": carrier,
        "number": f"{carrier}{number}",
        "cabin": CABIN_CLASSES[cabin_raw.upper()],
        "from": get_path(leg, "departureAirport.code", loc, "str"),
        "to": get_path(leg, "arrivalAirport.code", loc, "str"),
        "departs": parse_datetime(get(leg, "departureTime", loc, "str"), loc.key("departureTime")),
        "arrives": parse_datetime(get(leg, "arrivalTime", loc, "str"), loc.key("arrivalTime")),
        "wifi": any(w in a for a in amenities for w in WIFI_WORDS),
    }


def _price(offer: Any, loc: Loc) -> float:
    at = loc.key("priceBreakdown").key("total")
    total = get_path(offer, "priceBreakdown.total", loc, "dict")
    currency = get(total, "currencyCode", at, "str")
    if currency != "USD":
        raise at.key("currencyCode").error(f"{currency!r} is not USD (request prices in USD)")
    units = get(total, "units", at, "int")
    nanos = get(total, "nanos", at, "int", required=False) or 0
    price = round(units + nanos / 1e9, 2)
    if price <= 0:
        raise at.key("units").error(f"{price} is not a positive price")
    return price


def _seats(offer: Any, loc: Loc) -> int:
    path = "seatAvailability.numberOfSeatsAvailableAtThisPrice"
    seats = get_path(offer, path, loc, "int")
    if seats < 0:
        raise (
            loc.key("seatAvailability")
            .key("numberOfSeatsAvailableAtThisPrice")
            .error(f"{seats} is negative")
        )
    return seats
