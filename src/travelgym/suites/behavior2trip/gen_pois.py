"""Generate one city's hotels, restaurants, attractions and entertainment venues.

Coverage is built in: the first POIs of each city take every value of each categorical vocabulary
in turn (star levels, cuisines, price levels, dining environments, attraction types, walking
bands, entertainment types), and facilities are repaired so that every facility is present at
some hotels and absent at others. The rest are drawn from city-dependent distributions.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import numpy as np

from travelgym.suites.behavior2trip import catalog as cat
from travelgym.suites.behavior2trip import vocab
from travelgym.suites.behavior2trip.gen_common import city_slug, draws, offset, rng
from travelgym.suites.behavior2trip.gen_poi_specs import (
    ATTRACTION_SPECS,
    CUISINE_HOURS,
    CUISINE_WEIGHTS,
    ENTERTAINMENT_SPECS,
    FACILITY_P,
    HOTEL_BASE_PRICE,
    PRICE_WEIGHTS,
    ROOM_TYPES,
    star_weights,
    walking_level,
)
from travelgym.suites.behavior2trip.schema import ID_PREFIXES, POI_TABLES, table_columns
from travelgym.suites.behavior2trip.vocab import CITIES

Row = dict[str, Any]


def city_pois(seed: int, table: str, city: str, geo: dict, count: int) -> list[Row]:
    """Generate ``count`` rows of one POI ``table`` for ``city`` (ids not yet assigned)."""
    make = {"hotels": _hotel, "restaurants": _restaurant, "attractions": _attraction,
            "entertainment": _entertainment}[table]  # fmt: skip
    r = draws(rng(seed, table, city))
    place = _Place(r, city, geo)
    rows = [make(r, place, i) for i in range(count)]
    if table == "hotels":
        _repair_facilities(rows)
    if table == "attractions":
        _repair_walking(r, rows)
    if table != "attractions":  # Table 6 gives attractions no rating rank
        _rank(rows, "secondary_category")
    return rows


PoiJob = tuple[int, str, str, dict, int, int]


def poi_jobs(seed: int, geo: dict, counts: dict[str, dict[str, int]]) -> list[PoiJob]:
    """One job per POI table and city, in hash order (table by table, each city in turn; ids
    run on across cities), for :func:`poi_values`."""
    jobs = []
    for table in POI_TABLES:
        start = 0
        for city in CITIES:
            jobs.append((seed, table, city, geo, counts[table][city], start))
            start += counts[table][city]
    return jobs


def poi_values(seed: int, table: str, city: str, geo: dict, count: int, start: int) -> list[tuple]:
    """The rows of one job of :func:`poi_jobs` as tuples in the table's column order, ids
    numbered from ``start + 1``."""
    cols = table_columns(table)
    prefix = ID_PREFIXES[table]
    return [
        (f"{prefix}{k:05d}", *(row[c] for c in cols[1:]))
        for k, row in enumerate(city_pois(seed, table, city, geo, count), start=start + 1)
    ]


class _Place:
    """Location, address, phone and unique-name helpers for one city and table."""

    def __init__(self, r: np.random.Generator, city: str, geo: dict) -> None:
        self.r, self.city, self.info = r, city, cat.CITY_INFO[city]
        self.districts = geo["districts"][city]
        self.used: set[str] = set()

    def common(self, name: str) -> Row:
        r = self.r
        d = int(r.integers(len(self.districts)))
        district, dlat, dlon = self.districts[d]
        lat, lon = offset(dlat, dlon, float(abs(r.normal(0, 2.0))), float(r.uniform(0, 6.2832)))
        suffix = "" if district.endswith(("County", "Area", "Park", "District")) else " District"
        road = cat.ROADS[int(r.integers(len(cat.ROADS)))]
        code = self.info.area_code
        return {
            "city_id": city_slug(self.city),
            "name": name,
            "details": "",
            "address": f"No. {int(r.integers(1, 400))} {road}, {district}{suffix}, {self.city}",
            "phone": f"{code}-{int(r.integers(10_000_000, 100_000_000))}",
            "province": self.info.province,
            "city": self.city,
            "district": district,
            "lon": lon,
            "lat": lat,
        }

    def unique(self, candidates: list[str]) -> str:
        """The first unused candidate, else the first with a numbered branch."""
        for name in candidates:
            if name not in self.used:
                self.used.add(name)
                return name
        k = 2
        while f"{candidates[0]} No. {k}" in self.used:
            k += 1
        self.used.add(name := f"{candidates[0]} No. {k}")
        return name

    def branch_names(self, brand: str, n: int = 4) -> list[str]:
        r = self.r
        out = []
        for _ in range(n):
            district = self.districts[int(r.integers(len(self.districts)))][0]
            where = [district, cat.LANDMARKS[int(r.integers(len(cat.LANDMARKS)))],
                     cat.ROADS[int(r.integers(len(cat.ROADS)))]][int(r.integers(3))]  # fmt: skip
            out.append(f"{brand} ({self.city} {where})")
        return out


def _pick(r: np.random.Generator, options, p=None):
    """``options[r.choice(len(options), p=p)]`` drawing the same numbers, without ``choice``'s
    per-call checks: ``integers`` without ``p``, one uniform against the normalised cdf with."""
    if p is None:
        return options[int(r.integers(len(options)))]
    return options[int(_cdf(tuple(p)).searchsorted(r.random(), side="right"))]


@lru_cache(maxsize=4096)
def _cdf(p: tuple[float, ...]) -> np.ndarray:
    cdf = np.asarray(p, dtype=np.float64).cumsum()
    cdf /= cdf[-1]
    return cdf


def _rating(r: np.random.Generator, mean: float) -> float:
    return round(min(max(float(r.normal(mean, 0.3)), 2.5), 5.0), 1)


def _reviews(r: np.random.Generator, rating: float) -> tuple[int, str]:
    pool = (
        cat.REVIEW_GOOD if rating >= 4.5 else cat.REVIEW_MIXED if rating >= 3.8 else cat.REVIEW_BAD
    )
    picks = r.choice(len(pool), size=min(3, len(pool)), replace=False)
    return int(r.lognormal(6.0, 1.1)) + 3, json.dumps([pool[int(i)] for i in picks])


def _hotel(r: np.random.Generator, place: _Place, i: int) -> Row:
    levels = vocab.STAR_LEVELS
    level = levels[i] if i < len(levels) else _pick(r, levels, star_weights(place.city))
    if level == "City Homestay":
        word, noun = _pick(r, cat.HOMESTAY_WORDS), _pick(r, cat.HOMESTAY_NOUNS)
        name = place.unique([f"{word} {noun}", f"{place.city} {word} {noun}",
                             f"{word} {noun} ({place.districts[0][0]})"])  # fmt: skip
    else:
        name = place.unique(place.branch_names(_pick(r, cat.HOTEL_BRANDS[level])))
    row = place.common(name)
    style = _pick(r, cat.HOTEL_STYLES[level])
    price = round(HOTEL_BASE_PRICE[level] * place.info.price_index * float(r.lognormal(0, 0.25)))
    facilities = [f for f in vocab.FACILITIES if r.random() < FACILITY_P[f][level]]
    rating = _rating(r, {"2-Star & Below/Economy": 4.2, "3-Star/Comfort": 4.4,
                         "4-Star/Upscale": 4.6, "5-Star/Luxury": 4.75}.get(level, 4.55))  # fmt: skip
    count, reviews = _reviews(r, rating)
    homestay = level == "City Homestay"
    row.update(
        details=f"{name} is a {style.lower()} {level.split('/')[-1].lower()} property in "
        f"{row['district']}, {place.city}.",
        primary_category="Hotel",
        secondary_category=level,
        tertiary_category=style,
        business_hours="Front desk open 24 hours" if not homestay else "Reception 08:00-22:00",
        check_in_time="15:00" if homestay else "14:00",
        check_out_time="11:00" if homestay else "12:00",
        facilities=facilities,
        avg_price=float(price),
        avg_rating=rating,
        review_count=count,
        reviews=reviews,
    )
    rooms = r.choice(len(ROOM_TYPES), size=int(r.integers(2, 5)), replace=False)
    row["_rooms"] = [(ROOM_TYPES[int(k)], 1.0 if j == 0 else float(r.uniform(1.2, 2.6)))
                     for j, k in enumerate(sorted(rooms))]  # fmt: skip
    return row


def _finish_hotel(row: Row) -> None:
    """Derive the facility flags, parking text and rooms from the (repaired) facility list."""
    facilities = row["facilities"]
    row["has_parking"] = int("Parking" in facilities)
    row["has_wifi"] = int("Free WiFi" in facilities)
    row["parking_info"] = "Parking available on site" if row["has_parking"] else "No parking"
    row["room_info"] = json.dumps([
        {"room_type": t, "bed": bed, "max_occupancy": occ, "area_sqm": area,
         "price": round(row["avg_price"] * mult), "breakfast": mult > 1.5,
         "private_bathroom": "Private Bathroom" in facilities}
        for (t, bed, occ, area), mult in row.pop("_rooms")
    ])  # fmt: skip
    row["facilities"] = json.dumps(facilities)


def _repair_facilities(rows: list[Row]) -> None:
    """Make every facility present at some hotel and absent at another, then finish rows."""
    for f in vocab.FACILITIES:
        have = [row for row in rows if f in row["facilities"]]
        if not have:
            rows[-1]["facilities"] = [
                x for x in vocab.FACILITIES if x in {*rows[-1]["facilities"], f}
            ]
        elif len(have) == len(rows):
            cheapest = min(rows, key=lambda row: (row["avg_price"], row["name"]))
            cheapest["facilities"].remove(f)
    for row in rows:
        _finish_hotel(row)


def _serves_lunch_and_dinner(open_t: str, close_t: str) -> bool:
    """Open by 11:00 and until after 21:00 (a close before the opening is after midnight)."""
    return open_t <= "11:00" and (close_t > "21:00" or close_t < open_t)


# Every (price level, dining environment) of a city has this many restaurants serving lunch and
# dinner, so that a user stating both can eat every lunch and dinner of the longest trip (8
# days) at distinct ones. Without it the small database had about 6 per pair and most trips of
# such users could not be planned at all (the checks ask for all of them).
MAIN_MEAL_COVER = 16
MAIN_MEAL_CUISINES = frozenset(
    c for c in vocab.CUISINES if _serves_lunch_and_dinner(*CUISINE_HOURS.get(c, ("10:30", "21:30")))
)


@lru_cache(maxsize=128)
def _cuisine_p(city: str, main_meal: bool) -> tuple[float, ...]:
    """The cuisine probabilities of a city's restaurants (only main-meal cuisines or all)."""
    weights = np.array([CUISINE_WEIGHTS.get((city, c), 1.0) for c in vocab.CUISINES])
    if main_meal:
        weights = weights * np.array([c in MAIN_MEAL_CUISINES for c in vocab.CUISINES])
    return tuple((weights / weights.sum()).tolist())


def _restaurant(r: np.random.Generator, place: _Place, i: int) -> Row:
    n_c, n_p = len(vocab.CUISINES), len(vocab.PRICE_LEVELS)
    envs = vocab.DINING_ENVIRONMENTS
    k = i - n_c - n_p - len(envs)  # the main-meal coverage block, below
    cover = 0 <= k < MAIN_MEAL_COVER * n_p * len(envs)
    if i < n_c:
        cuisine = vocab.CUISINES[i]
    else:
        cuisine = _pick(r, vocab.CUISINES, _cuisine_p(place.city, cover))
    brands, subs = cat.RESTAURANT_BRANDS[cuisine]
    name = place.unique(place.branch_names(_pick(r, brands)))
    row = place.common(name)
    if n_c <= i < n_c + n_p:
        level = vocab.PRICE_LEVELS[i - n_c]
    elif cover:
        level = vocab.PRICE_LEVELS[(k // len(envs)) % n_p]
    else:
        level = _pick(r, vocab.PRICE_LEVELS, PRICE_WEIGHTS.get(cuisine, (0.3, 0.4, 0.22, 0.08)))
    lo, hi = vocab.PRICE_RANGES[level]
    price = int(r.integers(lo, hi + (level == vocab.PRICE_LEVELS[-1])))
    j = i - n_c - n_p
    if cover:
        env = envs[k % len(envs)]
    elif 0 <= j < len(envs):
        env = envs[j]
    else:
        env = _pick(r, envs)
    open_t, close_t = CUISINE_HOURS.get(cuisine, ("10:30", "21:30"))
    rating = _rating(r, 4.4)
    count, reviews = _reviews(r, rating)
    row.update(
        details=f"{name} serves {cuisine.lower()} in a {env.lower()} setting.",
        **_venue(r, "Food & Beverage", cuisine, subs, (open_t, close_t)),
        parking_info=_pick(
            r, ("Parking available nearby", "No parking", "Free parking for diners")
        ),
        avg_price=float(price),
        price_level=level,
        dining_environment=env,
        avg_rating=rating,
        review_count=count,
        reviews=reviews,
    )
    return row


def _attraction(r: np.random.Generator, place: _Place, i: int) -> Row:
    famous = place.info.famous
    types = vocab.ATTRACTION_TYPES
    if i < len(famous):
        name, kind = famous[i]
        place.used.add(name)
    else:
        covered = {t for _, t in famous}
        missing = [t for t in types if t not in covered]
        k = i - len(famous)
        kind = missing[k] if k < len(missing) else _pick(r, types)
        pattern = _pick(r, ATTRACTION_SPECS[kind].patterns)
        name = place.unique([pattern.format(w=_pick(r, cat.PLACE_WORDS), c=place.city)
                             for _ in range(6)])  # fmt: skip
    spec = ATTRACTION_SPECS[kind]
    row = place.common(name)
    walking = round(float(r.uniform(*spec.walking_km)), 1)
    free = r.random() < spec.free_share
    price = 0.0 if free else float(round(r.uniform(*spec.price) / 5) * 5)
    lo, hi = spec.duration
    rating = _rating(r, 4.7 if i < len(famous) else 4.4)
    count, reviews = _reviews(r, rating)
    season = (
        spec.season if not (kind == "Water Activities" and place.city == "Sanya") else "All year"
    )
    tags = ["Landmark"] if i < len(famous) else []
    tags += ["Free Entry"] if free else []
    tags += [spec.tag]
    row.update(
        details=f"{name} is a {kind.lower()} in {row['district']}, {place.city}.",
        category_name="Sightseeing",
        attraction_type=kind,
        custom_type=", ".join(tags),
        opening_hours="Open 24 hours" if spec.hours == ("00:00", "24:00") else "-".join(spec.hours),
        open_time=spec.hours[0],
        close_time=spec.hours[1],
        best_season=season,
        recommended_duration=f"{lo}-{hi} hours",
        duration_hours=(lo + hi) / 2,
        walking_km=walking,
        walking_level=walking_level(walking),
        avg_price=price,
        ticket_info="Free admission"
        if free
        else f"Adult ticket CNY {price:.0f}; children half price",
        avg_rating=rating,
        review_count=count * (5 if i < len(famous) else 1),
        reviews=reviews,
        is_landmark=int(i < len(famous)),
    )
    return row


def _repair_walking(r: np.random.Generator, rows: list[Row]) -> None:
    """Make every walking band occur in the city (moving generic attractions into it)."""
    bands = {"Low (1-3km)": (1.0, 2.9), "Medium (3-5km)": (3.0, 4.9), "High (5km+)": (5.0, 9.0)}
    for k, (band, (lo, hi)) in enumerate(bands.items()):
        if not any(row["walking_level"] == band for row in rows):
            row = [x for x in rows if not x["is_landmark"]][k]
            row["walking_km"] = round(float(r.uniform(lo, hi)), 1)
            row["walking_level"] = band


def _entertainment(r: np.random.Generator, place: _Place, i: int) -> Row:
    types = vocab.ENTERTAINMENT_TYPES
    kind = types[i] if i < len(types) else _pick(r, types)
    spec = ENTERTAINMENT_SPECS[kind]
    brands, subs = cat.ENTERTAINMENT_BRANDS[kind]
    name = place.unique(place.branch_names(_pick(r, brands)))
    row = place.common(name)
    rating = _rating(r, 4.4)
    count, _ = _reviews(r, rating)
    row.update(
        details=f"{name}: {kind.lower()} in {row['district']}, {place.city}.",
        **_venue(r, "Entertainment", kind, subs, spec.hours),
        avg_price=float(round(r.uniform(*spec.price) * place.info.price_index)),
        avg_rating=rating,
        review_count=count,
    )
    return row


def _venue(r: np.random.Generator, category: str, kind: str, subs: tuple[str, ...],
           hours: tuple[str, str]) -> Row:  # fmt: skip
    """A restaurant's or entertainment venue's categories (its subcategory drawn from ``subs``)
    and opening hours."""
    open_t, close_t = hours
    return dict(primary_category=category, secondary_category=kind,
                tertiary_category=_pick(r, subs), business_hours=f"{open_t}-{close_t}",
                open_time=open_t, close_time=close_t)  # fmt: skip


def _rank(rows: list[Row], key: str) -> None:
    """rating_rank: 1 = best rated (then most reviewed) within the city and category."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(row[key], []).append(row)
    for group in groups.values():
        group.sort(key=lambda x: (-x["avg_rating"], -x["review_count"], x["name"]))
        for k, row in enumerate(group, start=1):
            row["rating_rank"] = k
