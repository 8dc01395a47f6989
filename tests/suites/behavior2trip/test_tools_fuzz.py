"""Property-based fuzzing of the 9 Behavior2Trip tools through ``ToolRegistry.call``.

Hypothesis draws the seed of each batch of argument sets (derandomized, so runs are
reproducible); the batch is built from it by plain ``random`` choices, which is far cheaper than
drawing every value through nested strategies. Every database tool receives at least 10,000 argument sets mixing valid calls (real cities, dates,
routes, POI names and ids, preference dicts harvested from the built database), plausible but
wrong values (misspelled cities, out-of-window dates, unknown preference keys and values),
wrong types, missing required and unknown extra parameters, and whole-argument junk (non-dicts,
malformed JSON). ``Python`` gets a few hundred, because each call that reaches its body starts a
sandboxed interpreter (about 0.2 s). Properties: ``call`` never raises; a failure is a
``tool_name``, ``parameter`` or ``content`` error, never ``internal``; every payload is strict
JSON; and many calls succeed, so the fuzzer really reaches the tool bodies.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from travelgym.suites.behavior2trip import vocab
from travelgym.suites.behavior2trip.schema import DATES
from travelgym.suites.behavior2trip.tools import TripsContext, trips_registry
from travelgym.suites.behavior2trip.tools.pois import (
    ATTRACTION_KEYS,
    ENTERTAINMENT_KEYS,
    HOTEL_KEYS,
    RESTAURANT_KEYS,
)
from travelgym.suites.behavior2trip.tools.transport import FLIGHT_KEYS
from travelgym.toolkit import ToolResult

REGISTRY = trips_registry()
DB_TOOLS = [n for n in REGISTRY.names if n != "Python"]
BATCH = 100  # argument sets per hypothesis example
EXAMPLES = 100  # hypothesis examples per database tool: 10,000 calls
PYTHON_EXAMPLES = 4  # x 75 = 300 calls, about half of which start the sandbox
ALLOWED_CATEGORIES = {"tool_name", "parameter", "content"}
HUGE = "x" * 5_000
PREF_KEYS = {"AccommodationSearch": HOTEL_KEYS, "AttractionSearch": ATTRACTION_KEYS,
             "EntertainmentSearch": ENTERTAINMENT_KEYS, "RestaurantSearch": RESTAURANT_KEYS,
             "FlightSearch": FLIGHT_KEYS}  # fmt: skip

FUZZ_SETTINGS = dict(
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # failures are collected per call, not shrunk
    suppress_health_check=list(HealthCheck),
)

WRONG_TYPES: list[Any] = [
    0, 1, -1, 2**63, 10**30, 10**5000, 0.5, -0.0, 1e308, math.nan, math.inf, True, False, None,
    [], [1, 2], ["Beijing"], [[[]]], {}, {"a": 1}, {"nested": {"deep": [1, {"x": None}]}}, "",
    " ", "\x00", "null", "\ud800", "😀😀", "'; DROP TABLE hotels; --", HUGE,
]  # fmt: skip
JUNK_ARGUMENTS: list[Any] = [
    0, 1.5, math.nan, True, [], [{"city": "Beijing"}], ("a", "b"), b"{}", {1: "int key"},
    {None: 1}, "[]", "null", "42", '"string"', "{", "{'city': 'Beijing'}", '{"city": }',
    "not json", "{" * 3000, '{"x": ' + "1" * 5000 + "}", '{"\\ud800": 1}', '{"x": NaN}', "\x00",
]  # fmt: skip
BAD_DATES = ["2025-12-01", "2025-09-30", "2025-02-30", "2025-10-32", "10/05/2025", "2025-10-5",
             "20251005", "2025-W41-3", " 2025-10-08 ", "2025-10-08T10:00", "tomorrow", "", HUGE]  # fmt: skip
BAD_CITIES = ["Atlantis", "Bejing", "Shang hai x", "Paris", "city", "", "   ", HUGE, "\x00",
              "Beijing\nShanghai", "PEKX", "Xi'an Xi'an"]  # fmt: skip
CODE = ["print(1 + 1)", "import math\nprint(math.pi)", "x = [i * i for i in range(10)]\nprint(x)",
        "print(sum([1275, 70, 275]))", "", "pass"]  # fmt: skip
BAD_CODE = ["1/0", "def f(:", "import socket\nsocket.socket()", "open('/etc/passwd').read()",
            "raise SystemExit(3)", "import os\nos._exit(0)", "print('\\x00')", "x" * 20_001]  # fmt: skip


def _variants(name: str) -> list[str]:
    return [name, name.lower(), name.upper(), f"  {name} ", name.replace("'", "")]


@lru_cache(maxsize=2)
def _harvest(db_path: str) -> dict[str, Any]:
    """Real routes and places (name and id per city) taken from the database."""
    ctx = TripsContext.from_path(db_path)
    try:
        routes = ctx.conn.execute(
            "SELECT DISTINCT dep_city, arr_city FROM flights ORDER BY 1, 2").fetchall()  # fmt: skip
        trains = ctx.conn.execute(
            "SELECT DISTINCT dep_city, arr_city FROM trains ORDER BY 1, 2").fetchall()  # fmt: skip
        places = []
        for city_id, city in ctx.conn.execute("SELECT city_id, name FROM cities ORDER BY rowid"):
            for table, id_col in (("hotels", "hotel_id"), ("attractions", "attraction_id"),
                                  ("restaurants", "restaurant_id")):  # fmt: skip
                for pid, name in ctx.conn.execute(
                    f"SELECT {id_col}, name FROM {table} WHERE city_id = ? LIMIT 3", (city_id,)
                ):
                    places += [(city, pid), (city, name), (city, name.lower())]
            places.append((city, city))
    finally:
        ctx.close()
    return {"routes": [tuple(r) for r in routes], "trains": [tuple(r) for r in trains],
            "places": places}  # fmt: skip


def _preferences(rnd: random.Random, keys: dict[str, tuple[str, ...]], good: bool) -> Any:
    """A random preferences argument for ``keys``: valid (``good``) or not."""
    if good:
        if rnd.random() < 0.2:
            return rnd.choice([None, {}])
        out: dict[str, Any] = {}
        for key, values in keys.items():
            if rnd.random() < 0.6:
                form = rnd.randrange(3)
                value = rnd.choice(values)
                out[key] = (
                    value
                    if form == 0
                    else value.lower()
                    if form == 1
                    else rnd.sample(values, rnd.randint(0, min(3, len(values))))
                )
        return out
    key, values = rnd.choice(list(keys.items()))
    return rnd.choice([
        {rnd.choice(["stars", "Star Rating Requirement", "price", "", "walk", "cuisines"]):
         rnd.choice(values)},
        {key: rnd.choice(["Martian", "5", "", HUGE, "Five-Star/Luxury", "Hot-Pot!"])},
        {key: rnd.choice(WRONG_TYPES)},
        {key: [rnd.choice(values), rnd.choice(WRONG_TYPES)]},
        rnd.choice(WRONG_TYPES),
    ])  # fmt: skip


def _text(rnd: random.Random) -> str:
    alphabet = "abcXYZ 0123'-_/\\n\x00é漢😀\ud800"
    return "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(13)))


def _junk(rnd: random.Random) -> Any:
    return rnd.choice([rnd.choice(WRONG_TYPES), _text(rnd), rnd.randint(-(2**70), 2**70),
                       rnd.uniform(-1e9, 1e9)])  # fmt: skip


@lru_cache(maxsize=16)
def _params(tool_name: str) -> tuple[list[str], set[str]]:
    schema = REGISTRY[tool_name].json_schema()
    return list(schema["properties"]), set(schema.get("required", []))


@lru_cache(maxsize=16)
def _pools(tool_name: str, db_path: str) -> dict[str, tuple[list[Any], list[Any]]]:
    """(good, bad) values per parameter of ``tool_name``."""
    h = _harvest(db_path)
    cities = [v for c in vocab.CITIES for v in _variants(c)] + ["XIY", "BJS", "西安", "Peking"]
    pools = {
        "city": (cities, BAD_CITIES),
        "origin": (cities, BAD_CITIES),
        "destination": (cities, BAD_CITIES),
        "origin_cityName": (cities, BAD_CITIES),
        "destination_cityName": (cities, BAD_CITIES),
        "departure_date": (list(DATES), BAD_DATES),
        "date": ([None, *DATES], BAD_DATES),
        "n": ([1, 2, 3, 5, 5, 10, 20, 50], [0, -1, 51, 10**9, 2.5, "5", None]),
        "code": (CODE, BAD_CODE),
    }
    if tool_name == "MapGuide":
        names = [p for _, p in h["places"]]
        bad = ["Nowhere Plaza", "", HUGE, "H99999", "A0", "The Forbidden", "Hotel"]
        pools["origin"] = pools["destination"] = (names, bad)
    return pools


def _argument_set(rnd: random.Random, tool_name: str, db_path: str) -> Any:
    """One random argument set: junk, valid, plausible, JSON text or mutated."""
    h, pools = _harvest(db_path), _pools(tool_name, db_path)
    props, required = _params(tool_name)

    def value(p: str, good: bool) -> Any:
        if p == "preferences":
            return _preferences(rnd, PREF_KEYS[tool_name], good)
        return rnd.choice(pools[p][0] if good or not pools[p][1] else pools[p][1])

    def pick(any_value: bool, p_optional: float) -> dict[str, Any]:
        def one(p: str) -> Any:
            if not any_value:
                return value(p, True)
            x = rnd.randrange(6)
            return value(p, x < 3) if x < 4 else _junk(rnd)

        args = {p: one(p) for p in props if p in required}
        args |= {p: one(p) for p in props if p not in required and rnd.random() < p_optional}
        return args

    mode = rnd.randrange(100)
    if mode < 8:
        return rnd.choice([rnd.choice(JUNK_ARGUMENTS), _text(rnd)])
    if mode < 50:
        args = pick(False, 0.5)
        if rnd.random() < 0.7:  # related good values agree: a real route, a place of the city
            if tool_name == "FlightSearch":
                args["origin"], args["destination"] = rnd.choice(h["routes"])
            elif tool_name == "TrainSearch":
                args["origin"], args["destination"] = rnd.choice(h["trains"])
            elif tool_name == "MapGuide":
                args["origin_cityName"], args["origin"] = rnd.choice(h["places"])
                args["destination_cityName"], args["destination"] = rnd.choice(h["places"])
        return args
    if mode < 75:
        return pick(True, 0.5)
    if mode < 85:
        try:
            return json.dumps(pick(rnd.random() < 0.5, 0.4))
        except ValueError:  # a >4300-digit integer
            return "{}"
    args = pick(False, 0.3)  # mutated: drop, add, retype or rename parameters
    for _ in range(rnd.randint(1, 3)):
        op = rnd.choice(["drop", "extra", "retype", "rename", "null"])
        keys = sorted(args)
        if op == "extra" or not keys:
            args[rnd.choice(["foo", "City", "ctx", "page", "", "prefs"])] = _junk(rnd)
            continue
        key = rnd.choice(keys)
        if op == "drop":
            del args[key]
        elif op == "retype":
            args[key] = rnd.choice(WRONG_TYPES)
        elif op == "rename":
            args[key.upper() if rnd.random() < 0.5 else key + "_"] = args.pop(key)
        else:
            args[key] = None
    return args


def _show(value: Any) -> str:
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        text = f"<unprintable {type(value).__name__}>"
    return text if len(text) < 300 else text[:297] + "..."


def _problem(result: Any, tool_name: str) -> tuple[str, str | None]:
    if not isinstance(result, ToolResult) or result.tool != tool_name:
        return "bad", f"not a ToolResult for {tool_name}: {_show(result)}"
    try:
        json.dumps(result.payload(), allow_nan=False)
    except (TypeError, ValueError) as exc:
        return "bad", f"payload is not strict JSON: {type(exc).__name__}: {exc}"
    if result.ok:
        return "ok", None
    category = result.error.category.value
    if category not in ALLOWED_CATEGORIES:
        return category, f"{category} error: {result.error.message}"
    return category, None if result.error.message else "error without a message"


def _fuzz(tool_name: str, db_path, examples: int, batch: int = BATCH, workers: int = 1):
    ctx = TripsContext.from_path(db_path)
    outcomes: Counter[str] = Counter()
    failures: dict[str, tuple[str, Any]] = {}

    def run(args: Any) -> tuple[Any, str, str | None]:
        try:
            result = REGISTRY.call(tool_name, args, ctx)
        except Exception as exc:  # noqa: BLE001 - the property under test
            return args, "raised", f"call raised {type(exc).__name__}: {exc}"
        return args, *_problem(result, tool_name)

    @settings(max_examples=examples, **FUZZ_SETTINGS)
    @given(seed=st.integers(0, 2**64 - 1))
    def fuzz(seed: int) -> None:
        rnd = random.Random(seed)
        batch_args = [_argument_set(rnd, tool_name, str(db_path)) for _ in range(batch)]
        if workers > 1:  # the sandbox's process start dominates: overlap a few
            with ThreadPoolExecutor(workers) as pool:
                done = list(pool.map(run, batch_args))
        else:
            done = [run(args) for args in batch_args]
        for args, label, problem in done:
            outcomes[label] += 1
            if problem is not None:
                key = re.sub(r"'[^']*'|\d+", "_", problem)[:90]
                if key not in failures or len(_show(args)) < len(_show(failures[key][1])):
                    failures[key] = (problem, args)

    try:
        fuzz()
    finally:
        ctx.close()
    if failures:
        report = [f"{len(failures)} distinct failure(s):"]
        report += [f"- {p[:300]}\n    arguments: {_show(a)}" for p, a in failures.values()]
        pytest.fail("\n".join(report), pytrace=False)
    return outcomes


@pytest.mark.slow
@pytest.mark.parametrize("tool_name", DB_TOOLS)
def test_fuzz_tool_never_fails_internally(tool_name, trips_db):
    outcomes = _fuzz(tool_name, trips_db, EXAMPLES)
    assert sum(outcomes.values()) >= 10_000, dict(outcomes)
    assert outcomes["ok"] >= 1_000 and outcomes["parameter"] > 0, dict(outcomes)
    assert outcomes["content"] > 0, dict(outcomes)


def test_fuzz_python_never_fails_internally(trips_db):
    outcomes = _fuzz("Python", trips_db, PYTHON_EXAMPLES, batch=75, workers=4)
    assert sum(outcomes.values()) >= 300 and outcomes["ok"] >= 30, dict(outcomes)
