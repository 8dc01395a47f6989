"""Hotels, rooms, rate plans and nightly offers from raw Booking.com hotel responses.

Reads ``hotels/search_<park_id>.json``, ``hotels/details_<hotel_id>.json`` and
``hotels/availability_<hotel_id>_<YYYY-MM-DD>.json``; the layout and every field mapping are
documented in ``docs/compass/ingest.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from travelgym.geo import ROAD_DETOUR_FACTOR, driving_km
from travelgym.suites.compass.ingest_json import (
    IngestError,
    Loc,
    check,
    get,
    in_range,
    items,
    load_json,
    parse_date,
    scan,
)
from travelgym.suites.compass.ingest_offers import block_terms
from travelgym.suites.compass.reference import PARKS

PATTERNS = {
    "search": re.compile(r"search_(?P<park>[^_]+)\.json"),
    "details": re.compile(r"details_(?P<hotel>[^_]+)\.json"),
    "availability": re.compile(r"availability_(?P<hotel>[^_]+)_(?P<date>[^_]+)\.json"),
}

# Flag column -> (substrings of a facility name that set it, substrings that veto the match).
HOTEL_FACILITIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "has_pool": (("pool",), ("pool table", "carpool")),
    "has_restaurant": (("restaurant",), ()),
    "has_parking": (("parking",), ("no parking",)),
    "has_gym": (("fitness", "gym"), ()),
    "is_pet_friendly": (("pets allowed", "pet friendly", "pet-friendly"), ("not allowed",)),
    "has_wifi": (("wifi", "wi-fi", "internet"), ("no internet",)),
    "has_breakfast": (("breakfast",), ()),
    "is_accessible": (("wheelchair", "disabled", "accessibility"), ()),
    "has_ev_charging": (("electric vehicle", "ev charging", "charging station"), ()),
    "has_laundry": (("laundry",), ()),
}
ROOM_FACILITIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "has_kitchenette": (("kitchenette", "kitchen"), ()),
    "has_air_conditioning": (("air conditioning", "air-conditioning"), ()),
    "has_private_bathroom": (("private bathroom",), ()),
    "has_balcony": (("balcony", "terrace", "patio"), ()),
    "has_view": (("view",), ()),
    "has_coffee_maker": (("coffee",), ()),
}

# Booking.com bed names -> schema bed_type; first matching substring wins, so order matters
# ("Extra-large double bed" is a king, "Large double bed" a queen, "Double bed" a double).
BED_NAMES: tuple[tuple[str, str], ...] = (
    ("extra-large double", "king"),
    ("king", "king"),
    ("large double", "queen"),
    ("queen", "queen"),
    ("bunk", "bunk"),
    ("sofa", "sofa"),
    ("futon", "sofa"),
    ("single", "twin"),
    ("twin", "twin"),
    ("double", "double"),
    ("full", "double"),
)
BED_RANK = ("king", "queen", "double", "twin", "bunk", "sofa")  # the room's bed_type is the best

EXPECTED = (
    "search_<park_id>.json, details_<hotel_id>.json or availability_<hotel_id>_<YYYY-MM-DD>.json"
)
_PARK_IDS = {p.park_id: p for p in PARKS}


# table -> its rows, for the hotels, rooms, room_configs and offers tables in insertion order
HotelRows = dict[str, list[tuple]]


@dataclass
class _Candidate:
    hotel_id: int
    park_id: str
    distance_km: float
    fields: tuple  # the hotels columns up to distance_km
    loc: Loc


def read_hotels(root: Path) -> HotelRows:
    """Parse every raw hotel file under ``root/hotels`` into table rows."""
    if not (root / "hotels").is_dir():
        raise IngestError("hotels/: missing directory (hotel search results are required)")
    files = scan(root, "hotels", PATTERNS, EXPECTED)
    chosen = _choose_parks(_read_searches(root, files["search"]))
    names: dict[str, int] = {}
    for hotel_id in sorted(chosen):  # tools find hotels by name: names must be unique
        name, loc = chosen[hotel_id].fields[2], chosen[hotel_id].loc.key("hotel_name")
        if name in names:
            raise loc.error(f"duplicate name {name!r} (also hotel {names[name]})")
        names[name] = hotel_id
    details = {}
    for rel, match in files["details"]:
        hotel_id = _hotel_id_from_name(match["hotel"], rel, chosen)
        details[hotel_id] = rel
    rows: HotelRows = {"hotels": [], "rooms": [], "room_configs": [], "offers": []}
    room_owner: dict[int, tuple[int, str]] = {}
    for hotel_id in sorted(chosen):
        cand = chosen[hotel_id]
        if hotel_id not in details:
            raise IngestError(
                f"hotels/details_{hotel_id}.json: missing file "
                f"(hotel {hotel_id} is listed at {cand.loc.file}: {cand.loc.path})"
            )
        rows["hotels"].append(
            _read_details(root, details[hotel_id], cand, rows["rooms"], room_owner)
        )
    _read_availability(root, files["availability"], chosen, room_owner, rows)
    return rows


def _hotel_id_from_name(text: str, rel: str, known: dict[int, Any]) -> int:
    if not (text.isascii() and text.isdigit()):
        raise IngestError(f"{rel}: hotel_id: {text!r} in the file name is not an integer")
    hotel_id = int(text)
    if hotel_id not in known:
        raise IngestError(f"{rel}: hotel_id: unknown hotel {hotel_id} (in no search file)")
    return hotel_id


# ----------------------------------------------------------------------------- search results


def _read_searches(root: Path, files: list[tuple[str, re.Match[str]]]) -> list[_Candidate]:
    out = []
    for rel, match in files:
        park = _PARK_IDS.get(match["park"])
        if park is None:
            raise IngestError(f"{rel}: park_id: unknown park {match['park']!r} in the file name")
        seen: dict[int, str] = {}
        for record, loc in items(load_json(root, rel), "result", Loc(rel)):
            hotel_id = get(record, "hotel_id", loc, "int")
            if hotel_id in seen:
                raise loc.key("hotel_id").error(
                    f"duplicate hotel {hotel_id} (also {seen[hotel_id]})"
                )
            seen[hotel_id] = loc.path
            lat = in_range(get(record, "latitude", loc, "number"), loc.key("latitude"), -90, 90)
            lon = in_range(get(record, "longitude", loc, "number"), loc.key("longitude"), -180, 180)
            # ``distance`` is the straight-line km from the searched point (the park centre).
            crow = get(record, "distance", loc, "number", required=False)
            dist = (
                crow * ROAD_DETOUR_FACTOR
                if crow is not None
                else driving_km(lat, lon, park.lat, park.lon)
            )
            dist = round(dist, 1)
            fields = _hotel_fields(record, loc, hotel_id, park.park_id, lat, lon, dist)
            out.append(_Candidate(hotel_id, park.park_id, dist, fields, loc))
    return out


def _choose_parks(candidates: list[_Candidate]) -> dict[int, _Candidate]:
    """A hotel found near several parks belongs to the nearest (ties: the earlier park)."""
    order = {p.park_id: i for i, p in enumerate(PARKS)}
    chosen: dict[int, _Candidate] = {}
    for cand in candidates:
        best = chosen.get(cand.hotel_id)
        if best is None or (cand.distance_km, order[cand.park_id]) < (
            best.distance_km,
            order[best.park_id],
        ):
            chosen[cand.hotel_id] = cand
    return chosen


def _hotel_fields(
    rec: dict, loc: Loc, hotel_id: int, park_id: str, lat: float, lon: float, dist: float
) -> tuple:
    name = get(rec, "hotel_name", loc, "str")
    brand = get(rec, "brand", loc, "str", required=False) or get(
        rec, "chain", loc, "str", required=False
    )
    town = get(rec, "city", loc, "str")
    stars = in_range(get(rec, "class", loc, "number"), loc.key("class"), 0, 5)
    score = in_range(get(rec, "review_score", loc, "number"), loc.key("review_score"), 1, 10)
    reviews = get(rec, "review_nr", loc, "int")
    if reviews < 0:
        raise loc.key("review_nr").error(f"{reviews} is negative")
    unrated_floor = max(1.0, stars)  # Booking.com class 0 means "unrated"; the schema's floor is 1
    return (hotel_id, park_id, name, brand, town, lat, lon, unrated_floor, score, reviews, dist)


# ----------------------------------------------------------------------------------- details


def _facility_names(container: Any, name: str, loc: Loc) -> list[str]:
    """Lower-cased facility names; an entry is a string or an object with a name."""
    names = []
    for entry, at in items(container, name, loc, required=False):
        if isinstance(entry, str):
            names.append(check(entry, at, "str").lower())
        else:
            key = (
                "facility_name" if isinstance(entry, dict) and "facility_name" in entry else "name"
            )
            names.append(get(entry, key, at, "str").lower())
    return names


def _flags(names: list[str], table: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]) -> list:
    def has(keys: tuple[str, ...], vetoes: tuple[str, ...]) -> int:
        return int(
            any(any(k in n for k in keys) and not any(v in n for v in vetoes) for n in names)
        )

    return [has(keys, vetoes) for keys, vetoes in table.values()]


def _read_details(
    root: Path,
    rel: str,
    cand: _Candidate,
    rooms: list[tuple],
    room_owner: dict[int, tuple[int, str]],
) -> tuple:
    data, loc = load_json(root, rel), Loc(rel)
    inner_id = get(data, "hotel_id", loc, "int", required=False)
    if inner_id is not None and inner_id != cand.hotel_id:
        raise loc.key("hotel_id").error(f"{inner_id} does not match the file name")
    hotel = cand.fields + tuple(_flags(_facility_names(data, "facilities", loc), HOTEL_FACILITIES))
    room_list = get(data, "rooms", loc, "list")
    if not room_list:
        raise loc.key("rooms").error("empty (a hotel needs at least one room)")
    for room, at in items(data, "rooms", loc):
        room_id = get(room, "room_id", at, "int")
        if room_id in room_owner:
            raise at.key("room_id").error(
                f"duplicate room {room_id} (also in {room_owner[room_id][1]})"
            )
        room_owner[room_id] = (cand.hotel_id, rel)
        occupancy = get(room, "max_occupancy", at, "int")
        if occupancy < 1:
            raise at.key("max_occupancy").error(f"{occupancy} is below 1")
        size = get(room, "room_surface_in_m2", at, "number", required=False)
        configuration, bed_type = _beds(room, at)
        flags = _flags(_facility_names(room, "facilities", at), ROOM_FACILITIES)
        rooms.append(
            (
                room_id,
                cand.hotel_id,
                get(room, "room_name", at, "str"),
                configuration,
                bed_type,
                occupancy,
                int(round(size)) if size is not None else 0,
                *flags,
            )
        )
    return hotel


def _bed_type(name: str, loc: Loc) -> str:
    lowered = name.lower()
    for key, bed in BED_NAMES:
        if key in lowered:
            return bed
    raise loc.error(f"unknown bed name {name!r}")


def _beds(room: dict, loc: Loc) -> tuple[str, str]:
    """(bed_configuration text, bed_type) from the room's first bed configuration."""
    configs = get(room, "bed_configurations", loc, "list")
    if not configs:
        raise loc.key("bed_configurations").error("empty")
    first = loc.key("bed_configurations").index(0)
    counts: dict[str, int] = {}
    for bed, at in items(configs[0], "bed_types", first):
        kind = _bed_type(get(bed, "name", at, "str"), at.key("name"))
        count = get(bed, "count", at, "int")
        if count < 1:
            raise at.key("count").error(f"{count} is below 1")
        counts[kind] = counts.get(kind, 0) + count
    if not counts:
        raise first.key("bed_types").error("empty")
    kinds = sorted(counts, key=BED_RANK.index)
    text = " and ".join(f"{counts[k]} {k} bed{'s' if counts[k] > 1 else ''}" for k in kinds)
    return text, kinds[0]


# ------------------------------------------------------------------------------ availability


def _read_availability(
    root: Path,
    files: list[tuple[str, re.Match[str]]],
    chosen: dict[int, _Candidate],
    room_owner: dict[int, tuple[int, str]],
    rows: HotelRows,
) -> None:
    # (room_id, rate_name, night) -> (price, available, cancellation, meal, prepayment)
    best: dict[tuple[int, str, str], tuple] = {}
    for rel, match in files:
        hotel_id = _hotel_id_from_name(match["hotel"], rel, chosen)
        night = parse_date(match["date"], Loc(rel, "arrival_date"))
        data, loc = load_json(root, rel), Loc(rel)
        inner_id = get(data, "hotel_id", loc, "int", required=False)
        if inner_id is not None and inner_id != hotel_id:
            raise loc.key("hotel_id").error(f"{inner_id} does not match the file name")
        arrival = get(data, "arrival_date", loc, "str", required=False)
        if arrival is not None and arrival != night:
            raise loc.key("arrival_date").error(f"{arrival!r} does not match the file name")
        for block, at in items(data, "block", loc):
            room_id = get(block, "room_id", at, "int")
            if room_owner.get(room_id, (None,))[0] != hotel_id:
                raise at.key("room_id").error(
                    f"unknown room {room_id} (not in hotels/details_{hotel_id}.json)"
                )
            offer = block_terms(block, at)
            key = (room_id, get(block, "name", at, "str"), night)
            if key not in best or offer[0] < best[key][0]:
                best[key] = offer  # several blocks of one rate: keep the cheapest
    config_ids: dict[tuple[int, str], int] = {}
    for room_id, rate_name in sorted({(r, n) for r, n, _ in best}):
        config_ids[(room_id, rate_name)] = len(config_ids) + 1
        rows["room_configs"].append((config_ids[(room_id, rate_name)], room_id, rate_name))
    for (room_id, rate_name, night), offer in sorted(best.items()):
        rows["offers"].append((config_ids[(room_id, rate_name)], night, *offer))
