"""Benchmark the latency of the 18 COMPASS tools on the full database.

Builds (or reuses) the database, harvests real package IDs, permit templates, hotels and airports
through the tools themselves, then times ``ToolRegistry.call`` with ``time.perf_counter`` on a
realistic mix of calls per tool (parks by name, alias, gateway town and typo; stays of 1-7 nights
mostly and some long ones; 1-6 guests; filters; round trips from ten departure hubs to the park
airports; notebook writes, reads, listings and deletes; calculator expressions). Tools are called
round-robin after a warm-up, so every tool sees the same machine state; the first call of each
tool on a fresh context (cold per-episode caches) is reported apart. As a same-run reference
the script times a trivial ``SELECT 1`` on the same connection and reports each tool's median as a
multiple of it.

    python benchmarks/tool_latency.py [--data-dir DIR] [--calls 300] [--warmup 30] [--json]

Prints a markdown table (with ``--json``, a JSON summary first). Exits 1 when any tool misses the
targets: median under 2 ms and p99 under 20 ms.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_MEDIAN_MS = 2.0
TARGET_P99_MS = 20.0
DEPARTURE_AIRPORTS = ["JFK", "ORD", "LAX", "DFW", "IAH", "ATL", "SFO", "SEA", "BOS", "DEN"]
SORT_KEYS = ["price", "review_score", "distance", "review_count", "star_rating"]
AIRLINES = ["UA", "DL", "AA", "AS", "United Airlines", "delta"]
CLASSES = ["economy", "premium_economy", "business"]
REASONS = [
    "cheapest option that fits every requirement",
    "closest to the park with free cancellation, within the nightly budget",
    "direct flights on the requested dates",
]


def _typo(name: str, rng: random.Random) -> str:
    """One realistic typo: a dropped, doubled or swapped letter, or all lower case."""
    i = rng.randrange(1, max(2, len(name) - 1))
    return rng.choice(
        [
            name[:i] + name[i + 1 :],
            name[:i] + name[i] + name[i:],
            name[: i - 1] + name[i : i + 1] + name[i - 1] + name[i + 1 :],
            name.lower(),
        ]
    )


def _date(day: int) -> str:
    return f"2025-08-{day:02d}" if day <= 31 else "2025-09-01"


class Workload:
    """Real names and IDs from the database, and a seeded generator of argument sets per tool."""

    def __init__(self, registry: Any, ctx: Any, seed: int) -> None:
        self.rng = random.Random(seed)
        self.registry, self.ctx = registry, ctx
        parks = list(ctx.parks.values())
        self.park_names = [p["name"] for p in parks]
        self.aliases = [a for p in parks for a in json.loads(p["aliases"])]
        self.towns = [t for p in parks for t in json.loads(p["gateway_towns"])]
        self.park_coords = [(p["lat"], p["lon"]) for p in parks]
        self.park_airports: list[str] = []
        self.permit_pairs: list[tuple[str, dict]] = []
        for park in self.park_names:
            found = self._ok("search_airports", park_name=park)["airports"]
            self.park_airports += [a["airport_code"] for a in found]
            for permit in self._ok("list_permits", park=park)["permits"]:
                self.permit_pairs.append((park, permit))
        self.airport_names = [
            self._ok("get_airport_coordinates", airport_code=c)
            for c in DEPARTURE_AIRPORTS + self.park_airports
        ]
        self.pkg_ids, self.hotel_ids, self.hotel_names = self._harvest_hotels()
        self.flight_ids = self._harvest_flights()
        self.permit_ids = self._harvest_permits()
        self._notebook_step = 0

    def _ok(self, name: str, **args: Any) -> Any:
        result = self.registry.call(name, args, self.ctx)
        if not result.ok:
            raise RuntimeError(f"harvest call {name}({args}) failed: {result.error}")
        return result.content

    def _harvest_hotels(self) -> tuple[list[str], list[int], list[str]]:
        pkgs, ids, names = [], [], []
        for park in self.park_names:
            for _ in range(3):
                start, end = self.stay(max_day=32)
                found = self._ok(
                    "search_hotel",
                    location=park,
                    start_date=_date(start),
                    end_date=_date(end),
                    num_guests=self.rng.randint(1, 6),
                )["results"]
                pkgs += [r["package_id"] for r in found[:5]]
                ids += [r["hotel_id"] for r in found[:2]]
                names += [r["hotel_name"] for r in found[:2]]
        return pkgs, sorted(set(ids)), sorted(set(names))

    def _harvest_flights(self) -> list[str]:
        ids = []
        for _ in range(60):
            found = self._ok("search_flights", **self.flight_search(filters=False))["results"]
            ids += [r["package_id"] for r in found[:3]]
        return ids

    def _harvest_permits(self) -> list[str]:
        ids = []
        for park, permit in self.permit_pairs:
            found = self._ok(
                "search_permit_availability", park=park, template_name=permit["template_name"]
            )["available_dates"]
            ids += [a["package_id"] for a in found[:: max(1, len(found) // 4)]]
        return ids

    # -- argument generators -------------------------------------------------------------------

    def stay(self, max_day: int) -> tuple[int, int]:
        """Mostly 1-7 nights, sometimes 8-20; the end day is at most ``max_day``."""
        nights = self.rng.randint(1, 7) if self.rng.random() < 0.85 else self.rng.randint(8, 20)
        nights = min(nights, max_day - 1)
        start = self.rng.randint(1, max_day - nights)
        return start, start + nights

    def park(self) -> str:
        r = self.rng.random()
        if r < 0.5:
            return self.rng.choice(self.park_names)
        if r < 0.75:
            return self.rng.choice(self.aliases)
        if r < 0.9:
            return self.rng.choice(self.park_names + self.aliases).lower()
        return _typo(self.rng.choice(self.park_names), self.rng)

    def maybe(self, p: float = 0.2) -> bool:
        return self.rng.random() < p

    def search_hotel(self) -> dict:
        start, end = self.stay(max_day=32)
        args: dict[str, Any] = {
            "location": self.rng.choice(self.towns) if self.maybe(0.1) else self.park(),
            "start_date": _date(start),
            "end_date": _date(end),
            "num_guests": self.rng.choices(range(1, 7), weights=[15, 40, 15, 20, 5, 5])[0],
        }
        if self.maybe():
            args["max_price_nightly"] = self.rng.choice([120, 180, 250, 400])
        if self.maybe():
            args["min_review_score"] = self.rng.choice([7, 8, 8.5, 9])
        if self.maybe(0.1):
            args["min_star_rating"] = self.rng.choice([2, 3, 4])
        if self.maybe(0.1):
            args["max_distance_km"] = self.rng.choice([10, 25, 50])
        for flag in ("free_cancellation", "breakfast_included", "has_parking", "is_pet_friendly"):
            if self.maybe(0.1):
                args[flag] = True
        if self.maybe(0.3):
            args["sort_by"] = self.rng.choice(SORT_KEYS)
        if self.maybe(0.1):
            args["page"] = 2
        return args

    def get_hotel_details(self) -> dict:
        r = self.rng.random()
        if r < 0.5:
            return {"hotel_identifier": self.rng.choice(self.hotel_ids)}
        if r < 0.6:
            return {"hotel_identifier": str(self.rng.choice(self.hotel_ids))}
        name = self.rng.choice(self.hotel_names)
        return {"hotel_identifier": _typo(name, self.rng) if r < 0.75 else name}

    def get_room_details(self) -> dict:
        return {"package_id": self.rng.choice(self.pkg_ids)}

    def search_location_name(self) -> dict:
        pool = self.park_names + self.aliases + self.towns + [a["city"] for a in self.airport_names]
        name = self.rng.choice(pool)
        return {"query": _typo(name, self.rng) if self.maybe(0.3) else name}

    def search_airports(self) -> dict:
        return {"park_name": self.park()}

    def flight_search(self, filters: bool = True) -> dict:
        dep, ret = self.stay(max_day=31)
        args: dict[str, Any] = {
            "origin": self.rng.choice(DEPARTURE_AIRPORTS),
            "destination": self.rng.choice(self.park_airports),
            "departure_date": _date(dep),
            "return_date": _date(ret),
        }
        if self.maybe(0.7):
            args["passengers"] = self.rng.randint(1, 6)
        if filters:
            if self.maybe():
                args["max_price"] = self.rng.choice([400, 700, 1000, 1500])
            if self.maybe(0.15):
                args["airline_preference"] = self.rng.choice(AIRLINES)
            if self.maybe(0.3):
                args["booking_class"] = self.rng.choice(CLASSES)
            if self.maybe(0.2):
                args["direct_flights_only"] = True
        return args

    def search_flights(self) -> dict:
        return self.flight_search()

    def get_flight_details(self) -> dict:
        return {"package_id": self.rng.choice(self.flight_ids)}

    def get_airport_coordinates(self) -> dict:
        return {"airport_code": self.rng.choice(DEPARTURE_AIRPORTS + self.park_airports)}

    def list_permits(self) -> dict:
        return {"park": self.park()}

    def search_permit_availability(self) -> dict:
        park, permit = self.rng.choice(self.permit_pairs)
        args: dict[str, Any] = {"park": park, "template_name": permit["template_name"]}
        if self.maybe(0.5):
            start, end = self.stay(max_day=31)
            args["date_range"] = f"{_date(start)} to {_date(end)}"
        if self.maybe(0.5):
            args["party_size"] = self.rng.randint(1, min(6, permit["max_party_size"]))
        if permit["max_duration_days"] > 1 and self.maybe(0.5):
            args["duration_days"] = self.rng.randint(
                permit["min_duration_days"], permit["max_duration_days"]
            )
        return args

    def get_permit_details(self) -> dict:
        return {"package_id": self.rng.choice(self.permit_ids)}

    def notebook(self) -> dict:
        """A write, read, list, delete cycle (the notebook stays a few notes long)."""
        step, self._notebook_step = self._notebook_step % 4, self._notebook_step + 1
        size = len(self.ctx.notebook)
        if step == 0 or size == 0:
            note = f"{self.rng.choice(self.pkg_ids)}: ${self.rng.randint(200, 3000)} total"
            return {"action": "write", "input_data": note}
        if step == 1:
            return {"action": "read", "index": self.rng.randrange(size)}
        if step == 2:
            return {"action": "list_all"}
        return {"action": "delete", "index": size - 1}

    def get_weekday(self) -> dict:
        return {"date_str": _date(self.rng.randint(1, 32))}

    def calculate(self) -> dict:
        a, b, n = self.rng.uniform(80, 450), self.rng.uniform(150, 1200), self.rng.randint(1, 7)
        return {
            "expression": self.rng.choice(
                [
                    f"{a:.2f} * {n}",
                    f"{a:.2f} * {n} + {b:.2f} * {self.rng.randint(1, 6)}",
                    f"({a:.2f} + {b:.2f}) / {n}",
                    f"round({b:.2f} * 1.08, 2)",
                    f"max({a:.2f}, {b:.2f}) - min({a:.2f}, {b:.2f})",
                    f"{self.rng.randint(1000, 5000)} - {a:.2f} * {n} - {b:.2f}",
                ]
            )
        }

    def calculate_distance(self) -> dict:
        points = self.park_coords + [(a["latitude"], a["longitude"]) for a in self.airport_names]
        (lat1, lon1), (lat2, lon2) = self.rng.sample(points, 2)
        return {"lat1": lat1, "lon1": lon1, "lat2": lat2, "lon2": lon2}

    def _recommend(self, key: str, ids: list[str]) -> dict:
        chosen = self.rng.sample(ids, self.rng.choice([1, 1, 2, 3]))
        return {key: chosen, "reasoning": self.rng.choice(REASONS)}

    def recommend_hotel(self) -> dict:
        return self._recommend("package_ids", self.pkg_ids)

    def recommend_flight(self) -> dict:
        return self._recommend("flight_ids", self.flight_ids)

    def recommend_permit(self) -> dict:
        return self._recommend("permit_ids", self.permit_ids)

    def arguments(self, tool: str) -> dict:
        return getattr(self, tool)()


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0-100)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def _first_call_ms(registry: Any, path: Path, tool: str, args: dict) -> float:
    """One call on a fresh context: what the first call of an episode costs (cold caches)."""
    from travelgym.suites.compass.tools import CompassContext

    ctx = CompassContext.from_path(path)
    try:
        start = time.perf_counter()
        registry.call(tool, args, ctx)
        return (time.perf_counter() - start) * 1e3
    finally:
        ctx.close()


def run(data_dir: Path, seed: int, calls: int, warmup: int) -> dict[str, Any]:
    from travelgym.suites.compass.build import ensure_database
    from travelgym.suites.compass.tools import CompassContext, compass_registry

    built = ensure_database(seed=seed, data_dir=data_dir)
    registry = compass_registry()
    ctx = CompassContext.from_path(built.path)
    try:
        workload = Workload(registry, ctx, seed)
        tools = registry.names
        first = {t: _first_call_ms(registry, built.path, t, workload.arguments(t)) for t in tools}
        # Warm-up: every tool, every code path it will take (argument generation is never timed).
        plans = {t: [workload.arguments(t) for _ in range(warmup)] for t in tools}
        for tool in tools:
            for args in plans[tool]:
                registry.call(tool, args, ctx)
        times: dict[str, list[float]] = {t: [] for t in tools}
        ok: dict[str, int] = dict.fromkeys(tools, 0)
        select1: list[float] = []
        conn = ctx.conn
        perf = time.perf_counter
        for _ in range(calls):
            for tool in tools:
                args = workload.arguments(tool)  # the notebook plan depends on its state
                start = perf()
                result = registry.call(tool, args, ctx)
                times[tool].append(perf() - start)
                ok[tool] += result.ok
                start = perf()
                conn.execute("SELECT 1").fetchone()
                select1.append(perf() - start)
    finally:
        ctx.close()
    ref_ms = statistics.median(select1) * 1e3
    rows = []
    for tool in tools:
        ms = [t * 1e3 for t in times[tool]]
        median, p99 = statistics.median(ms), percentile(ms, 99)
        rows.append(
            {
                "tool": tool,
                "calls": len(ms),
                "ok_fraction": round(ok[tool] / len(ms), 3),
                "median_ms": round(median, 4),
                "p99_ms": round(p99, 4),
                "max_ms": round(max(ms), 4),
                "first_call_ms": round(first[tool], 3),
                "median_vs_select1": round(median / ref_ms, 1),
                "within_target": median < TARGET_MEDIAN_MS and p99 < TARGET_P99_MS,
            }
        )
    return {
        "benchmark": "compass_tool_latency",
        "seed": seed,
        "calls_per_tool": calls,
        "warmup_per_tool": warmup,
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
        },
        "targets": {"median_ms": TARGET_MEDIAN_MS, "p99_ms": TARGET_P99_MS},
        "reference_select1": {
            "calls": len(select1),
            "median_ms": round(ref_ms, 5),
            "p99_ms": round(percentile([t * 1e3 for t in select1], 99), 5),
        },
        "tools": rows,
        "all_within_target": all(r["within_target"] for r in rows),
    }


def markdown(summary: dict[str, Any]) -> str:
    ref = summary["reference_select1"]
    lines = [
        "| tool | calls | ok | median (ms) | p99 (ms) | median / `SELECT 1` | target"
        " | first call, fresh context (ms) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | :---: | ---: |",
    ]
    for r in summary["tools"]:
        lines.append(
            f"| {r['tool']} | {r['calls']} | {r['ok_fraction']:.0%} | {r['median_ms']:.3f} |"
            f" {r['p99_ms']:.3f} | {r['median_vs_select1']:.0f}x |"
            f" {'met' if r['within_target'] else '**missed**'} | {r['first_call_ms']:.2f} |"
        )
    lines.append(
        f"| *reference: `SELECT 1`* | {ref['calls']} | | {ref['median_ms']:.4f} |"
        f" {ref['p99_ms']:.4f} | 1x | | |"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, help="database directory (default: a temp dir)")
    parser.add_argument("--seed", type=int, default=0, help="database and workload seed")
    parser.add_argument("--calls", type=int, default=300, help="timed calls per tool (300)")
    parser.add_argument("--warmup", type=int, default=30, help="untimed calls per tool (30)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary first")
    args = parser.parse_args(argv)
    if args.calls < 1 or args.warmup < 0:
        parser.error("--calls must be at least 1 and --warmup at least 0")
    if args.data_dir is not None:
        summary = run(args.data_dir, args.seed, args.calls, args.warmup)
    else:
        with tempfile.TemporaryDirectory(prefix="tg-latency-") as tmp:
            summary = run(Path(tmp), args.seed, args.calls, args.warmup)
    if args.json:
        print(json.dumps(summary, indent=2))
        print()
    print(markdown(summary))
    missed = [r["tool"] for r in summary["tools"] if not r["within_target"]]
    if missed:
        print(f"\nmissed the targets: {', '.join(missed)}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
