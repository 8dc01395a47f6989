"""The default (filtered) instance set: as in the paper, more instances are generated than
needed and the automatic quality control filters them down.

The unfiltered file holds instances ``0..n-1`` of every (split, difficulty). The rule backend
(:mod:`.quality`) judges each, :mod:`.quality_apply` applies the codes (corrections kept,
``mark_incomplete`` / ``delete`` left out), and the gap of each difficulty is filled with
instances ``n, n+1, ...`` that pass the same control, taken in index order, so the filtered
file keeps ``n`` per difficulty (the paper's 3,000 / 800) and is the same whatever the number
of workers.
"""

from __future__ import annotations

import hashlib
import json
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from travelgym.suites.behavior2trip.profiles import DIFFICULTIES

CHUNK = 200
_JUDGES: dict[str, Any] = {}


def _judge(db_path: str):
    from travelgym.suites.behavior2trip.quality import RuleJudge

    key = f"{os.getpid()}:{db_path}"
    if key not in _JUDGES:
        _JUDGES.clear()
        _JUDGES[key] = RuleJudge(db_path)
    return _JUDGES[key]


def _control(db_path: str, instances: list) -> tuple[list[str], list[str], dict[str, Any]]:
    """QC records (JSON lines), the kept instances (JSON lines) and the report of ``instances``."""
    from travelgym.suites.behavior2trip.quality_apply import apply_records

    judge = _judge(db_path)
    records = [judge.assess(x) for x in instances]
    kept, report = apply_records(records, instances, db_path)
    return ([r.model_dump_json() for r in records], [x.model_dump_json() for x in kept], report)


def _existing_chunk(job: tuple[str, list[str]]) -> tuple[list[str], list[str], dict[str, Any]]:
    from travelgym.suites.behavior2trip.instances import Instance

    db_path, lines = job
    return _control(db_path, [Instance.model_validate_json(line) for line in lines])


def _extra_chunk(job: tuple[str, int, str, str, int, int]) -> tuple[list[str], list[str], dict]:
    """Generate instances ``start..stop`` of (split, difficulty) and control them."""
    from travelgym.suites.behavior2trip.instances import _catalog_for, generate_instance

    db_path, seed, split, diff, start, stop = job
    catalog = _catalog_for(db_path)
    return _control(db_path, [generate_instance(catalog, seed, split, diff, i)
                              for i in range(start, stop)])  # fmt: skip


def _map(fn, jobs: list, workers: int | None) -> list:
    from travelgym.suites.behavior2trip.instances import _can_fork, _mp_context

    workers = min(workers or os.cpu_count() or 1, 4, len(jobs))
    if workers > 1 and _can_fork():
        with ProcessPoolExecutor(workers, mp_context=_mp_context()) as pool:
            return list(pool.map(fn, jobs))
    return [fn(job) for job in jobs]


def _merge(reports: list[dict[str, Any]]) -> dict[str, Any]:
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


def filter_files(db_path: str | os.PathLike[str], seed: int, split: str, source: Path,
                 out: Path, workers: int | None = None) -> dict[str, Any]:  # fmt: skip
    """Write the filtered instance file ``out`` from the unfiltered ``source`` (instances of one
    split) and its QC records and report beside it (``<out stem>.qc.jsonl``,
    ``<out stem>.qc-report.json``); return the manifest fields (sha256, count, counts per code,
    replacements, stats)."""
    from travelgym.suites.behavior2trip.instance_stats import measures, table2
    from travelgym.suites.behavior2trip.instances import Instance
    from travelgym.suites.behavior2trip.quality import RULES_VERSION

    db_path = str(db_path)
    lines = [line for line in Path(source).read_text(encoding="utf-8").splitlines() if line]
    by_diff: dict[str, list[str]] = {d: [] for d in DIFFICULTIES}
    for line in lines:
        by_diff[json.loads(line)["difficulty"]].append(line)
    jobs = [(db_path, rows[lo:lo + CHUNK]) for rows in by_diff.values()
            for lo in range(0, len(rows), CHUNK)]  # fmt: skip
    results = _map(_existing_chunk, jobs, workers)
    qc, kept, reports = {d: [] for d in DIFFICULTIES}, {d: [] for d in DIFFICULTIES}, []
    for (_, rows), (records, keep, report) in zip(jobs, results, strict=True):
        diff = json.loads(rows[0])["difficulty"]
        qc[diff] += records
        kept[diff] += keep
        reports.append(report)
    base = _merge(reports)
    extra_reports, replacements = [], {}
    for diff in DIFFICULTIES:
        n, start = len(by_diff[diff]), len(by_diff[diff])
        while len(kept[diff]) < n:
            gap = n - len(kept[diff])
            size = max(8, gap + gap // 2)
            batch = [(db_path, seed, split, diff, lo, min(lo + CHUNK, start + size))
                     for lo in range(start, start + size, CHUNK)]  # fmt: skip
            for records, keep, report in _map(_extra_chunk, batch, workers):
                take = keep[: n - len(kept[diff])]
                kept[diff] += take
                qc[diff] += records
                extra_reports.append(report)
            start += size
        replacements[diff] = start - n
    extra = _merge(extra_reports)
    text = "".join(line + "\n" for d in DIFFICULTIES for line in kept[d])
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    qc_text = "".join(line + "\n" for d in DIFFICULTIES for line in qc[d])
    qc_path(out).write_text(qc_text, encoding="utf-8")
    report = {"split": split, "qc_backend": "rules", "qc_rules_version": RULES_VERSION,
              "unfiltered": base, "candidates_drawn": replacements, "replacements": extra}  # fmt: skip
    report_path(out).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    sums: dict[str, dict[str, float]] = {}
    for diff in DIFFICULTIES:
        for line in kept[diff]:
            for key, value in measures(Instance.model_validate_json(line)).items():
                into = sums.setdefault(diff, {})
                into[key] = into.get(key, 0) + value
    return {"sha256": hashlib.sha256(text.encode()).hexdigest(),
            "count": sum(len(v) for v in kept.values()), "qc_backend": "rules",
            "qc_rules_version": RULES_VERSION, "qc_counts": base["counts"],
            "extra_candidates": replacements, "extra_counts": extra["counts"],
            "stats": table2(sums, split)}  # fmt: skip


def qc_path(path: Path) -> Path:
    """The QC records written next to filtered instance file ``path``."""
    return path.with_name(path.stem + ".qc.jsonl")


def report_path(path: Path) -> Path:
    """The report of what the filter changed, next to filtered instance file ``path``."""
    return path.with_name(path.stem + ".qc-report.json")
