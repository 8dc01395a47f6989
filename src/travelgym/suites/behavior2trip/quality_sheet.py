"""The human stage of the quality control: a stratified, seeded sample of judged instances as a
CSV sheet for reviewers, and the summary of filled sheets (agreement with the automatic stage
and Cohen's kappa per criterion and for the operation code; pairwise between reviewers), in the
style of the COMPASS annotation protocol."""

from __future__ import annotations

import csv
import json
import random
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError
from travelgym.suites.behavior2trip.quality import CRITERIA, OPERATIONS, QCRecord

ITEMS = (*CRITERIA, "operation")
COLUMNS = ["instance_id", "split", "difficulty", "instruction", "trajectory", "preferences",
           *(f"auto_{c}" for c in ITEMS), "auto_reasons", "reviewer",
           *(f"review_{c}" for c in ITEMS), "review_notes"]  # fmt: skip


def stratified_sample(records: list[QCRecord], size: int, seed: int) -> list[QCRecord]:
    """``size`` records drawn per (difficulty, operation) stratum in proportion to its size
    (largest remainders; every stratum gets one when ``size`` allows), seeded; all of them
    when there are no more than ``size``. Returned in the records' order."""
    if size >= len(records):
        return list(records)
    strata: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(records):
        strata.setdefault((r.difficulty, r.operation or "error"), []).append(i)
    keys = sorted(strata)
    quota = {k: size * len(strata[k]) / len(records) for k in keys}
    take = {k: int(quota[k]) for k in keys}
    if size >= len(keys):
        for k in keys:
            take[k] = max(take[k], 1)
    left = size - sum(take.values())
    for k in sorted(keys, key=lambda k: (-(quota[k] - int(quota[k])), k)):
        if left <= 0:
            break
        if take[k] < len(strata[k]):
            take[k] += 1
            left -= 1
    while sum(take.values()) > size:  # the minimum of one overshot: trim the largest
        k = max(keys, key=lambda k: (take[k], k))
        take[k] -= 1
    rng = random.Random(seed)
    chosen = sorted(i for k in keys for i in rng.sample(strata[k], take[k]))
    return [records[i] for i in chosen]


def trajectory_summary(instance: Any) -> str:
    """Counts per action type and the favourites and bookings with their labels."""
    counts = Counter(a.action_type for a in instance.trajectory)
    head = ", ".join(f"{counts[t]} {t}" for t in ("click", "add_to_favorites", "book"))
    key = [f"{a.action_type} {a.poi_type} in {a.city} ({', '.join(a.categories)})"
           for a in instance.trajectory if a.action_type != "click"]  # fmt: skip
    return f"{head}; key behaviours: " + "; ".join(key)


def export_sheet(records: list[QCRecord], instances: dict[str, Any], out: Path, *,
                 sample: int = 1000, seed: int = 0) -> str:  # fmt: skip
    """Write the reviewers' CSV sheet of a stratified sample; return a one-line summary."""
    from travelgym.suites.behavior2trip.quality_llm import stated_preferences

    chosen = stratified_sample([r for r in records if r.instance_id in instances], sample, seed)
    if not chosen:
        raise UserError("no judged instance to put on the sheet")
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, COLUMNS)
        writer.writeheader()
        for r in chosen:
            x = instances[r.instance_id]
            scores = r.scores()
            reasons = [f"{c}: {getattr(r, c).reason}" for c in CRITERIA if getattr(r, c)]
            writer.writerow({
                "instance_id": r.instance_id, "split": r.split, "difficulty": r.difficulty,
                "instruction": x.instruction.text, "trajectory": trajectory_summary(x),
                "preferences": json.dumps(stated_preferences(x), ensure_ascii=False),
                **{f"auto_{c}": "" if scores[c] is None else scores[c] for c in CRITERIA},
                "auto_operation": r.operation or "", "auto_reasons": " | ".join(reasons)
                + (f" | error: {r.error}" if r.error else ""),
            })  # fmt: skip
    strata = Counter((r.difficulty, r.operation or "error") for r in chosen)
    return (f"{len(chosen)} instances of {len(records)} written to {out} "
            f"({len(strata)} difficulty x operation strata, seed {seed})")  # fmt: skip


def cohen_kappa(a: list[Any], b: list[Any]) -> float | None:
    """Cohen's kappa of two raters' labels on the same items: (p_o - p_e) / (1 - p_e); ``None``
    when undefined (no items, or both raters always give the one same label)."""
    if len(a) != len(b):
        raise ValueError("the two raters must label the same items")
    if not a:
        return None
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def _label(value: str, item: str, where: str) -> str | int:
    value = value.strip()
    if item == "operation":
        code = value.lower().replace(" ", "_").replace("-", "_")
        if code not in OPERATIONS:
            raise UserError(f"{where}: review_operation {value!r} is not one of "
                            f"{', '.join(OPERATIONS)}")  # fmt: skip
        return code
    if value not in ("0", "1"):
        raise UserError(f"{where}: review_{item} must be 0 or 1, not {value!r}")
    return int(value)


def read_sheet(path: Path) -> list[dict[str, Any]]:
    """The reviewed rows of a filled sheet (a row with every review cell blank is skipped; a
    partly filled or invalid one is a one-line error)."""
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in ("instance_id", *(f"auto_{i}" for i in ITEMS),
                                   *(f"review_{i}" for i in ITEMS)) if c not in (reader.fieldnames or [])]  # fmt: skip
            if missing:
                raise UserError(f"{path}: not a quality sheet (no column {missing[0]})")
            raw = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UserError(f"{path}: cannot read the sheet: {exc}") from None
    rows = []
    for number, row in enumerate(raw, start=2):
        cells = [(row.get(f"review_{i}") or "").strip() for i in ITEMS]
        if not any(cells):
            continue
        where = f"{path}:{number}"
        if not all(cells):
            raise UserError(f"{where}: a review is partly filled (fill every review column)")
        auto = {i: (row.get(f"auto_{i}") or "").strip() for i in ITEMS}
        rows.append({"instance_id": row["instance_id"], "difficulty": row.get("difficulty", ""),
                     "reviewer": (row.get("reviewer") or "").strip() or "reviewer",
                     "review": {i: _label(row[f"review_{i}"], i, where) for i in ITEMS},
                     "auto": {i: (int(v) if v in ("0", "1") else v or None)
                              for i, v in auto.items()}})  # fmt: skip
    return rows


def summarize_rows(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per item (the three criteria and the code): agreement and kappa of the reviewers with
    the automatic stage; pairwise agreement and kappa between reviewers on shared instances."""
    if not rows:
        raise UserError("the sheet has no filled review")
    out: dict[str, Any] = {"rows": len(rows), "instances": len({r["instance_id"] for r in rows}),
                           "reviewers": sorted({r["reviewer"] for r in rows}), "vs_auto": {},
                           "pairwise": []}  # fmt: skip
    for item in ITEMS:
        pairs = [(r["review"][item], r["auto"][item]) for r in rows if r["auto"][item] is not None]
        human, auto = [p[0] for p in pairs], [p[1] for p in pairs]
        out["vs_auto"][item] = {"n": len(pairs), "agreement": _share(human, auto),
                                "kappa": cohen_kappa(human, auto),
                                "human_positive": _positive(human, item)}  # fmt: skip
    by_reviewer: dict[str, dict[str, dict]] = {}
    for r in rows:
        by_reviewer.setdefault(r["reviewer"], {})[r["instance_id"]] = r["review"]
    for first, second in combinations(sorted(by_reviewer), 2):
        shared = sorted(set(by_reviewer[first]) & set(by_reviewer[second]))
        entry: dict[str, Any] = {"reviewers": [first, second], "n": len(shared)}
        for item in ITEMS:
            a = [by_reviewer[first][i][item] for i in shared]
            b = [by_reviewer[second][i][item] for i in shared]
            entry[item] = {"agreement": _share(a, b), "kappa": cohen_kappa(a, b)}
        out["pairwise"].append(entry)
    return out


def _share(a: list, b: list) -> float | None:
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a) if a else None


def _positive(values: list, item: str) -> float | None:
    """The share of 1 scores (of ``no_action`` for the code)."""
    if not values:
        return None
    hit = "no_action" if item == "operation" else 1
    return sum(v == hit for v in values) / len(values)


def format_summary(result: dict[str, Any]) -> str:
    """The summary as a small table."""

    def num(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    lines = [f"{result['rows']} reviews of {result['instances']} instances by "
             f"{len(result['reviewers'])} reviewer(s)",
             f"{'item':<14}{'n':>6}{'agree':>8}{'kappa':>8}{'human 1s':>10}"]  # fmt: skip
    for item, v in result["vs_auto"].items():
        lines.append(f"{item:<14}{v['n']:>6}{num(v['agreement']):>8}{num(v['kappa']):>8}"
                     f"{num(v['human_positive']):>10}")  # fmt: skip
    for p in result["pairwise"]:
        cells = ", ".join(f"{i} {num(p[i]['agreement'])}/{num(p[i]['kappa'])}" for i in ITEMS)
        lines.append(f"{' vs '.join(p['reviewers'])} on {p['n']}: {cells} (agreement/kappa)")
    return "\n".join(lines)
