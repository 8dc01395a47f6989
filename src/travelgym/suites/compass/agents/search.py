"""Gathering COMPASS facts through the tools only, as an agent would.

The scripted baselines never touch the database: every fact they use (prices, amenities,
seats, permit dates) comes from tool payloads, converted into the same fact dictionaries the
scorer uses, so their choices are checked by the same constraint definitions.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from travelgym.suites.compass.env import CompassToolSession
from travelgym.suites.compass.facts import HOTEL_FLAGS, ROOM_FLAGS, cents
from travelgym.suites.compass.packages import day_to_date, parse_package_id

HOTEL_FACT_NAMES = [
    "park_id", "hotel_id", "star_rating", "review_score", "review_count", "distance_km",
    *HOTEL_FLAGS, "bed_type", "max_occupancy", *ROOM_FLAGS, "config_id", "start", "end", "cost",
    "max_night", "free_cancellation", "no_prepayment", "breakfast_included", "rooms",
]  # fmt: skip
FLIGHT_FACT_NAMES = [
    "template_id", "booking_class", "park_id", "drive_hours", "start", "end", "origin",
    "destination", "airline", "per_pax", "seats", "total_duration", "max_leg_duration",
    "has_wifi", "pet_in_cabin", "out_departure", "out_arrival", "ret_departure", "ret_arrival",
    "direct",
]  # fmt: skip
PERMIT_FACT_NAMES = ["permit_id", "park_id", "permit_type", "per_person", "max_party_size", "start",
                     "slots", "days"]  # fmt: skip


class ToolSearcher:
    """Calls tools through the episode's environment, memoising identical calls (and the facts
    built from a stay's search, which a re-plan asks for again)."""

    def __init__(self, env: CompassToolSession) -> None:
        self.env = env
        self._memo: dict[Any, Any] = {}

    def call(self, name: str, **args: Any) -> dict | None:
        # arguments are scalars: a sorted tuple is the key (no JSON text per call)
        key = (name, *sorted(args.items()))
        if key not in self._memo:
            record = self.env.call(name, args)
            self._memo[key] = self.env.last_payload if record.ok else None
        return self._memo[key]

    def _memoised(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def pages(self, name: str, key: str, *, first_only: bool = False, **args: Any) -> list[dict]:
        """Every result of a paged search tool (the first page's only when ``first_only``)."""
        first = self.call(name, **args, page=1)
        if not first:
            return []
        items = list(first[key])
        if first_only:
            return items
        for page in range(2, first["pages"] + 1):
            more = self.call(name, **args, page=page)
            items += more[key] if more else []
        return items

    # ------------------------------------------------------------------------- hotels

    def hotels(
        self,
        park: dict,
        start: int,
        end: int,
        travellers: int,
        rooms: int,
        max_nightly: float | None = None,
        limit_pages: int | None = None,
    ) -> list[dict]:
        """Hotel facts for every package of a stay (the first ``limit_pages`` pages if set)."""
        key = ("hotels", park["park_id"], start, end, travellers, rooms, max_nightly, limit_pages)
        return self._memoised(
            key, lambda: self._hotels(park, start, end, travellers, rooms, max_nightly, limit_pages)
        )

    def _hotels(self, park: dict, start: int, end: int, travellers: int, rooms: int,
                max_nightly: float | None, limit_pages: int | None) -> list[dict]:  # fmt: skip
        args = {"location": park["name"], "start_date": day_to_date(start).isoformat(),
                "end_date": day_to_date(end).isoformat(), "num_guests": travellers,
                "num_rooms": rooms}  # fmt: skip
        if max_nightly is not None:
            args["max_price_nightly"] = max_nightly
        results = self.pages("search_hotel", "results", first_only=limit_pages is not None, **args)
        out = []
        for r in results:
            hotel = self.call("get_hotel_details", hotel_identifier=r["hotel_id"])
            room = self._room(r["config_id"], r["package_id"])
            if hotel is None or room is None:
                continue
            facts = {k: r[k] for k in ("hotel_id", "star_rating", "review_score", "review_count",
                                       "distance_km", "config_id", "free_cancellation",
                                       "no_prepayment", "breakfast_included", "rooms")}  # fmt: skip
            facts.update(hotel["amenities"])
            facts.update(room["room_amenities"])
            facts.update(park_id=park["park_id"], bed_type=room["bed_type"],
                         max_occupancy=r["max_occupancy"], start=start, end=end,
                         # only the nightly cap reads max_night, and the search filter above
                         # already guarantees it, so the per-package nightly prices aren't fetched
                         cost=cents(r["total_price"]), max_night=0,
                         package_id=r["package_id"], bookable=True)  # fmt: skip
            out.append(facts)
        return out

    def _room(self, config_id: int, package_id: str) -> dict | None:
        """Room details once per configuration (room features do not depend on dates)."""
        return self._memoised(
            ("room", config_id), lambda: self.call("get_room_details", package_id=package_id)
        )

    # ------------------------------------------------------------------------ flights

    def airports(self, park: dict) -> list[dict]:
        found = self.call("search_airports", park_name=park["name"])
        return found["airports"] if found else []

    def flights(
        self,
        park: dict,
        origin: str,
        start: int,
        end: int,
        travellers: int,
        airports: list[dict] | None = None,
        first_page_only: bool = False,
    ) -> list[dict]:
        """Flight facts for round trips from ``origin`` into the park's airports on a stay."""
        codes = None if airports is None else tuple(a["airport_code"] for a in airports)
        key = ("flights", park["park_id"], origin, start, end, travellers, codes, first_page_only)
        return self._memoised(
            key,
            lambda: self._flights(park, origin, start, end, travellers, airports, first_page_only),
        )

    def _flights(self, park: dict, origin: str, start: int, end: int, travellers: int,
                 airports: list[dict] | None, first_page_only: bool) -> list[dict]:  # fmt: skip
        out = []
        for airport in airports if airports is not None else self.airports(park):
            args = {"origin": origin, "destination": airport["airport_code"],
                    "departure_date": day_to_date(start).isoformat(),
                    "return_date": day_to_date(end).isoformat(), "passengers": travellers}  # fmt: skip
            results = self.pages("search_flights", "results", first_only=first_page_only, **args)
            for r in results:
                out_leg, ret_leg = r["outbound"], r["return"]
                out.append({
                    "package_id": r["package_id"],
                    "template_id": parse_package_id(r["package_id"]).template_id,
                    "booking_class": r["booking_class"], "park_id": park["park_id"],
                    "drive_hours": airport["drive_hours"], "start": start, "end": end,
                    "origin": out_leg["origin"], "destination": out_leg["destination"],
                    "airline": r["airline"], "per_pax": cents(r["price_per_passenger"]),
                    "seats": r["seats_left"], "direct": r["direct"],
                    "total_duration": out_leg["duration_min"] + ret_leg["duration_min"],
                    "max_leg_duration": max(out_leg["duration_min"], ret_leg["duration_min"]),
                    "has_wifi": out_leg["has_wifi"] and ret_leg["has_wifi"],
                    "pet_in_cabin": out_leg["pet_policy"] == ret_leg["pet_policy"] == "in_cabin",
                    "out_departure": out_leg["departure_time"], "out_arrival": _clock(out_leg["arrival_time"]),
                    "ret_departure": ret_leg["departure_time"], "ret_arrival": _clock(ret_leg["arrival_time"]),
                    "bookable": True,
                })  # fmt: skip
        return out

    # ------------------------------------------------------------------------ permits

    def permits(
        self, park: dict, name: str, first: int, last: int, days: int, travellers: int
    ) -> list[dict]:
        found = self.call("search_permit_availability", park=park["name"], template_name=name,
                          date_range=f"{day_to_date(first)} to {day_to_date(last)}",
                          duration_days=days, party_size=travellers)  # fmt: skip
        if not found:
            return []
        p = found["permit"]
        return [{
            "package_id": item["package_id"], "permit_id": p["permit_id"], "park_id": park["park_id"],
            "permit_type": p["permit_type"], "per_person": cents(p["price_per_person"]),
            "max_party_size": p["max_party_size"], "start": int(item["date"][-2:]),
            "slots": item["slots_remaining"], "days": days, "bookable": True,
        } for item in found["available_dates"]]  # fmt: skip


def _clock(text: str) -> str:
    """'01:20+1' -> '25:20' (next-day arrivals sort after same-day ones, as in the facts)."""
    if text.endswith("+1"):
        hours, minutes = text[:-2].split(":")
        return f"{int(hours) + 24:02d}:{minutes}"
    return text
