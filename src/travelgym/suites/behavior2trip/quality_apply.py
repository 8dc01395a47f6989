"""Applying Figure 10's operation codes: ``no_action`` keeps an instance, ``correct_preference``
keeps it with the profile corrected from the behaviour (and its witness re-scored on the
corrected profile), ``mark_incomplete`` and ``delete`` leave it out. The report says what
changed and why."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from travelgym.suites.behavior2trip.instances import Instance
from travelgym.suites.behavior2trip.preferences import MODE_SEATS, POI_TYPE_CATEGORY, Preferences
from travelgym.suites.behavior2trip.quality import KEY_ACTIONS, OPERATIONS, QCRecord, shown_kinds
from travelgym.suites.behavior2trip.vocab import WALKING_TOLERANCE

REMOVED = ("mark_incomplete", "delete")


def _ordered(values: list[str]) -> list[str]:
    """Distinct values, the most frequent first (ties: first seen)."""
    counts = Counter(values)
    return sorted(counts, key=lambda v: (-counts[v], values.index(v)))


def _shared(values: list[Any], stated: Any) -> Any:
    """``stated`` when every behaviour agrees with it, else the one value all share, else None."""
    if all(v == stated for v in values):
        return stated
    return values[0] if values and len(set(values)) == 1 else None


def corrected_from_behaviour(instance: Instance, catalog: Any) -> dict[str, Any]:
    """The preferences (JSON, without the history) the key behaviours support: listed values no
    favourite or booking shows are dropped (or replaced by those shown), and an attribute a key
    behaviour contradicts takes the value the behaviour shows (or none when it is optional and
    the behaviours disagree). Categories stay as they are, and so does every clicked POI's
    standing (a value a matching click shows is kept: no click turns into noise)."""
    prefs = instance.profile.preferences
    pois: dict[str, list] = {}
    for a in instance.trajectory:
        category = POI_TYPE_CATEGORY.get(a.poi_type)
        if a.action_type in KEY_ACTIONS and category and a.poi_id in catalog.pois:
            pois.setdefault(category, []).append(catalog.pois[a.poi_id])
    out = prefs.model_dump(mode="json", exclude={"historical_travel_experiences"})

    def narrowed(stated: list[str], category: str) -> list[str]:
        # what the behaviour shows: the same evidence criterion 2 looks at
        shown = shown_kinds(instance, catalog, category)
        kept = [v for v in stated if v in shown]
        return kept or _ordered([p.kind for p in pois[category]])[: len(stated)]

    if (h := prefs.hotel_preferences) and (ps := pois.get("hotel_preferences")):
        out["hotel_preferences"] = {
            "star_requirement": narrowed(h.star_requirement, "hotel_preferences"),
            "essential_facilities": [f for f in h.essential_facilities
                                     if all(f in p.facilities for p in ps)],
        }  # fmt: skip
    if (a := prefs.attraction_preferences) and (ps := pois.get("attraction_preferences")):
        walking = a.walking_tolerance
        levels = [p.level for p in ps if p.level]
        if walking and levels:
            walking = max([walking, *levels], key=WALKING_TOLERANCE.index)
        out["attraction_preferences"] = {
            "preferred_attraction_types": narrowed(a.preferred_attraction_types,
                                                   "attraction_preferences"),
            "walking_tolerance": walking,
        }  # fmt: skip
    if (d := prefs.dining_requirements) and (ps := pois.get("dining_requirements")):
        out["dining_requirements"] = {
            "cuisine_preferences": narrowed(d.cuisine_preferences, "dining_requirements"),
            "price_level": _shared([p.level for p in ps], d.price_level) if d.price_level
            else None,
            "dining_environment": _shared([p.env for p in ps], d.dining_environment)
            if d.dining_environment else None,
        }  # fmt: skip
    if (t := prefs.transportation_preferences) and (ps := pois.get("transportation_preferences")):
        modes = [p.kind for p in ps]
        mode = t.intercity_transport if t.intercity_transport in modes else _ordered(modes)[0]
        seats = [p.level for p in ps if p.kind == mode]
        seat = _shared(seats, t.seat_class) if t.seat_class else None
        out["transportation_preferences"] = {
            "intercity_transport": mode, "intracity_transport": t.intracity_transport,
            "seat_class": seat if seat in MODE_SEATS[mode] else None,
        }  # fmt: skip
    return out


def corrected_instance(instance: Instance, preferences: dict[str, Any],
                       db_path: str) -> tuple[Instance | None, str]:  # fmt: skip
    """The instance with ``preferences`` (history kept) and a witness that passes on them: the
    stored one when it still does, else the oracle's new plan; ``(None, why)`` when the
    preferences are invalid, change the categories, break the profile's consistency rules or
    the trajectory's Figure 9 rules, or leave the request without a witness."""
    from travelgym.suites.behavior2trip.witness import _open, find_witness, witness_failures

    old = instance.profile.preferences
    history = old.historical_travel_experiences.model_dump(mode="json")
    try:
        prefs = Preferences.model_validate({**preferences, "historical_travel_experiences":
                                            history})  # fmt: skip
    except ValueError as exc:
        first = str(exc).splitlines()[1:2] or [str(exc)]
        return None, f"invalid corrected preferences: {first[0].strip()}"
    if prefs.categories != old.categories:
        return None, "the correction changes the preference categories (the difficulty)"
    fixed = instance.model_copy(update={"profile": instance.profile.model_copy(
        update={"preferences": prefs})})  # fmt: skip
    from travelgym.suites.behavior2trip.behaviour_rules import validate_trajectory
    from travelgym.suites.behavior2trip.instances import _catalog_for, instance_pool
    from travelgym.suites.behavior2trip.profiles import check_profile

    issues = [i.rule for i in check_profile(fixed.profile)]
    if issues:
        return None, f"the corrected profile breaks the consistency rules: {', '.join(issues)}"
    # the trajectory must stay valid for the corrected profile (no click becomes stray noise)
    problems = validate_trajectory(fixed.trajectory, instance_pool(fixed, _catalog_for(db_path)))
    if problems:
        return None, f"the trajectory breaks Figure 9 under the correction: {problems[0]}"
    pdb = _open(str(db_path))[2]
    if instance.witness and not witness_failures(fixed, instance.witness, pdb):
        return fixed, "the witness still passes every check"
    plan = find_witness(fixed, str(db_path))
    if plan is None:
        return None, "no witness plan meets the corrected preferences"
    return fixed.model_copy(update={"witness": plan}), "a new witness plan"


def _changes(before: Preferences, after: Preferences) -> dict[str, Any]:
    """attribute -> [before, after] for the attributes a correction changed."""
    a = before.model_dump(mode="json", exclude={"historical_travel_experiences"})
    b = after.model_dump(mode="json", exclude={"historical_travel_experiences"})
    out = {}
    for cat in a:
        for key in set(a[cat] or {}) | set(b[cat] or {}):
            old, new = (a[cat] or {}).get(key), (b[cat] or {}).get(key)
            if old != new:
                out[f"{cat}.{key}"] = [old, new]
    return out


def apply_records(records: list[QCRecord], instances: list[Instance],
                  db_path: str) -> tuple[list[Instance], dict[str, Any]]:  # fmt: skip
    """The kept instances (in their order, corrections applied) and the report: counts per
    code, the corrections (what changed, the witness), what was left out and why, and the
    instances kept without a verdict (no record, or a judge error)."""
    by_id = {r.instance_id: r for r in records}
    kept: list[Instance] = []
    codes: Counter = Counter()
    corrected, removed, unjudged = [], [], []
    for x in instances:
        record = by_id.get(x.instance_id)
        if record is None or record.operation is None:
            unjudged.append({"instance_id": x.instance_id,
                             "why": record.error if record else "no QC record"})  # fmt: skip
            codes["unjudged"] += 1
            kept.append(x)
            continue
        code = record.operation
        if code == "correct_preference":
            fixed, why = corrected_instance(x, record.corrected_preferences or {}, db_path)
            if fixed is None:
                code = "delete"
                record = record.model_copy(update={"error": why})
            else:
                corrected.append({"instance_id": x.instance_id, "witness": why,
                                  "reason": record.clarity.reason if record.clarity else "",
                                  "changes": _changes(x.profile.preferences,
                                                      fixed.profile.preferences)})  # fmt: skip
                x = fixed
        codes[code] += 1
        if code in REMOVED:
            removed.append({"instance_id": x.instance_id, "operation": code,
                            "reasons": _reasons(record)})  # fmt: skip
        else:
            kept.append(x)
    report = {"counts": {c: codes[c] for c in (*OPERATIONS, "unjudged")},
              "kept": len(kept), "input": len(instances), "corrected": corrected,
              "removed": removed, "unjudged": unjudged}  # fmt: skip
    return kept, report


def _reasons(record: QCRecord) -> list[str]:
    out = [f"{c}: {getattr(record, c).reason}" for c in ("completeness", "clarity", "constraints")
           if getattr(record, c) is not None and getattr(record, c).score == 0]  # fmt: skip
    if record.error:
        out.append(record.error)
    return out


def report_text(report: dict[str, Any]) -> str:
    """A few lines: counts per code and the first changes."""
    lines = [f"{report['input']} instances in, {report['kept']} kept: "
             + ", ".join(f"{k} {v}" for k, v in report["counts"].items())]  # fmt: skip
    for item in report["corrected"][:5]:
        lines.append(f"  corrected {item['instance_id']}: "
                     f"{json.dumps(item['changes'], ensure_ascii=False)} ({item['witness']})")  # fmt: skip
    for item in report["removed"][:5]:
        lines.append(f"  {item['operation']} {item['instance_id']}: {'; '.join(item['reasons'])}")
    return "\n".join(lines)
