"""The Behavior2Trip report's embedded data: episodes as the records the viewer reads (steps
with tool calls, memory operations and invalid actions; the final plan day by day; every
check's verdict as a row into the check catalogue) and the instances' behaviour trajectories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from travelgym.report.body import ReportRun
from travelgym.report.markup import MAX_ARGUMENT_CHARS, MAX_TEXT_CHARS, clip, json_text

MAX_TRAJECTORY_ACTIONS = 300  # behaviour actions embedded per instance (the viewer shows 20 first)
MAX_ANSWER_CHARS = 60000


def _call(c, max_result_chars: int) -> dict[str, Any]:
    out: dict[str, Any] = {"n": c.name, "a": clip(json_text(c.arguments), MAX_ARGUMENT_CHARS),
                           "ok": 1 if c.ok else 0, "rc": c.result_chars}  # fmt: skip
    if c.result is not None:
        out["r"] = clip(json_text(c.result), max_result_chars)
    if c.error_category or c.error_message:
        out["e"] = f"{c.error_category or 'error'}: {c.error_message or ''}"
    return out


def _step(s, max_result_chars: int) -> dict[str, Any]:
    out: dict[str, Any] = {"i": s.index}
    if s.text:
        out["x"] = clip(s.text, MAX_TEXT_CHARS)
    if s.think:
        out["th"] = clip(s.think, MAX_TEXT_CHARS)
    if s.tool_calls:
        out["calls"] = [_call(c, max_result_chars) for c in s.tool_calls]
    if s.memory_ops:
        out["mem"] = [{"a": m.action, "k": m.key, "v": clip(json_text(m.value), 4000),
                       "ok": 1 if m.ok else 0, "r": clip(m.response or "", 2000)}
                      for m in s.memory_ops]  # fmt: skip
    if s.invalid_actions:
        out["inv"] = [{"s": a.source, "k": a.kind, "m": clip(a.message, 4000),
                       "raw": clip(a.raw or "", 4000)} for a in s.invalid_actions]  # fmt: skip
    if s.observation:
        out["obs"] = clip(s.observation, MAX_TEXT_CHARS)
    if s.answer:
        out["ans"] = 1
    return out


def _plan(answer: str | None) -> tuple[list[dict[str, Any]] | None, list[str]]:
    from travelgym.suites.behavior2trip.plan_parse import parse_plan

    if answer is None:
        return None, ["no answer"]
    try:
        plan, problems = parse_plan(answer)
    except Exception as exc:  # noqa: BLE001 - one odd answer must not stop the report
        return None, [f"the plan could not be parsed: {type(exc).__name__}: {exc}"]
    if plan is None:
        return None, list(problems)
    return plan.to_json(), list(problems) + list(plan.issues)


def _episode(e, check_index: dict[str, int], max_result_chars: int) -> dict[str, Any]:
    days, problems = _plan(e.final_answer)
    out: dict[str, Any] = {
        "id": e.episode_id, "task": e.instance_id, "trial": e.trial, "diff": e.difficulty,
        "term": e.termination, "inv": e.invalid_actions, "calls": e.tool_calls,
        "dur": round(e.duration_s, 3), "instr": clip(e.instruction, MAX_TEXT_CHARS),
        "steps": [_step(s, max_result_chars) for s in e.steps], "days": days,
        "problems": problems,
    }  # fmt: skip
    if e.error:
        out["err"] = clip(e.error, MAX_TEXT_CHARS)
    if e.final_answer is not None:
        out["answer"] = clip(e.final_answer, MAX_ANSWER_CHARS)
    if e.memory:
        out["memory"] = clip(json_text(e.memory), 8000)
    if e.score:
        s = e.score
        out["score"] = {k: s.get(k) for k in ("delivered", "c_passed", "c_applicable", "upc_passed",
                                               "upc_applicable", "c_pass", "upc_pass", "final")}  # fmt: skip
        out["score"]["problems"] = s.get("problems") or []
        checks = []
        for c in s.get("checks") or []:
            cid = c.get("id")
            if cid not in check_index:
                check_index[cid] = len(check_index)
            checks.append([check_index[cid], c.get("passed"), c.get("reason", "")])
        out["checks"] = checks
    return out


def instance_set_key(manifest: dict[str, Any]) -> str:
    """Which instance set a run played, as a short key: ``""`` for the default one (small
    database of seed 0, the filtered set, noise 0), else e.g. ``small-seed0-unfiltered-noise0``
    (runs of other sets play other instances under the same ids)."""
    from travelgym.suites.behavior2trip.run import Behavior2TripRun

    before = Behavior2TripRun.identity_keys
    parts = (manifest.get("db_scale") or before["db_scale"], manifest.get("db_seed", 0),
             manifest.get("instances") or before["instances"], manifest.get("noise") or 0.0)  # fmt: skip
    if parts == ("small", 0, "filtered", 0.0):
        return ""
    scale, seed, which, noise = parts
    return f"{scale}-seed{seed}-{which}-noise{noise:g}"


def trajectories(runs: list[ReportRun], data_dir: Path | None,
                  notes: list[str]) -> dict[str, dict[str, Any]]:  # fmt: skip
    """The behaviour trajectory (first actions) of every instance the runs used, of each run's
    own instance set (only those instances, built where missing), keyed by instance id, or
    ``<set key>/<instance id>`` for a run of another set (:func:`instance_set_key`)."""
    from travelgym.suites.behavior2trip.instance_sets import run_instances

    wanted: dict[str, tuple[dict[str, Any], set[str]]] = {}
    for run in runs:
        key = instance_set_key(run.manifest)
        wanted.setdefault(key, (run.manifest, set()))[1].update(e.instance_id for e in run.episodes)
    out: dict[str, dict[str, Any]] = {}
    for key, (manifest, ids) in sorted(wanted.items()):
        try:
            found = run_instances(manifest, data_dir, ids)
        except Exception as exc:  # noqa: BLE001 - the report is written without them
            notes.append(f"no behaviour trajectories: {type(exc).__name__}: {exc}")
            continue
        for iid, x in found.items():
            actions = [a.model_dump(mode="json", exclude_none=True)
                       for a in x.trajectory[:MAX_TRAJECTORY_ACTIONS]]  # fmt: skip
            out[f"{key}/{iid}" if key else iid] = {"n": len(x.trajectory), "actions": actions}
        missing = ids - set(found)
        if missing:
            notes.append(f"{len(missing)} instance(s) of no known slot: "
                         f"{', '.join(sorted(missing)[:10])}")  # fmt: skip
    return out


def check_catalog(seen: list[str]) -> list[dict[str, str]]:
    """Id, group, category, title and rule of the 32 checks, then any other id the scores
    name (in the order met)."""
    try:
        from travelgym.suites.behavior2trip.checks import CHECKS
    except ImportError:  # pragma: no cover - the checks ship with the package
        CHECKS = ()
    out = [{"id": c.id, "group": c.group, "category": c.category, "title": c.title,
            "rule": c.rule} for c in CHECKS]  # fmt: skip
    known = {c["id"] for c in out}
    return out + [{"id": i, "group": "", "category": "", "title": "", "rule": ""}
                  for i in seen if i not in known]  # fmt: skip


def run_records(runs: list[ReportRun],
                max_result_chars: int) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:  # fmt: skip
    """``(one record per run with its episodes, the check catalogue)``; each episode's check
    rows point into the catalogue, in its order."""
    check_index: dict[str, int] = {}
    records = []
    for run in runs:
        episodes = sorted(run.episodes, key=lambda e: (e.instance_id, e.trial))
        records.append({"label": run.label, "agent": run.manifest.get("agent", run.label),
                        "dir": str(run.directory), "split": run.manifest.get("split"),
                        "episodes": [_episode(e, check_index, max_result_chars)
                                     for e in episodes]})  # fmt: skip
        key = instance_set_key(run.manifest)
        for ep in records[-1]["episodes"] if key else ():  # its trajectories' key
            ep["traj"] = f"{key}/{ep['task']}"
    catalog = check_catalog(list(check_index))
    position = {c["id"]: i for i, c in enumerate(catalog)}
    remap = {i: position[cid] for cid, i in check_index.items()}
    for record in records:
        for ep in record["episodes"]:
            for row in ep.get("checks", []):
                row[0] = remap[row[0]]
            ep.get("checks", []).sort(key=lambda row: row[0])
    return records, catalog
