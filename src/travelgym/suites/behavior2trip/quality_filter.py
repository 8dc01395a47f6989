"""The default (filtered) instance set: as in the paper, more instances are generated than
needed and the automatic quality control filters them down.

The rule backend (:mod:`.quality`) judges each candidate and :mod:`.quality_apply` applies the
code (corrections kept, ``mark_incomplete`` / ``delete`` left out). A slot whose first
candidate is left out takes the next candidate that passes (:mod:`.instance_slots`), so the
filtered file keeps ``n`` per difficulty (the paper's 3,000 / 800) with the ids of the
unfiltered one. The QC records of every candidate and a report of what the filter changed are
written next to the filtered file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from travelgym.atomic import replaced_on_success

_JUDGES: dict[str, Any] = {}


def _judge(db_path: str):
    from travelgym.suites.behavior2trip.quality import RuleJudge

    key = f"{os.getpid()}:{db_path}"
    if key not in _JUDGES:
        _JUDGES.clear()
        _JUDGES[key] = RuleJudge(db_path)
    return _JUDGES[key]


def control(db_path: str, instance: Any) -> tuple[Any, Any | None, dict[str, Any]]:
    """The QC record of ``instance``, the instance as kept (corrected) or None when the control
    leaves it out, and the report of that one decision."""
    from travelgym.suites.behavior2trip.quality_apply import apply_records

    record = _judge(str(db_path)).assess(instance)
    kept, report = apply_records([record], [instance], str(db_path))
    return record, (kept[0] if kept else None), report


def merge(reports: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """One report of many decisions: counts summed, lists joined."""
    out: dict[str, Any] = {"counts": {}, "kept": 0, "input": 0, "corrected": [], "removed": [],
                           "unjudged": []}  # fmt: skip
    for r in reports:
        for key, value in r["counts"].items():
            out["counts"][key] = out["counts"].get(key, 0) + value
        for key in ("kept", "input"):
            out[key] += r[key]
        for key in ("corrected", "removed", "unjudged"):
            out[key] += r[key]
    return out


def write_sidecars(out: Path, split: str, slots: Iterable[Any]) -> dict[str, Any]:
    """Write the QC records (``<out stem>.qc.jsonl``) and the report (``.qc-report.json``) of
    the filtered file ``out`` from its slots (in file order); return the manifest fields."""
    from travelgym.suites.behavior2trip.profiles import DIFFICULTIES
    from travelgym.suites.behavior2trip.quality import RULES_VERSION

    first, later, replaced = [], [], []
    drawn = dict.fromkeys(DIFFICULTIES, 0)
    with replaced_on_success(qc_path(out)) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for slot in slots:
            candidates = slot.info["candidates"]
            for k, candidate in enumerate(candidates):
                fh.write(candidate["qc"] + "\n")
                (later if k else first).append(candidate["report"])
            if len(candidates) > 1:
                drawn[slot.key[1]] += len(candidates) - 1
                replaced.append({"instance_id": json.loads(candidates[0]["qc"])["instance_id"],
                                 "candidate": len(candidates) - 1})  # fmt: skip
    base, extra = merge(first), merge(later)
    report = {"split": split, "qc_backend": "rules", "qc_rules_version": RULES_VERSION,
              "unfiltered": base, "candidates_drawn": drawn, "replaced": replaced,
              "replacements": extra}  # fmt: skip
    with replaced_on_success(report_path(out)) as tmp:
        tmp.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    return {"qc_backend": "rules", "qc_rules_version": RULES_VERSION, "qc_counts": base["counts"],
            "extra_candidates": drawn, "extra_counts": extra["counts"]}  # fmt: skip


def qc_path(path: Path) -> Path:
    """The QC records written next to filtered instance file ``path``."""
    return path.with_name(path.stem + ".qc.jsonl")


def report_path(path: Path) -> Path:
    """The report of what the filter changed, next to filtered instance file ``path``."""
    return path.with_name(path.stem + ".qc-report.json")
