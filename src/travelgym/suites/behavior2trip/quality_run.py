"""The quality-control commands' work (``travelgym quality assess`` / ``apply``): judging a
split's unfiltered instances with the rule or the LLM backend into a versioned QC file, and
applying a QC file's codes into a filtered instance file with its report."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError
from travelgym.datafiles import dump_jsonl, manifest_path, read_manifest, write_manifest
from travelgym.suites.behavior2trip.quality import (
    OPERATIONS,
    QC_FORMAT_VERSION,
    RULES_VERSION,
    QCRecord,
)

SPLIT_CHOICES = ("train", "test", "all")


def _splits(split: str) -> tuple[str, ...]:
    return ("train", "test") if split == "all" else (split,)


def _database(data_dir: Path | None, scale: str, seed: int):
    from travelgym.suites.behavior2trip.build import ensure_database

    return ensure_database(scale=scale, seed=seed, data_dir=data_dir)


def _chain_plans(chains: Path | None) -> dict[str, str | None]:
    """instance id -> the annotated chain's plan (``{}`` without a chains file)."""
    if chains is None:
        return {}
    from travelgym.suites.behavior2trip.chains import read_chains

    return {r.instance_id: r.plan for r in read_chains(chains)}


def assess(out: Path, *, backend: str, split: str = "test", limit: int | None = None,
           chains: Path | None = None, data_dir: Path | None = None, scale: str = "small",
           db_seed: int = 0, base_url: str | None = None, concurrency: int = 4,
           workers: int | None = None) -> dict[str, Any]:  # fmt: skip
    """Judge the unfiltered instances of ``split`` (the first ``limit`` per split, Easy, Medium,
    Hard interleaved) with ``backend`` (``rules`` or a model name) and write the QC file ``out``
    with its manifest; return the summary. With ``chains`` criterion 3 judges each chain's plan
    (instances without a chain are skipped), else the witness."""
    from travelgym.suites.behavior2trip.instance_sets import select_instances
    from travelgym.suites.behavior2trip.instances import select_slots, slot_keys

    if split not in SPLIT_CHOICES:
        raise UserError(f"unknown split {split!r} (choose train, test or all)")
    plans = _chain_plans(chains)
    db = _database(data_dir, scale, db_seed)
    chosen, shas = [], {}
    for name in _splits(split):
        # only the instances judged are built (the same bytes as in the full split)
        if chains is not None:
            items = _unfiltered(db, data_dir, name, plans, workers)
        else:
            keys = select_slots(name, limit=limit) or slot_keys(name)  # None: the whole split
            items = _unfiltered(db, data_dir, name, None, workers, keys)
        chosen += select_instances(items, None, None, limit)
        shas[name] = _set_sha(db, name)
    if chains is not None and not chosen:
        raise UserError(f"{chains}: no chain of an instance of the {split} split")
    started = time.monotonic()
    if backend == "rules":
        from travelgym.suites.behavior2trip.quality import RuleJudge

        judge = RuleJudge(str(db.path))
        records = [judge.assess(x, plans.get(x.instance_id), chains is not None) for x in chosen]
    else:
        records = asyncio.run(_assess_llm(backend, base_url, str(db.path), chosen, plans,
                                          chains is not None, concurrency))  # fmt: skip
    seconds = round(time.monotonic() - started, 1)
    counts = count_codes(records)
    meta = {"format_version": QC_FORMAT_VERSION, "backend": "rules" if backend == "rules"
            else f"llm:{backend}", "rules_version": RULES_VERSION, "split": split,
            "db_scale": scale, "db_seed": db_seed, "db_content_hash": db.metadata["content_hash"],
            "unfiltered_set_sha256": shas, "chains": str(chains) if chains else None,
            "chains_sha256": _sha(chains) if chains else None, "limit": limit,
            "count": len(records), "counts": counts, "seconds": seconds}  # fmt: skip
    meta["sha256"] = dump_jsonl(records, out)
    write_manifest(out, meta)
    return {"out": str(out), **meta}


async def _assess_llm(model: str, base_url: str | None, db_path: str, instances: list,
                      plans: dict, has_chains: bool, concurrency: int) -> list[QCRecord]:  # fmt: skip
    from travelgym.runner.specs import make_model_client
    from travelgym.suites.behavior2trip.quality_llm import LLMJudge, assess_all
    from travelgym.suites.behavior2trip.witness import _open

    client = make_model_client(model, base_url, {})
    try:
        judge = LLMJudge(client, model, _open(db_path)[2])
        return await assess_all(judge, instances, plans, has_chains, concurrency)
    finally:
        aclose = getattr(client, "aclose", None)
        if aclose is not None:
            await aclose()


def count_codes(records: list[QCRecord]) -> dict[str, int]:
    """Records per operation code (``error``: no code)."""
    counts = Counter(r.operation or "error" for r in records)
    return {code: counts[code] for code in (*OPERATIONS, "error")}


def _sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def read_qc(path: Path) -> tuple[list[QCRecord], dict[str, Any]]:
    """The records and manifest of a QC file; a bad file is a one-line :class:`UserError`."""
    path = Path(path)
    if not manifest_path(path).exists():
        raise UserError(f"{path}: no manifest beside it (write QC files with quality assess)")
    try:
        meta = read_manifest(path)
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: cannot read it: {exc}") from None
    if meta.get("format_version") != QC_FORMAT_VERSION:
        raise UserError(f"{path}: QC format {meta.get('format_version')!r}, this version reads "
                        f"{QC_FORMAT_VERSION!r}")  # fmt: skip
    records = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                records.append(QCRecord.model_validate_json(line))
            except ValueError:
                raise UserError(f"{path}:{number}: not a QC record") from None
    return records, meta


def apply(qc: Path, out_dir: Path, *, data_dir: Path | None = None) -> dict[str, Any]:
    """Apply the codes of QC file ``qc`` to the unfiltered instances it judged: per split a
    filtered file ``<out_dir>/instances-<scale>-<split>-<backend>.jsonl`` with a manifest (QC
    backend, counts per code, the unfiltered file's sha256) and ``report.json`` (what changed)."""
    from travelgym.suites.behavior2trip.quality_apply import apply_records

    records, meta = read_qc(qc)
    scale, seed = meta.get("db_scale", "small"), meta.get("db_seed", 0)
    db = _database(data_dir, scale, seed)
    if db.metadata["content_hash"] != meta.get("db_content_hash"):
        raise UserError(f"{qc}: judged on another database (content hash differs)")
    judged = {r.instance_id for r in records}
    splits = tuple(sorted({r.split for r in records}))
    backend = str(meta.get("backend", "rules")).replace(":", "-").replace("/", "-")
    result: dict[str, Any] = {"qc": str(qc), "backend": meta.get("backend"), "splits": {}}
    report: dict[str, Any] = {}
    for split in splits:
        sha = _set_sha(db, split)
        if sha != (meta.get("unfiltered_set_sha256") or {}).get(split):
            raise UserError(f"{qc}: judged other {split} instances than this install generates "
                            "(another generator or quality-control version)")  # fmt: skip
        items = _unfiltered(db, data_dir, split, judged)
        kept, report[split] = apply_records(records, items, str(db.path))
        target = Path(out_dir) / f"instances-{scale}-{split}-{backend}.jsonl"
        digest = dump_jsonl(kept, target)
        write_manifest(target, {"instances": "filtered", "split": split, "db_scale": scale,
                                "qc_backend": meta.get("backend"), "qc_file": str(qc),
                                "qc_sha256": meta.get("sha256"), "unfiltered_set_sha256": sha,
                                "counts": report[split]["counts"], "count": len(kept),
                                "sha256": digest})  # fmt: skip
        result["splits"][split] = {"path": str(target), "input": len(items), "kept": len(kept),
                                   "counts": report[split]["counts"],
                                   "corrected": len(report[split]["corrected"])}  # fmt: skip
    report_file = Path(out_dir) / "report.json"
    report_file.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    result["report"] = str(report_file)
    return result


def sheet(qc: Path, out: Path, *, sample: int = 1000, seed: int = 0,
          data_dir: Path | None = None) -> str:  # fmt: skip
    """Write the reviewers' sheet of a stratified sample of QC file ``qc`` (see
    :func:`~travelgym.suites.behavior2trip.quality_sheet.export_sheet`)."""
    from travelgym.suites.behavior2trip.quality_sheet import export_sheet

    records, meta = read_qc(qc)
    db = _database(data_dir, meta.get("db_scale", "small"), meta.get("db_seed", 0))
    splits = tuple(sorted({r.split for r in records}))
    wanted = {r.instance_id for r in records}
    instances = {}
    for split in splits:
        instances.update({x.instance_id: x for x in _unfiltered(db, data_dir, split, wanted)})
    return export_sheet(records, instances, out, sample=sample, seed=seed)


def _unfiltered(db, data_dir: Path | None, split: str, ids, workers: int | None = None,
                keys=None) -> list:  # fmt: skip
    """The unfiltered instances of ``split`` named by ``ids`` (or of ``keys``), in file order,
    built where missing: only those, never the whole split."""
    from travelgym.suites.behavior2trip.instances import ensure_selected, known_slots

    keys = known_slots(split, ids) if keys is None else keys
    return ensure_selected(db, data_dir, split, keys, instances="unfiltered", workers=workers)[1]


def _set_sha(db, split: str) -> str:
    """The identity of ``split``'s unfiltered instance set on ``db`` (the content of every
    instance is a pure function of it)."""
    from travelgym.suites.behavior2trip.instance_sets import set_sha256
    from travelgym.suites.behavior2trip.instances import DEFAULT_INSTANCE_SEED

    return set_sha256(db, DEFAULT_INSTANCE_SEED, split, "unfiltered")


def format_result(kind: str, result: dict[str, Any]) -> str:
    """``assess``, ``apply`` or ``summarize`` results as text."""
    if kind == "summarize":
        from travelgym.suites.behavior2trip.quality_sheet import format_summary

        return format_summary(result)
    if kind == "apply":
        lines = [f"applied {result['qc']} ({result['backend']}); report: {result['report']}"]
        for split, s in result["splits"].items():
            counts = ", ".join(f"{k} {v}" for k, v in s["counts"].items())
            lines.append(f"{split}: {s['input']} judged, {s['kept']} kept ({s['corrected']} "
                         f"corrected) -> {s['path']} [{counts}]")  # fmt: skip
        return "\n".join(lines)
    counts = ", ".join(f"{k} {v}" for k, v in result["counts"].items())
    return (f"{result['count']} instances judged by {result['backend']} in {result['seconds']} s "
            f"-> {result['out']}\n{counts}")  # fmt: skip
