"""RQ3: several Behavior2Trip runs (e.g. the ablation checkpoints of ``train grpo``) as one
Table 4-style table, each row against the first run (the base): the difference in percentage
points, the relative change the paper's arrows print, and a bootstrap interval of the
difference in DR and Final.
"""

from __future__ import annotations

from typing import Any

from travelgym.core.bootstrap import paired_bootstrap, unpaired_bootstrap
from travelgym.core.columns import N, table
from travelgym.suites.behavior2trip.columns import BY_KEY, RUN, columns_of

# (key in scoring.aggregate, column label): the labels every table of the suite gives them
TABLE_COLUMNS = tuple((k, BY_KEY[k].label) for k in ("DR", "final", "LLM", "C_micro", "UPC_micro"))
BOOTSTRAP = (("DR", "delivered"), ("final", "final"))  # table key, per-episode feature


def task_set_problem(runs: list[dict[str, Any]]) -> str | None:
    """How the runs' instance sets differ (split, database scale or content, instance file,
    task ids), or ``None`` when they ran on the same instances."""
    keys = ("split", "db_scale", "db_content_hash", "tasks_sha256", "task_ids")
    for key in keys:
        values = {repr(sorted(v) if isinstance(v, list) else v)
                  for v in (r["manifest"].get(key) for r in runs)}  # fmt: skip
        if len(values) > 1:
            dirs = ", ".join(str(r["dir"]) for r in runs)
            return f"the runs {dirs} differ in {key}"
    return None


def _arrays(run: dict[str, Any], feature: str) -> dict[tuple[str, int], float]:
    return {(e["instance_id"], e["trial"]): float(bool(e[feature])) for e in run["episodes"]}


def bootstrap_difference(base: dict[tuple[str, int], float], other: dict[tuple[str, int], float],
                         resamples: int, seed: int) -> list[float] | None:  # fmt: skip
    """The 95 % percentile interval (points) of ``mean(other) - mean(base)``: paired over the
    episodes when both runs have the same (instance, trial) keys, else each run resampled on
    its own (:mod:`travelgym.core.bootstrap`, the one bootstrap of every comparison);
    ``None`` when a run has no episode."""
    if not base or not other:
        return None
    if set(base) == set(other):
        keys = sorted(base)
        found = paired_bootstrap([other[k] for k in keys], [base[k] for k in keys], resamples,
                                 seed)  # fmt: skip
    else:
        found = unpaired_bootstrap(list(other.values()), list(base.values()), resamples, seed)
    return [round(found["ci_low"] * 100.0, 2), round(found["ci_high"] * 100.0, 2)]


def ablation_table(analysed: dict[str, dict[str, Any]], *, resamples: int,
                   seed: int) -> dict[str, Any]:  # fmt: skip
    """One row per run (label, the overall DR, Final, LLM (``None`` without a judge),
    C micro and UPC micro); every row after the first also carries ``delta`` (points),
    ``relative`` (percent of the base's value) and ``interval`` (bootstrap, DR and Final)."""
    labels = list(analysed)
    base = analysed[labels[0]]["summary"]["overall"]
    rows = []
    for i, label in enumerate(labels):
        overall = analysed[label]["summary"]["overall"]
        row: dict[str, Any] = {"label": label, "n": overall["n"],
                               **{k: overall.get(k) for k, _ in TABLE_COLUMNS}}  # fmt: skip
        if i:
            row["delta"], row["relative"] = {}, {}
            for key, _ in TABLE_COLUMNS:
                value, ref = overall.get(key), base.get(key)
                both = value is not None and ref is not None
                row["delta"][key] = round(value - ref, 2) if both else None
                row["relative"][key] = (
                    round(100.0 * (value - ref) / ref, 2) if both and ref else None
                )
            row["interval"] = {key: bootstrap_difference(
                _arrays(analysed[labels[0]], feature), _arrays(analysed[label], feature),
                resamples, seed) for key, feature in BOOTSTRAP}  # fmt: skip
        rows.append(row)
    return {"base": labels[0], "columns": [k for k, _ in TABLE_COLUMNS], "rows": rows,
            "resamples": resamples, "seed": seed}  # fmt: skip


def _arrow(delta: float | None) -> str:
    if delta is None:
        return ""
    return f" ({'↑' if delta > 0 else '↓' if delta < 0 else '±'}{abs(delta):.1f})"


def format_table(table_: dict[str, Any]) -> list[str]:
    """The table as text: values with the difference from the base in points (arrows), then
    the relative changes (the paper's arrows) and the bootstrap intervals."""
    keys = {k for k, _ in TABLE_COLUMNS}
    columns = [c for c in columns_of(table_["rows"]) if c.key in keys]  # the suite's order
    rows = [[row["label"], row["n"], *(c.text(row[c.key]) + _arrow(row.get("delta", {}).get(c.key))
                                       for c in columns)] for row in table_["rows"]]  # fmt: skip
    title = f"RQ3: runs against the base ({table_['base']}; differences in points)"
    lines = table([RUN, N, *columns], rows, title=title).splitlines()
    others = table_["rows"][1:]
    if others:
        lines.append("relative change from the base (%), as the paper's Table 4 prints it; "
                     f"95 % bootstrap interval of the difference ({table_['resamples']} resamples)")  # fmt: skip
        for row in others:
            rel = ", ".join(f"{c.label} {_signed(row['relative'][c.key])}" for c in columns)
            ci = ", ".join(f"{BY_KEY[k].label} [{v[0]:+.1f}, {v[1]:+.1f}]" if v
                           else f"{BY_KEY[k].label} -" for k, v in row["interval"].items())  # fmt: skip
            lines.append(f"  {row['label']}: {rel}; {ci}")
    return lines


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1f}%"
