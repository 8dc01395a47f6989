"""PNG figures of the Behavior2Trip instances by difficulty (``travelgym stats behavior2trip
--plots DIR``): Table 2's measures, measured next to the paper's, and histograms of trip days,
trajectory actions and companions.

Figures are drawn with matplotlib's object API (a ``Figure`` saved through the Agg canvas), so no
pyplot state or interactive backend is touched; matplotlib is imported only when drawing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from travelgym.report.figures import save_figures
from travelgym.suites.behavior2trip.listing import DIFFICULTY_ORDER, TABLE2_COLUMNS

COLORS = {"easy": "#4c9a5b", "medium": "#e08a2c", "hard": "#b23a48"}
PAPER_COLOR = "#9a9a9a"
TITLES = {"samples": "Instances", "actions": "Trajectory actions",
          "preferences": "Active preference categories", "pois": "Distinct POIs in the trajectory",
          "days": "Trip days", "companions": "Companions"}  # fmt: skip
HISTOGRAMS = (("days", "Trip days"), ("actions", "Trajectory actions"),
              ("companions", "Companions"))  # fmt: skip


def instance_values(paths: dict[str, str | os.PathLike[str]]) -> dict[str, dict[str, list[int]]]:
    """Per difficulty, the days, actions and companions of every instance of the files
    ``paths`` (split -> instance file); only these fields are read."""
    out: dict[str, dict[str, list[int]]] = {}
    for path in paths.values():
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                row = json.loads(line)
                into = out.setdefault(row["difficulty"], {k: [] for k, _ in HISTOGRAMS})
                into["days"].append(row["instruction"]["days"])
                into["companions"].append(row["instruction"]["companions"])
                into["actions"].append(len(row["trajectory"]))
    return out


def write_instance_plots(stats: dict[str, Any], out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``instances_table2.png`` (each Table 2 measure per split and difficulty, measured
    and paper) and ``instances_histograms.png`` (days, actions and companions per difficulty,
    both splits together) from :func:`~travelgym.suites.behavior2trip.instances.instance_stats`'s
    result. ``out_dir`` is created when missing; returns the written paths in that order (a
    figure without data, e.g. no instance file, is left out)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    splits = {s: e for s, e in (stats.get("splits") or {}).items() if e}
    figures = {}
    table = {s: e["by_difficulty"] for s, e in splits.items() if e.get("by_difficulty")}
    if table:
        figures["instances_table2"] = _table2_figure(table)
    values = instance_values({s: e["path"] for s, e in splits.items() if e.get("path")})
    if values:
        figures["instances_histograms"] = _histograms(values)
    return save_figures(figures, out)


def _table2_figure(table: dict[str, dict[str, Any]]) -> Any:
    """One panel per Table 2 measure: bars per split and difficulty, the paper's value hatched
    next to the measured one."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    fig = Figure(figsize=(14, 8), layout="constrained")
    axes = fig.subplots(2, 3).ravel()
    groups = [(s, d) for s in table for d in DIFFICULTY_ORDER if d in table[s]]
    for ax, (key, _) in zip(axes, TABLE2_COLUMNS, strict=True):
        for i, (split, level) in enumerate(groups):
            entry = table[split][level].get(key) or {}
            color = COLORS.get(level, PAPER_COLOR)
            ax.bar(i - 0.2, entry.get("measured", 0), 0.4, color=color)
            ax.bar(i + 0.2, entry.get("paper", 0), 0.4, color="white", edgecolor=color,
                   hatch="//")  # fmt: skip
        ax.set_xticks(range(len(groups)), [f"{s}\n{d}" for s, d in groups], fontsize=8)
        ax.set_title(TITLES.get(key, key))
    fig.legend(handles=[Patch(color=PAPER_COLOR, label="measured"),
                        Patch(facecolor="white", edgecolor=PAPER_COLOR, hatch="//",
                              label="paper (Table 2)")], loc="outside upper right", ncols=2)  # fmt: skip
    fig.suptitle("Behavior2Trip instances against the paper's Table 2 (means per difficulty)")
    return fig


def _histograms(values: dict[str, dict[str, list[int]]]) -> Any:
    """Days, actions and companions: one panel each, one step histogram per difficulty."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(15, 4.5), layout="constrained")
    axes = fig.subplots(1, len(HISTOGRAMS))
    levels = [d for d in DIFFICULTY_ORDER if d in values]
    for ax, (key, title) in zip(axes, HISTOGRAMS, strict=True):
        top = max(max(values[d][key], default=0) for d in levels)
        step = 1 if key != "actions" else max(1, (top + 29) // 30)
        # integer values: each bin centred on its value (or a run of values)
        bins = [b - 0.5 for b in range(0, top + 2 * step, step)]
        for level in levels:
            ax.hist(values[level][key], bins=bins, histtype="step", linewidth=1.6,
                    color=COLORS.get(level), label=f"{level} (n={len(values[level][key]):,})")  # fmt: skip
        ax.set_title(title)
        ax.set_ylabel("instances")
        ax.legend(fontsize=8)
    fig.suptitle("Behavior2Trip instances by difficulty (train and test)")
    return fig
