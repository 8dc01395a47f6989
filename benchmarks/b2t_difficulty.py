"""Behavior2Trip difficulty against the paper's Table 3 (issue 36).

On the test split (small scale, default seeds) it reports per difficulty level and overall the
metrics ``travelgym run behavior2trip`` reports (DR, C micro/macro, UPC micro/macro, Final, in
percent; the project's own :func:`~travelgym.suites.behavior2trip.scoring.summarize`) for:

- ``scripted``: the rule-based baseline (preferences inferred from the behaviour, no model);
- ``oracle``: plans from the hidden profile through the tools (never reads the stored witness);
- ``skeleton``: a plan of bare days (day, date, city) of the right number of days built from
  the request alone, which must earn nothing and not count as delivered;
- a model behind an OpenAI-compatible endpoint, only with ``--base-url URL --model NAME``
  (``--agent-kind``: ``b2t`` (default), ``react`` or ``llm``; run by the runner, exactly as
  ``travelgym run behavior2trip --agent KIND:NAME`` runs it),

with the paper's Table 3 rows beside them, the checks the scripted baseline's delivered plans
fail most, then how readable the synthetic behaviour makes the hidden preferences: per level, the share of favourites, bookings and clicks on POIs that match
the preferences (of the actions on POIs an active preference category governs) and how often the
scripted baseline's inference (``agents/infer.py``) recovers each preference attribute exactly.

    python benchmarks/b2t_difficulty.py [--data-dir DIR] [--per-level N] [--json]
    python benchmarks/b2t_difficulty.py --base-url URL --model NAME [--per-level 50]

``--per-level N`` takes the first N instances of each level (default: the whole split, 800 per
level). Episodes of the scripted and oracle agents run through the runner's episode loop
(:func:`~travelgym.suites.behavior2trip.episode.run_trip_episode`) one after another; the
times per agent are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

LEVELS = ("easy", "medium", "hard")
COLUMNS = ("DR", "C_micro", "C_macro", "UPC_micro", "UPC_macro", "final")
HEADERS = ("DR", "C micro", "C macro", "UPC micro", "UPC macro", "Final")
RULE_AGENTS = ("scripted", "oracle", "skeleton")

# The paper's Table 3 ("Performance on Different Methods and Difficulties", percent), as the
# flattened text gives each row: per level DR, C micro/macro, UPC micro/macro, Final, LLM, then
# the Avg. column (the mean of the three levels' Final). Transcribed here per level as
# (DR, C micro, C macro, UPC micro, UPC macro, Final); the LLM column is left out. E.g. GPT-4.1's
# "95.8 33.6/2.2 17.7/17.7 2.2 36.4 | 95.0 33.4/3.0 28.4/7.0 7.0 31.2 | 97.8 33.5/3.1 22.2/0.5
# 0.5 28.2 | 3.2". The flattened rows run "Qwen3-8B SFT", "Qwen3-14B", "Qwen3-8B", "Qwen3-14B
# B2T-Agent": the third and fourth rows are the B2T-Agent's.
PAPER_TABLE3: dict[str, dict[str, tuple[float, ...]]] = {
    "GPT-4.1 ReAct": {
        "easy": (95.8, 33.6, 2.2, 17.7, 17.7, 2.2),
        "medium": (95.0, 33.4, 3.0, 28.4, 7.0, 7.0),
        "hard": (97.8, 33.5, 3.1, 22.2, 0.5, 0.5),
    },
    "DeepSeek-V3 ReAct": {
        "easy": (94.3, 34.7, 3.3, 20.1, 20.1, 3.1),
        "medium": (94.9, 33.9, 3.7, 28.4, 4.4, 4.4),
        "hard": (97.0, 34.1, 4.1, 31.8, 0.8, 0.5),
    },
    "B2T-Agent Qwen3-8B": {
        "easy": (100.0, 56.8, 5.2, 25.0, 25.0, 4.7),
        "medium": (96.3, 57.3, 5.2, 37.2, 10.3, 5.2),
        "hard": (93.3, 53.3, 5.1, 36.9, 4.3, 4.3),
    },
    "B2T-Agent Qwen3-14B": {
        "easy": (98.9, 59.8, 7.3, 27.9, 27.9, 7.3),
        "medium": (99.0, 59.3, 6.2, 40.3, 13.5, 6.2),
        "hard": (97.4, 59.4, 6.1, 41.2, 5.0, 5.0),
    },
}
PAPER_AVG_FINAL = {"GPT-4.1 ReAct": 3.2, "DeepSeek-V3 ReAct": 2.7, "B2T-Agent Qwen3-8B": 4.7,
                   "B2T-Agent Qwen3-14B": 6.2}  # fmt: skip
ACTIONS = ("add_to_favorites", "book", "click")


# --- the agents ---------------------------------------------------------------------------------


def skeleton_answer(instruction: Any) -> str:
    """A plan of bare days from the request alone (no POI, no leg): day, date and city (the
    outbound and return days as ``FROM -> TO``), one day per day of the trip."""
    start = dt.date.fromisoformat(instruction.start_date)
    home, there, n = instruction.departure_city, instruction.destination_city, instruction.days
    days = []
    for i in range(n):
        city = there
        if i == 0:
            city = f"{home} -> {there}"
        elif i == n - 1:
            city = f"{there} -> {home}"
        days.append({"day": i + 1, "date": (start + dt.timedelta(days=i)).isoformat(),
                     "city": city})  # fmt: skip
    return f"<answer>{json.dumps(days, ensure_ascii=False)}</answer>"


def _figures(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{level: aggregate}`` (``all`` overall) of a :func:`summarize` result."""
    return {**summary["by_difficulty"], "all": summary["overall"]}


def run_rule_agent(name: str, instances: Sequence[Any], conn: Any, pdb: Any) -> dict[str, Any]:
    """One rule agent over ``instances``: its figures by level, the instances it failed
    (Final) and its wall time."""
    from travelgym.suites.behavior2trip.scoring import score_result, summarize

    start = time.perf_counter()
    if name == "skeleton":
        results = [score_result(x, skeleton_answer(x.instruction), pdb) for x in instances]
        scores = [r.model_dump(mode="json") for r in results]
    else:
        from travelgym.suites.behavior2trip.episode import run_trip_episode

        if name == "scripted":
            from travelgym.suites.behavior2trip.agents.scripted import ScriptedTripAgent as cls
        else:
            from travelgym.suites.behavior2trip.agents.oracle import OracleTripAgent as cls

        async def play() -> list[dict[str, Any]]:
            out = []
            for x in instances:
                episode = await run_trip_episode(x, cls(), conn, score_db=pdb)
                out.append(episode.score or {"instance_id": x.instance_id,
                                             "difficulty": x.difficulty, "delivered": False})  # fmt: skip
            return out

        scores = asyncio.run(play())
    summary = summarize(scores)
    failed = [r["instance_id"] for r in summary["instances"] if not r["final"]]
    undelivered = sum(not r["delivered"] for r in summary["instances"])
    return {"figures": _figures(summary), "failed": failed, "undelivered": undelivered,
            "failed_checks": failed_checks(summary["instances"]),
            "seconds": round(time.perf_counter() - start, 1)}  # fmt: skip


def failed_checks(results: Sequence[dict[str, Any]], top: int = 5) -> dict[str, list]:
    """Per level and overall: the ``top`` checks delivered plans fail most, as ``[check id,
    plans failing it, % of the level's delivered plans]`` (undelivered plans fail them all)."""
    out = {}
    for level in (*LEVELS, "all"):
        rows = [r for r in results if r["delivered"] and level in (r["difficulty"], "all")]
        counts = Counter(c["id"] for r in rows for c in r["checks"] if c["passed"] is False)
        out[level] = [[cid, n, _share(n, len(rows))] for cid, n in counts.most_common(top)]
    return out


def run_model(spec: str, ids: list[str], data_dir: Path | None, base_url: str,
              concurrency: int) -> dict[str, Any]:  # fmt: skip
    """A model agent (``KIND:MODEL``) through the runner (``travelgym.evaluate``, i.e. ``travelgym
    run behavior2trip --agent SPEC``) on the instances ``ids``, into a temporary run directory."""
    import travelgym

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="b2t-difficulty-") as out:
        result = travelgym.evaluate("behavior2trip", spec, tasks=ids, out=Path(out) / "run",
                                    data_dir=data_dir, base_url=base_url,
                                    concurrency=concurrency)  # fmt: skip
    summary = result.summary
    return {"figures": _figures(summary), "episodes": result.episodes,
            "seconds": round(time.perf_counter() - start, 1)}  # fmt: skip


# --- how readable the behaviour makes the preferences -------------------------------------------


def _share(hit: int, n: int) -> float | None:
    return round(100.0 * hit / n, 2) if n else None


def action_matching(instances: Sequence[Any], catalog: Any) -> dict[str, dict[str, Any]]:
    """Per level and overall, per action type: of the actions on POIs whose type an active
    preference category governs, how many are on POIs matching the hidden preferences
    (``preferences.poi_matches``); ``governed``: that count of the type's actions."""
    from travelgym.suites.behavior2trip.preferences import POI_TYPE_CATEGORY, poi_matches

    counts = {lv: {a: [0, 0, 0] for a in ACTIONS} for lv in (*LEVELS, "all")}  # all, governed, hit
    for x in instances:
        prefs = x.profile.preferences
        for a in x.trajectory:
            poi = catalog.pois[a.poi_id]
            category = POI_TYPE_CATEGORY.get(poi.poi_type)
            governed = category is not None and getattr(prefs, category) is not None
            for level in (x.difficulty, "all"):
                c = counts[level][a.action_type]
                c[0] += 1
                c[1] += governed
                c[2] += governed and poi_matches(prefs, poi)
    return {level: {a: {"actions": n, "governed": g, "matched_pct": _share(h, g)}
                    for a, (n, g, h) in by_action.items()}
            for level, by_action in counts.items() if by_action["click"][0]}  # fmt: skip


def _covered(hidden: set, inferred: set) -> bool:
    return bool(inferred) and inferred <= hidden


def _walk_ok(hidden: str, inferred: str | None) -> bool:
    from travelgym.suites.behavior2trip.vocab import WALKING_TOLERANCE as order

    return inferred in order and order.index(inferred) <= order.index(hidden)


def _attributes(prefs: Any, got: Any) -> dict[str, tuple[bool, bool]]:
    """attribute -> (exact, safe) for the attributes the profile states (an active category's
    non-empty lists and set values, as its checks apply). ``exact``: the inferred value equals
    the hidden one (sets for lists); ``safe``: whatever the inferred value admits satisfies the
    hidden preference (a non-empty subset of the preferred stars, types or cuisines, a superset
    of the essential facilities, a walking tolerance no higher, the same single value)."""
    out: dict[str, tuple[bool, bool]] = {}
    h, a, d, t = (prefs.hotel_preferences, prefs.attraction_preferences,
                  prefs.dining_requirements, prefs.transportation_preferences)  # fmt: skip
    hotel, sight, meal = got.hotel or {}, got.attraction or {}, got.restaurant or {}

    def same(name: str, hidden: Any, inferred: Any) -> None:
        out[name] = (hidden == inferred, hidden == inferred)

    def sets(name: str, hidden: list, inferred: list, superset: bool = False) -> None:
        hs, got_ = set(hidden), set(inferred)
        out[name] = (hs == got_, hs <= got_ if superset else _covered(hs, got_))

    if h is not None:
        sets("star", h.star_requirement, hotel.get("star_rating", []))
        if h.essential_facilities:
            sets("facilities", h.essential_facilities, hotel.get("amenities", []), superset=True)
    if a is not None:
        sets("attraction types", a.preferred_attraction_types, sight.get("attraction_type", []))
        if a.walking_tolerance is not None:
            walk = (sight.get("walk_tolerance") or [None])[0]
            out["walking"] = (walk == a.walking_tolerance, _walk_ok(a.walking_tolerance, walk))
    if d is not None:
        sets("cuisine", d.cuisine_preferences, meal.get("cuisine", []))
        if d.price_level is not None:
            same("price level", d.price_level, (meal.get("price_level") or [None])[0])
        if d.dining_environment is not None:
            same("environment", d.dining_environment, (meal.get("environment") or [None])[0])
    if t is not None:
        same("intercity mode", t.intercity_transport, got.mode)
        if t.seat_class is not None:
            same("seat", t.seat_class, got.seat)
    return out


ATTRIBUTES = ("star", "facilities", "attraction types", "walking", "cuisine", "price level",
              "environment", "intercity mode", "seat")  # fmt: skip


def inference_recovery(instances: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """Per attribute, per level and overall: of the instances whose profile states it, the share
    where the scripted baseline's inference from the trajectory equals the hidden value
    (``exact_pct``) and where it is safe (``safe_pct``: see :func:`_attributes`)."""
    from travelgym.suites.behavior2trip.agents.infer import infer_preferences

    counts = {name: {lv: [0, 0, 0] for lv in (*LEVELS, "all")} for name in ATTRIBUTES}
    for x in instances:
        got = infer_preferences(x.trajectory)
        for name, (exact, safe) in _attributes(x.profile.preferences, got).items():
            for level in (x.difficulty, "all"):
                c = counts[name][level]
                c[0], c[1], c[2] = c[0] + 1, c[1] + exact, c[2] + safe
    return {name: {lv: {"n": n, "exact_pct": _share(e, n), "safe_pct": _share(s, n)}
                   for lv, (n, e, s) in by_level.items()}
            for name, by_level in counts.items()}  # fmt: skip


# --- the whole measurement ----------------------------------------------------------------------


def measure(instances: Sequence[Any], db_path: str | os.PathLike[str],
            agents: Sequence[str] = RULE_AGENTS) -> dict[str, Any]:  # fmt: skip
    """The figures of the rule agents ``agents`` (of scripted, oracle, skeleton) and the
    readability figures, over ``instances`` (loaded from the split whose database is
    ``db_path``)."""
    from travelgym.db import connect_readonly
    from travelgym.suites.behavior2trip.behaviour_pool import PoiCatalog
    from travelgym.suites.behavior2trip.checks import PlanDB

    conn = connect_readonly(db_path)
    pdb = PlanDB(conn)  # its look-up caches serve every episode, as in a run
    try:
        results = {name: run_rule_agent(name, instances, conn, pdb) for name in agents}
    finally:
        conn.close()
    start = time.perf_counter()
    catalog = PoiCatalog.from_database(db_path)
    readability = {"actions": action_matching(instances, catalog),
                   "inference": inference_recovery(instances),
                   "seconds": round(time.perf_counter() - start, 1)}  # fmt: skip
    return {"n": {lv: sum(x.difficulty == lv for x in instances) for lv in LEVELS},
            "agents": results, "readability": readability,
            "paper": {"table3": {k: {lv: dict(zip(COLUMNS, v, strict=True))
                                     for lv, v in rows.items()} for k, rows in PAPER_TABLE3.items()},
                      "avg_final": PAPER_AVG_FINAL}}  # fmt: skip


def choose(instances: Sequence[Any], per_level: int | None) -> list[Any]:
    """The first ``per_level`` instances of each level (all of them with ``None``)."""
    return [x for lv in LEVELS for x in [y for y in instances if y.difficulty == lv][:per_level]]


# --- the report ---------------------------------------------------------------------------------


def _cell(value: Any) -> str:
    return "–" if value is None else f"{value:.1f}"


def figures_table(result: dict[str, Any]) -> str:
    """Markdown: per level, our agents' figures and the paper's Table 3 rows beside them."""
    head = "| level | agent | n | " + " | ".join(HEADERS) + " |"
    lines = [head, "| --- | --- | ---: |" + " ---: |" * len(HEADERS)]
    for level in (*LEVELS, "all"):
        for name, agent in result["agents"].items():
            agg = agent["figures"].get(level)
            if agg is None:
                continue
            cells = " | ".join(_cell(agg.get(c)) for c in COLUMNS)
            lines.append(f"| {level} | {name} | {agg['n']} | {cells} |")
        for name, rows in PAPER_TABLE3.items():
            if level == "all":
                cells = " | ".join(["–"] * (len(COLUMNS) - 1) + [f"{PAPER_AVG_FINAL[name]:.1f}"])
                lines.append(f"| {level} | paper: {name} (Avg.) | 800×3 | {cells} |")
            else:
                cells = " | ".join(f"{v:.1f}" for v in rows[level])
                lines.append(f"| {level} | paper: {name} | 800 | {cells} |")
    return "\n".join(lines)


def readability_tables(readability: dict[str, Any]) -> str:
    """Markdown: matched shares of favourites, bookings and clicks; inference recovery."""
    names = {"add_to_favorites": "favourites", "book": "bookings", "click": "clicks"}
    lines = ["| level | " + " | ".join(f"{v} on matched POIs % (governed / all)"
                                        for v in names.values()) + " |",
             "| --- |" + " ---: |" * len(names)]  # fmt: skip
    for level, by_action in readability["actions"].items():
        cells = " | ".join(f"{_cell(by_action[a]['matched_pct'])} ({by_action[a]['governed']} / "
                           f"{by_action[a]['actions']})" for a in names)  # fmt: skip
        lines.append(f"| {level} | {cells} |")
    lines += ["", "| attribute | " + " | ".join(f"{lv}: exact / safe % (n)"
                                                for lv in (*LEVELS, "all")) + " |",
              "| --- |" + " ---: |" * (len(LEVELS) + 1)]  # fmt: skip
    for name, by_level in readability["inference"].items():
        cells = " | ".join(f"{_cell(by_level[lv]['exact_pct'])} / {_cell(by_level[lv]['safe_pct'])}"
                           f" ({by_level[lv]['n']})" for lv in (*LEVELS, "all"))  # fmt: skip
        lines.append(f"| {name} | {cells} |")
    return "\n".join(lines)


def report(result: dict[str, Any]) -> str:
    """The whole report as markdown text."""
    out = [figures_table(result), ""]
    oracle = result["agents"].get("oracle")
    if oracle is not None:
        agg = oracle["figures"]["all"]
        missed = ", ".join(oracle["failed"]) or "none"
        out.append(f"Oracle Final over the {agg['n']} instances: {agg['final']:.2f} % "
                   f"(failed: {missed}).")  # fmt: skip
    scripted = result["agents"].get("scripted")
    if scripted is not None:
        out.append("Checks the scripted baseline's delivered plans fail most (% of them): "
                   + "; ".join(f"{lv}: " + ", ".join(f"{cid} {pct:.1f}" for cid, _, pct in rows)
                               for lv, rows in scripted["failed_checks"].items()) + ".")  # fmt: skip
    skeleton = result["agents"].get("skeleton")
    if skeleton is not None:
        out.append(f"Skeleton: {skeleton['undelivered']} of {skeleton['figures']['all']['n']} "
                   f"not delivered, Final {skeleton['figures']['all']['final']:.2f} %.")  # fmt: skip
    out += ["", "Preference readability (of the actions on POIs an active preference category "
            "governs, the share on POIs matching the hidden preferences; then how often the "
            "scripted baseline's inference recovers each stated attribute exactly, and safely: a "
            "choice the inferred value admits satisfies the hidden one):", "",
            readability_tables(result["readability"]), ""]  # fmt: skip
    times = ", ".join(
        f"{name} {agent['seconds']:.1f} s" for name, agent in result["agents"].items()
    )
    out.append(f"Times: {times}; readability {result['readability']['seconds']:.1f} s; "
               f"loading {result.get('load_seconds', 0.0):.1f} s; "
               f"total {result.get('total_seconds', 0.0):.1f} s.")  # fmt: skip
    return "\n".join(out)


def machine() -> dict[str, Any]:
    """Where it ran."""
    return {"python": platform.python_version(), "platform": platform.platform(),
            "cores": os.cpu_count(), "date": dt.date.today().isoformat()}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="data directory with the built database and instances")  # fmt: skip
    parser.add_argument("--per-level", type=int, default=None, metavar="N",
                        help="only the first N instances of each level (default: all 800)")  # fmt: skip
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint of --model")
    parser.add_argument("--model", default=None, help="model name at --base-url")
    parser.add_argument("--agent-kind", default="b2t", choices=("b2t", "react", "llm"),
                        help="the model's agent (default b2t, the B2T-Agent)")  # fmt: skip
    parser.add_argument("--concurrency", type=int, default=8, help="model episodes at once")
    parser.add_argument("--agents", default=",".join(RULE_AGENTS),
                        help="rule agents to run (comma-separated of scripted, oracle, skeleton)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if (args.base_url is None) != (args.model is None):
        parser.error("--base-url and --model go together")
    agents = [a for a in args.agents.split(",") if a]
    if not set(agents) <= set(RULE_AGENTS):
        parser.error(f"--agents: choose among {', '.join(RULE_AGENTS)}")
    from travelgym.suites.behavior2trip.instance_sets import load_split

    start = time.perf_counter()
    db, instances, _ = load_split("test", data_dir=args.data_dir)
    chosen = choose(instances, args.per_level)
    load_s = time.perf_counter() - start
    result = measure(chosen, db.path, agents)
    if args.model is not None:
        spec = f"{args.agent_kind}:{args.model}"
        result["agents"][spec] = run_model(spec, [x.instance_id for x in chosen], args.data_dir,
                                           args.base_url, args.concurrency)  # fmt: skip
    result["load_seconds"] = round(load_s, 1)
    result["total_seconds"] = round(time.perf_counter() - start, 1)
    result["machine"] = machine()
    result["per_level"] = args.per_level
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
