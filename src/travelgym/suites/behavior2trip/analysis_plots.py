"""RQ2's figure (the paper's Figure 5): DR, Final, UPC micro (and the LLM pass rate when a
run had a judge) against the behaviour trajectory's length, one line per run; written by
``travelgym analyze --plots DIR`` as PNG and SVG.

Drawn with matplotlib's object API (a ``Figure`` saved through the Agg canvas) as in
:mod:`~travelgym.suites.behavior2trip.plots`; matplotlib is imported only when drawing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from travelgym.report.figures import save_figures
from travelgym.suites.behavior2trip.columns import BY_KEY

FORMATS = ("png", "svg")
NAME = "b2t_rq2_trajectory_length"
PANELS = tuple((k, BY_KEY[k].heading) for k in ("DR", "final", "UPC_micro"))  # the tables' labels


def write_length_plots(result: dict[str, Any], out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``b2t_rq2_trajectory_length.png`` and ``.svg`` into ``out_dir`` (created when
    missing) from :func:`~travelgym.suites.behavior2trip.analysis.analyze_runs`'s result; an
    empty bin leaves a gap in its run's line. Returns the written paths."""
    from matplotlib.figure import Figure

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    runs = result["runs"]
    panels = list(PANELS)
    if any(b["LLM"] is not None for run in runs.values() for b in run["length_bins"]):
        panels.append(("LLM", BY_KEY["LLM"].heading))
    bins = result["bins"]
    fig = Figure(figsize=(4.6 * len(panels), 4.2), layout="constrained")
    axes = fig.subplots(1, len(panels))
    for ax, (key, title) in zip(axes, panels, strict=True):
        for label, run in runs.items():
            values = [float("nan") if b[key] is None or not b["n"] else b[key]
                      for b in run["length_bins"]]  # fmt: skip
            ax.plot(range(len(bins)), values, marker="o", linewidth=1.6, label=label)
        ax.set_xticks(range(len(bins)), bins)
        ax.set_xlabel("trajectory actions")
        ax.set_title(title)
        ax.set_ylim(-2, 102)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("Behavior2Trip: performance against behaviour-trajectory length (RQ2)")
    return save_figures({NAME: fig}, out, FORMATS)
