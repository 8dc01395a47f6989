"""Applying Figure 10's operation codes: ``no_action`` keeps an instance, ``correct_preference``
keeps it with the profile corrected from the behaviour (and the oracle's plan for the corrected
profile as its witness), ``mark_incomplete`` and ``delete`` leave it out. The report says what
changed and why."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from travelgym.suites.behavior2trip.instance_model import Instance
from travelgym.suites.behavior2trip.preferences import Preferences
from travelgym.suites.behavior2trip.quality import OPERATIONS, QCRecord

REMOVED = ("mark_incomplete", "delete")


def corrected_instance(instance: Instance, preferences: dict[str, Any],
                       db_path: str) -> tuple[Instance | None, str]:  # fmt: skip
    """The instance with ``preferences`` (history kept) and, as its witness, the oracle's plan
    for them; ``(None, why)`` when the preferences are invalid, change the categories, break the
    profile's consistency rules or the trajectory's Figure 9 rules, or the oracle's plan fails
    a check (instances version 4: before, a stored witness that still passed was kept, and the
    oracle could miss an instance whose witness it had not planned)."""
    from travelgym.suites.behavior2trip.witness import find_witness

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
    from travelgym.suites.behavior2trip.behaviour_pool import catalog_for
    from travelgym.suites.behavior2trip.behaviour_rules import validate_trajectory
    from travelgym.suites.behavior2trip.instance_model import instance_pool
    from travelgym.suites.behavior2trip.profiles import check_profile

    issues = [i.rule for i in check_profile(fixed.profile)]
    if issues:
        return None, f"the corrected profile breaks the consistency rules: {', '.join(issues)}"
    # the trajectory must stay valid for the corrected profile (no click becomes stray noise)
    problems = validate_trajectory(fixed.trajectory, instance_pool(fixed, catalog_for(db_path)))
    if problems:
        return None, f"the trajectory breaks Figure 9 under the correction: {problems[0]}"
    # the witness is the oracle's plan of the instance as kept, never a plan of the profile
    # before the correction: the oracle, planning through the tools, passes every kept instance
    plan = find_witness(fixed, str(db_path))
    if plan is None:
        return None, "the oracle's plan for the corrected preferences fails a check"
    why = "the witness is unchanged" if plan == instance.witness else "a new witness plan"
    return fixed.model_copy(update={"witness": plan}), why


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
