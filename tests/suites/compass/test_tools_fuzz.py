"""Property-based fuzzing of the 18 COMPASS tools through ``ToolRegistry.call``.

Every tool receives at least 10,000 argument sets mixing valid calls (real parks, dates, package
IDs, airports and permit templates harvested from the built database), plausible but wrong values
(misspelled names, impossible dates, malformed IDs, out-of-range numbers), wrong types, missing
required and unknown extra parameters, and whole-argument junk (non-dicts, malformed JSON, JSON
strings). Properties: ``call`` never raises; a failure is a ``tool_name``, ``parameter`` or
``content`` error, never ``internal``; every payload is strict JSON; and some calls of every tool
succeed, so the fuzzer really reaches the tool bodies.

Each hypothesis example draws a batch of argument sets so that 10,000 calls per tool stay fast.
"""

from __future__ import annotations

import json
import math
import random
import re
import string
from collections import Counter
from functools import lru_cache
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from travelgym.suites.compass.tools import CompassContext, compass_registry
from travelgym.toolkit import ToolResult

REGISTRY = compass_registry()
TOOL_NAMES = REGISTRY.names
BATCH = 100  # argument sets per hypothesis example
EXAMPLES = 100  # hypothesis examples per tool
MIN_CALLS = 10_000
MIN_OK = 100  # successful calls required per tool
ALLOWED_CATEGORIES = {"tool_name", "parameter", "content"}

FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # failures are collected per call, not shrunk
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
        HealthCheck.filter_too_much,
    ],
)

HUGE = "x" * 5_000
DEPARTURE_AIRPORTS = ["JFK", "ORD", "LAX", "DFW", "IAH", "ATL", "SFO", "SEA", "BOS", "DEN"]


def _deeply_nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


# Values of the wrong type for any parameter (or of the right type and absurd).
WRONG_TYPES: list[Any] = [
    0,
    1,
    -1,
    7,
    2**31,
    2**63,
    10**30,
    -(10**30),
    10**5000,
    0.5,
    -0.0,
    1e308,
    -1e308,
    5e-324,
    math.nan,
    math.inf,
    -math.inf,
    True,
    False,
    None,
    [],
    [1, 2],
    ["Yosemite"],
    [[[]]],
    {},
    {"a": 1},
    {"nested": {"deep": [1, {"x": None}]}},
    {"$ref": "#"},
    _deeply_nested(200),
    "",
    " ",
    "\x00",
    "null",
    "\ud800",
    "😀😀😀",
    "'; DROP TABLE hotels; --",
    HUGE,
]

# Whole-argument junk: never a dict of parameters.
JUNK_ARGUMENTS: list[Any] = [
    0,
    1.5,
    math.nan,
    True,
    [],
    [1, 2],
    [{"location": "Yosemite"}],
    ("a", "b"),
    b"{}",
    {1: "int key"},
    {None: 1},
    {("tuple", "key"): 1},
    "[]",
    "null",
    "42",
    '"string"',
    "true",
    "{",
    "}",
    "{'location': 'Yosemite'}",
    '{"location": }',
    '{"a": 1,}',
    "not json at all",
    "{" * 3000,
    "[" * 3000 + "]" * 3000,
    '{"x": ' + "1" * 5000 + "}",
    '{"\\ud800": 1}',
    '{"x": NaN}',
    "\x00",
]


def _misspell(name: str) -> list[str]:
    """A few typo variants of a name: dropped, swapped and doubled letters, case changes."""
    if len(name) < 4:
        return [name.lower(), name + name[-1]]
    mid = len(name) // 2
    return [
        name[:mid] + name[mid + 1 :],
        name[: mid - 1] + name[mid] + name[mid - 1] + name[mid + 1 :],
        name[:mid] + name[mid] + name[mid:],
        name.lower(),
        name.upper(),
        f"  {name}  ",
        name.replace(" ", ""),
    ]


def _harvest(db_path) -> dict[str, Any]:
    """Real names, airports, templates and package IDs, taken from the database via the tools."""
    ctx = CompassContext.from_path(db_path)
    try:

        def ok(name: str, **args: Any) -> Any:
            result = REGISTRY.call(name, args, ctx)
            assert result.ok, (name, args, result.error)
            return result.content

        parks = list(ctx.parks.values())
        park_names, towns, aliases = [], [], []
        for park in parks:
            park_names += [park["name"], park["park_id"]]
            aliases += json.loads(park["aliases"])
            towns += json.loads(park["gateway_towns"])
        park_airports, routes, permit_pairs, templates = [], [], [], []
        for park in parks:
            codes = [
                a["airport_code"] for a in ok("search_airports", park_name=park["name"])["airports"]
            ]
            park_airports += codes
            routes += [(dep, code) for dep in DEPARTURE_AIRPORTS for code in codes]
            for permit in ok("list_permits", park=park["name"])["permits"]:
                permit_pairs.append((park["name"], permit["template_name"]))
                templates.append(permit["template_name"])
        hotel_ids, hotel_names, hotel_pkgs = [], [], []
        for park, (start, end) in zip(
            parks[:8], [(1, 3), (5, 8), (10, 11), (20, 27)] * 2, strict=True
        ):
            found = ok(
                "search_hotel",
                location=park["name"],
                start_date=f"2025-08-{start:02d}",
                end_date=f"2025-08-{end:02d}",
                num_guests=2,
            )["results"]
            hotel_pkgs += [r["package_id"] for r in found[:6]]
            hotel_ids += [r["hotel_id"] for r in found[:3]]
            hotel_names += [r["hotel_name"] for r in found[:3]]
        flight_pkgs = []
        for (origin, destination), (dep, ret) in zip(
            routes[:: max(1, len(routes) // 12)], [(4, 8), (10, 12), (1, 31)] * 6, strict=False
        ):
            found = ok(
                "search_flights",
                origin=origin,
                destination=destination,
                departure_date=f"2025-08-{dep:02d}",
                return_date=f"2025-08-{ret:02d}",
            )["results"]
            flight_pkgs += [r["package_id"] for r in found[:4]]
        permit_pkgs = []
        for park, template in permit_pairs[::3]:
            found = ok("search_permit_availability", park=park, template_name=template)
            permit_pkgs += [a["package_id"] for a in found["available_dates"][:3]]
    finally:
        ctx.close()
    assert hotel_pkgs and flight_pkgs and permit_pkgs and permit_pairs
    return {
        "park_names": park_names,
        "aliases": aliases,
        "towns": towns,
        "park_airports": sorted(set(park_airports)),
        "routes": routes,
        "permit_pairs": permit_pairs,
        "templates": templates,
        "hotel_ids": hotel_ids,
        "hotel_names": hotel_names,
        "pkg": hotel_pkgs,
        "flight": flight_pkgs,
        "permit": permit_pkgs,
    }


@lru_cache(maxsize=4)
def _harvest_cached(db_path: str) -> dict[str, Any]:
    return _harvest(db_path)


def _date(day: int) -> str:
    return f"2025-08-{day:02d}" if day <= 31 else "2025-09-01"


GOOD_DATES = [_date(d) for d in range(1, 32)]
BAD_DATES = [
    "2025-09-01",
    "2025-09-15",
    "2025-07-31",
    "2024-08-08",
    "2025-02-30",
    "2025-08-32",
    "2025-13-01",
    "08/05/2025",
    "5 August 2025",
    "2025-8-5",
    "2025/08/05",
    "20250808",
    "2025-W32-5",
    " 2025-08-08 ",
    "2025-08-08T10:00",
    "tomorrow",
    "",
    "0000-00-00",
    "9999-12-31",
    HUGE,
]
STAYS = [(s, s + n) for s in range(1, 32) for n in (1, 2, 3, 4, 5, 6, 7, 10, 14, 30) if s + n <= 32]
ROUND_TRIPS = [(d, r) for d, r in STAYS if r <= 31]
BAD_IDS = [
    "pkg_1_5_3_1",
    "pkg_999999_1_2_1",
    "pkg_999999999_1_2_1",
    "pkg_1_0_3_1",
    "pkg_1_3_33_1",
    "pkg_1_3_5_0",
    "pkg_1_3_5_10",
    "pkg_-1_3_5_1",
    "pkg_1_3_5",
    "pkg_1_3_5_1_9",
    "pkg_1e3_3_5_1",
    "pkg_１_5_8_1",
    "PKG_1_5_8_1",
    "pkg 1 5 8 1",
    "flight_x",
    "flight_1_5_5",
    "flight_1_5",
    "flight_999999_1_2",
    "flight_1_31_32",
    "permit_1_32_1",
    "permit_1_5_0",
    "permit_999999_5_1",
    "permit_1_5_99",
    "hotel_1_2_3",
    "pkg_",
    "_",
    "",
    HUGE,
]
EXPRESSIONS = [
    "100 + 200 * 3",
    "(189.5 + 210.25) * 2",
    "2 ** 10",
    "2^8",
    "1/3",
    "7 // 2",
    "7 % 3",
    "-5 + +3",
    "abs(-4.5)",
    "round(3.14159, 2)",
    "round(12345, -2)",
    "min(3, 1, 2)",
    "max(1.5, 2.5)",
    "sqrt(144)",
    "1,000 + 1",
    "1_000 * 3",
    "3 * (2 + (4 - 1) / 2)",
]
BAD_EXPRESSIONS = [
    "1/0",
    "5 % 0",
    "0 ** -1",
    "sqrt(-1)",
    "(-8) ** 0.5",
    "10 ** 100",
    "9 ** 9 ** 9",
    "1e999",
    "1e999 - 1e999",
    "round(1e999)",
    "1" * 400,
    "1" * 400 + " / 3",
    "import os",
    "__import__('os').system('true')",
    "open('x')",
    "x + 1",
    "[1, 2]",
    "1 if 1 else 2",
    "(1).real",
    "max()",
    "min(*[1])",
    "round(1, ndigits=2)",
    "lambda: 1",
    "1 +",
    "(" * 300 + "1" + ")" * 300,
    "-" * 499 + "1",
    "",
    "   ",
    "a" * 600,
]


def _pools(h: dict[str, Any]) -> dict[str, tuple[list[Any], list[Any]]]:
    """(good, bad) plausible values keyed by parameter name; good values should be served."""
    parks = h["park_names"] + h["aliases"]
    misspelled_parks = [m for name in h["park_names"][::2] + h["aliases"] for m in _misspell(name)]
    bad_parks = misspelled_parks + [
        "Yosemity",
        "Yelowstone",
        "Grand Canyn",
        "Narnia National Park",
        "National Park",
        "Park",
        "",
        "   ",
        HUGE,
        "\x00",
        "Yosemite\nNational Park",
    ]
    airports = DEPARTURE_AIRPORTS + h["park_airports"]
    bad_airports = [a.lower() for a in airports[:5]] + [
        "XXX",
        "ZZZ",
        "JF",
        "JFKX",
        "J F K",
        "Fresno",
        "Los Angeles",
        "123",
        "",
        HUGE,
    ]
    hotels = h["hotel_ids"] + [str(i) for i in h["hotel_ids"]] + h["hotel_names"]
    bad_hotels = [m for name in h["hotel_names"][:6] for m in _misspell(name)] + [
        0,
        -3,
        "0",
        "-3",
        "999999",
        99999999,
        "99999999999999999999",
        "0" * 30 + "17",
        "²",
        "١٢",
        "17.0",
        "Hotel",
        "",
        HUGE,
    ]
    templates = h["templates"]
    bad_templates = [m for t in templates[:6] for m in _misspell(t)] + ["Permit", "", HUGE]
    date_ranges = [f"{_date(a)} to {_date(b)}" for a, b in ROUND_TRIPS[::7]] + GOOD_DATES[::5]
    bad_ranges = BAD_DATES[:8] + [
        "2025-08-10 to 2025-08-01",
        "2025-08-01 to 2025-08-05 to 2025-08-09",
        "2025-08-01,2025-08-05",
        "2025-08-01 / 2025-08-05",
        "2025-08-01 - 2025-08-05",
        "August",
        "",
    ]
    notes = ["Hotel pkg_12_5_8_1 $480", "Flight JFK-FAT", "budget 3000", "ünïcødé ✈", HUGE]
    return {
        "location": (parks + h["towns"], bad_parks),
        "park_name": (parks, bad_parks + h["towns"]),
        "park": (parks, bad_parks),
        "query": (parks + h["towns"] + airports, bad_parks + bad_airports),
        "start_date": (GOOD_DATES, BAD_DATES),
        "end_date": (GOOD_DATES + ["2025-09-01"], BAD_DATES),
        "departure_date": (GOOD_DATES, BAD_DATES),
        "return_date": (GOOD_DATES, BAD_DATES),
        "date_str": (GOOD_DATES + BAD_DATES[:7], BAD_DATES[7:]),
        "date_range": ([None, *date_ranges], bad_ranges),
        "origin": (DEPARTURE_AIRPORTS, bad_airports),
        "destination": (h["park_airports"], bad_airports),
        "airport_code": (airports, bad_airports),
        "hotel_identifier": (hotels, bad_hotels),
        "template_name": (templates, bad_templates),
        "airline_preference": (
            [None, "UA", "DL", "AA", "AS", "United Airlines", "delta air lines", "Alaska"],
            ["ZZ", "Ryanair", "U", "", HUGE],
        ),
        "booking_class": ([None, "economy", "premium_economy", "business"], ["first", "Economy"]),
        "sort_by": (
            ["price", "review_score", "distance", "review_count", "star_rating"],
            ["cheapest", "PRICE", "rating", ""],
        ),
        "action": (
            ["write", "write", "read", "delete", "list_all"],
            ["Write", "erase", "", "list"],
        ),
        "input_data": (notes, [None, ""]),
        "index": ([None, 0, 1, 2, 3, 5], [-1, 10**6, 10**30]),
        "expression": (EXPRESSIONS, BAD_EXPRESSIONS),
        "reasoning": (["cheapest option that fits", "", " ", HUGE], []),
        "num_guests": (list(range(1, 9)), [0, -1, 51, 10**6]),
        "num_rooms": ([None, 1, 2, 3, 4], [0, 10, -2]),
        "passengers": (list(range(1, 7)), [0, 10, -1]),
        "page": ([1, 1, 2, 3], [0, -1, 1001, 10**9]),
        "duration_days": ([None, 1, 2, 3, 4], [0, 15, -1]),
        "party_size": ([None, 1, 2, 4, 6, 12], [0, 51, -3]),
        "min_price_nightly": ([None, 0, 50, 99.5, 150], [-1, -math.inf]),
        "max_price_nightly": ([None, 150, 250.0, 400, 1e6, math.inf], [-5]),
        "max_price": ([None, 300, 650.5, 1200, 5000], [-1]),
        "min_review_score": ([None, 0, 6, 7.5, 8.5, 10], [10.5, -1]),
        "min_star_rating": ([None, 0, 2, 3, 3.5, 4, 5], [5.5, -1]),
        "max_distance_km": ([None, 5, 20.5, 50, 200], [-1]),
        "lat1": ([-90, -33.9, 0, 36.1, 44.6, 90], [90.5, -91, 1e308]),
        "lat2": ([-90, -12.5, 0, 37.7, 61.2, 90], [91, -90.01]),
        "lon1": ([-180, -119.5, -73.8, 0, 180], [181, -180.5]),
        "lon2": ([-180, -110.6, 0, 151.2, 180], [-181, 200]),
    }


def _schema_values(prop: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """(good, bad) values derived from a JSON-schema property (types, bounds, enums)."""
    good, bad = [], []
    for branch in prop.get("anyOf", [prop]):
        kind = branch.get("type")
        if "enum" in branch:
            good += branch["enum"]
            bad += [str(branch["enum"][0]).upper(), "other"]
        elif kind == "integer":
            low = branch.get("minimum", -5)
            high = branch.get("maximum", low + 100)
            good += [low, (low + high) // 2, high]
            bad += [low - 1, high + 1, float(low) + 0.5, str(low), f"{high}.0"]
        elif kind == "number":
            low, high = branch.get("minimum", -1e3), branch.get("maximum", 1e3)
            good += [float(low), (low + high) / 2, float(high), int(low)]
            bad += [low - 0.001, high + 0.001, str(low), math.nan]
        elif kind == "boolean":
            good += [True, False]
            bad += ["yes", "true", 2]
        elif kind == "string":
            good += ["a", "Yosemite"]
            bad += ["", HUGE]
        elif kind == "array":
            good += [["a"]]
            bad += [[], ["a"] * 4, "a"]
        elif kind == "null":
            good.append(None)
    return good, bad


def _id_lists(ids: list[str], other: list[str]) -> tuple[list[Any], list[Any]]:
    good = [[i] for i in ids] + [ids[i : i + 3] for i in range(0, len(ids) - 2, 3)]
    good += [[ids[0], BAD_IDS[0]], [BAD_IDS[1]], [other[0]]]
    bad = [[], ids[:4], [1], [None], ids[0], [[ids[0]]], [ids[0], 5], {"id": ids[0]}]
    return good, bad


PERCENT = st.integers(0, 99)
BOOL = st.booleans()
INDEX = st.integers(0, 1023)
MUTATIONS = st.integers(1, 3)
MUTATION_OPS = st.sampled_from(["drop", "extra", "retype", "random", "rename", "null"])
NATIVE_VALUES = st.one_of(st.text(max_size=20), st.integers(), st.floats())
JUNK_ST = st.one_of(st.sampled_from(JUNK_ARGUMENTS), st.text(max_size=20))


def _spread(values: list[Any], n: int) -> list[Any]:
    """``values`` repeated to at least ``n`` items (weights a pool inside one sampled_from)."""
    return values * max(1, -(-n // max(1, len(values)))) if values else []


def _random_values(seed: str, n: int) -> list[Any]:
    """``n`` seeded random strings (ASCII, Unicode, control characters) and numbers."""
    rng = random.Random(seed)
    alphabet = string.printable + "éßü中文🙂\u200b\x00\x7f"
    out: list[Any] = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            out.append("".join(rng.choices(alphabet, k=rng.randint(0, 16))))
        elif kind == 1:
            out.append(rng.choice([rng.randint(-100, 100), rng.randint(-(2**70), 2**70)]))
        elif kind == 2:
            out.append(rng.choice([rng.uniform(-1e3, 1e3), rng.uniform(-1e300, 1e300)]))
        else:
            out.append(rng.choice(["", " ", "0", "-1", "1.5", "true", "none", "N/A"]))
    return out


@lru_cache(maxsize=64)
def _tool_strategy(tool_name: str, db_path: str) -> st.SearchStrategy:
    """Argument sets for one tool (cached: building strategies is slower than drawing them)."""
    h = _harvest_cached(db_path)
    pools = _pools(h)
    kinds = {
        "get_room_details": "pkg",
        "get_flight_details": "flight",
        "get_permit_details": "permit",
    }
    if tool_name in kinds:
        kind = kinds[tool_name]
        others = [i for k in ("pkg", "flight", "permit") if k != kind for i in h[k][:4]]
        pools["package_id"] = (h[kind], BAD_IDS + others)
    for param, kind in (("package_ids", "pkg"), ("flight_ids", "flight"), ("permit_ids", "permit")):
        others = [i for k in ("pkg", "flight", "permit") if k != kind for i in h[k][:2]]
        pools[param] = _id_lists(h[kind], others)

    schema = REGISTRY[tool_name].json_schema()
    props, required = schema["properties"], set(schema.get("required", []))
    good_st: dict[str, st.SearchStrategy] = {}
    any_st: dict[str, st.SearchStrategy] = {}
    for param, prop in props.items():
        schema_good, schema_bad = _schema_values(prop)
        good, bad = pools.get(param, (schema_good, []))
        good_st[param] = st.sampled_from(good)
        # One draw per value (hypothesis draws dominate the run time): about 1/3 good values,
        # 1/6 bad ones, 1/6 of the wrong type and 1/3 random text and numbers.
        any_st[param] = st.sampled_from(
            _spread(good, 40)
            + _spread(bad + schema_bad + schema_good, 20)
            + _spread(WRONG_TYPES, 20)
            + _random_values(f"{tool_name}.{param}", 40)
        )
    optional = [p for p in props if p not in required]
    extra_names = st.sampled_from(
        [
            "foo",
            "Location",
            "startDate",
            "park_id",
            "",
            " ",
            "ctx",
            "context",
            "kwargs",
            "page_size",
        ]
        + [p + "s" for p in props]
        + [p[:-1] for p in props]
    )

    # Every strategy is built once here: building one inside a draw costs more than the draw.
    stays_st, trips_st = st.sampled_from(STAYS), st.sampled_from(ROUND_TRIPS)
    routes_st, permits_st = st.sampled_from(h["routes"]), st.sampled_from(h["permit_pairs"])
    value_sets_st = st.sampled_from([good_st, any_st])
    extra_values_st = st.sampled_from([*WRONG_TYPES, "Yosemite"])
    wrong_st = st.sampled_from(WRONG_TYPES)

    def couple(args: dict[str, Any], draw) -> None:
        """Make related good values agree (dates in order, template of that park, real route)."""
        if "start_date" in args and "end_date" in args:
            start, end = draw(stays_st)
            args["start_date"], args["end_date"] = _date(start), _date(end)
        if "departure_date" in args and "return_date" in args:
            dep, ret = draw(trips_st)
            args["departure_date"], args["return_date"] = _date(dep), _date(ret)
        if "origin" in args and "destination" in args:
            args["origin"], args["destination"] = draw(routes_st)
        if "park" in args and "template_name" in args:
            args["park"], args["template_name"] = draw(permits_st)

    mask_st = st.integers(0, 2 ** len(optional) - 1)

    def pick(draw, value_st: dict[str, st.SearchStrategy], sparse: bool) -> dict[str, Any]:
        """Every required parameter and a random subset of the optional ones (a quarter of them
        when ``sparse``, else half), chosen with one or two bit masks to keep draws few."""
        args = {p: draw(value_st[p]) for p in props if p in required}
        if not optional:
            return args
        mask = draw(mask_st) & (draw(mask_st) if sparse else -1)
        for bit, p in enumerate(optional):
            if mask >> bit & 1:
                args[p] = draw(value_st[p])
        return args

    @st.composite
    def argument_set(draw) -> Any:
        mode = draw(PERCENT)
        if mode < 8:  # whole-argument junk: non-dicts, malformed JSON, random text
            return draw(JUNK_ST)
        if mode < 45:  # a valid-looking call: good values, related ones coupled
            args = pick(draw, good_st, sparse=True)
            if draw(BOOL):
                couple(args, draw)
            return args
        if mode < 70:  # plausible: each value good, bad, of the wrong type or random
            return pick(draw, any_st, sparse=False)
        if mode < 80:  # the JSON-string form an LLM sends
            args = pick(draw, draw(value_sets_st), sparse=False)
            try:
                return json.dumps(args)
            except ValueError:  # a >4300-digit integer
                return "{}"
        args = pick(draw, good_st, sparse=True)  # mutated: drop, add, retype or rename parameters
        for _ in range(draw(MUTATIONS)):
            op = draw(MUTATION_OPS)
            keys = sorted(args)
            if op == "extra" or not keys:
                args[draw(extra_names)] = draw(extra_values_st)
                continue
            key = keys[draw(INDEX) % len(keys)]
            if op == "drop":
                del args[key]
            elif op == "retype":
                args[key] = draw(wrong_st)
            elif op == "random":  # hypothesis' own text and numbers
                args[key] = draw(NATIVE_VALUES)
            elif op == "rename":
                args[key.upper() if draw(BOOL) else key + "_"] = args.pop(key)
            else:
                args[key] = None
        return args

    return st.lists(argument_set(), min_size=BATCH, max_size=BATCH)


def _show(value: Any) -> str:
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        text = f"<unprintable {type(value).__name__}>"
    return text if len(text) < 300 else text[:297] + "..."


def _problem(result: Any, tool_name: str, args: Any) -> tuple[str, str | None]:
    """The outcome label of one call and what is wrong with it (None when all properties hold)."""
    if not isinstance(result, ToolResult) or result.tool != tool_name:
        return "bad", f"not a ToolResult for {tool_name}: {_show(result)}"
    try:
        json.dumps(result.payload(), allow_nan=False)
    except (TypeError, ValueError) as exc:
        return "bad", f"payload is not strict JSON: {type(exc).__name__}: {exc}"
    if result.ok:
        return "ok", None if result.error is None else "ok result carries an error"
    category = result.error.category.value
    if category not in ALLOWED_CATEGORIES:
        return category, f"{category} error: {result.error.message}"
    if not result.error.message:
        return category, "error without a message"
    if not isinstance(args, (dict, str)) and args is not None and category != "parameter":
        return category, f"non-dict arguments gave a {category} error"
    return category, None


def _signature(problem: str) -> str:
    """Group failures that differ only in numbers or quoted values."""
    return re.sub(r"'[^']*'|\d+", "_", problem)[:90]


def _report(failures: dict[str, tuple[str, Any]]) -> str:
    lines = [f"{len(failures)} distinct failure(s); shortest reproducer of each:"]
    for problem, args in failures.values():
        lines.append(f"- {problem[:300]}\n    arguments: {_show(args)}")
    return "\n".join(lines)


@pytest.mark.slow
@pytest.mark.parametrize("tool_name", TOOL_NAMES)
def test_fuzz_tool_never_fails_internally(tool_name, compass_db):
    strategy = _tool_strategy(tool_name, str(compass_db))
    ctx = CompassContext.from_path(compass_db)  # one context (and notebook) for the whole test
    outcomes: Counter[str] = Counter()
    failures: dict[str, tuple[str, Any]] = {}  # signature -> (problem, shortest arguments)

    @FUZZ_SETTINGS
    @given(batch=strategy)
    def fuzz(batch: list[Any]) -> None:
        for args in batch:
            try:
                result = REGISTRY.call(tool_name, args, ctx)
            except Exception as exc:  # noqa: BLE001 - the property under test
                label, problem = "raised", f"call raised {type(exc).__name__}: {exc}"
            else:
                label, problem = _problem(result, tool_name, args)
            outcomes[label] += 1
            if problem is not None:
                key = _signature(problem)
                if key not in failures or len(_show(args)) < len(_show(failures[key][1])):
                    failures[key] = (problem, args)

    try:
        fuzz()
    finally:
        ctx.close()
    if failures:
        pytest.fail(_report(failures), pytrace=False)
    calls = sum(outcomes.values())
    assert calls >= MIN_CALLS, dict(outcomes)
    assert outcomes["ok"] >= MIN_OK, dict(outcomes)
    assert outcomes["parameter"] > 0, dict(outcomes)


UNKNOWN_NAMES = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        [
            "",
            " ",
            "search_hotels",
            "Search_Hotel",
            "search_hotel ",
            " search_hotel",
            "search-hotel",
            "searchHotel",
            "SEARCH_HOTEL",
            "get_weekday()",
            "functions.search_hotel",
            "calc",
            "\ud800",
            "\x00",
            HUGE,
        ]
    ),
    st.integers(),
    st.floats(),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    st.sampled_from([10**5000, _deeply_nested(50_000), b"search_hotel", ("search_hotel",)]),
)


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(
    name=UNKNOWN_NAMES.filter(lambda n: not (isinstance(n, str) and n in REGISTRY)),
    arguments=st.one_of(
        st.none(), st.sampled_from(JUNK_ARGUMENTS), st.dictionaries(st.text(max_size=8), st.text())
    ),
)
def test_unknown_tool_names_are_tool_name_errors(name, arguments):
    result = REGISTRY.call(name, arguments, None)
    assert not result.ok
    assert result.error.category.value == "tool_name", result.error
    assert isinstance(result.tool, str)
    json.dumps(result.payload(), allow_nan=False)
