"""Counterparts of the COMPASS paper's result figures (2, 3, 4, 7, 8, 9, 10, 11), one or more runs.

Drawn from an :func:`travelgym.suites.compass.analysis.metrics.analyze_runs` result (its per-episode rows feed
the distributions), with matplotlib's object API (``Figure`` through the Agg canvas, no pyplot
state), written as PNG and SVG. Every figure puts the runs side by side, in the given order.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from travelgym.report.figures import save_figures
from travelgym.suites.compass.analysis.stats import bin_index, quantile_edges

FORMATS = ("png", "svg")
PALETTE = ("#2f6f8f", "#e08a2c", "#4f9d69", "#b23a48", "#7a5c99", "#8c6d31", "#d16fa8",
           "#5a5a5a", "#3fa7b5", "#a3a32b")  # fmt: skip
METRIC_COLORS = {"FR": "#9cb8c9", "OR5": "#2f6f8f", "OR10": "#e08a2c", "OR20": "#4f9d69"}
LEVEL_NAMES = {"1": "Level I", "2": "Level II", "3": "Level III"}
# the rates Figures 2 and 8 set side by side per agent, with their legend labels
RATE_LABELS = {"FR": "FR", "OR5": "OR-5%", "OR10": "OR-10%"}
_NO_RATES = dict.fromkeys(RATE_LABELS, 0.0)  # a level an agent has no task of


def write_plots(
    source: dict[str, Any] | Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    formats: Sequence[str] = FORMATS,
) -> list[Path]:
    """Write every figure into ``out_dir`` (created when missing) in each of ``formats``.

    ``source`` is an ``analyze_runs`` result, or run directories to analyse. Returns the written
    paths: ``fig02_fr_or``, ``fig03_or_by_level``, ``fig04_search``, ``fig07_revelation``,
    ``fig08_level_breakdown``, ``fig09_efficiency``, ``fig10_constraints``, ``fig11_turns``,
    each with every format's suffix.
    """
    if isinstance(source, str | os.PathLike):
        source = [source]
    if not isinstance(source, dict):
        from travelgym.suites.compass.analysis.metrics import analyze_runs

        source = analyze_runs([Path(p) for p in source])
    if not source["runs"]:
        raise ValueError("no runs to plot")
    runs = {shown_label(name): run for name, run in source["runs"].items()}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    # Run names are arbitrary text: "$...$" must not be read as mathtext (a parse error would
    # drop every figure, a success would garble the name).
    with rc_context({"text.parse_math": False}):
        figures = {
            "fig02_fr_or": fig_fr_or(runs),
            "fig03_or_by_level": fig_or_by_level(runs),
            "fig04_search": fig_search(runs),
            "fig07_revelation": fig_revelation(runs),
            "fig08_level_breakdown": fig_level_breakdown(runs),
            "fig09_efficiency": fig_efficiency(runs),
            "fig10_constraints": fig_constraints(runs),
            "fig11_turns": fig_turns(runs),
        }
        written += save_figures(figures, out, formats)
    return written


def shown_label(name: str) -> str:
    """A run name as the figures show it: unchanged, except that a name matplotlib would hide
    from legends (a leading underscore) gets a leading space."""
    return f" {name}" if name.startswith("_") else name


def _color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _figure(
    width: float, height: float, ncols: int = 1, nrows: int = 1, **kw
) -> tuple[Figure, Any]:
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, **kw)
    return fig, axes


def _style(ax: Axes) -> None:
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="y", color="#e5e5e5", linewidth=0.8)
    ax.set_axisbelow(True)


def _agent_ticks(ax: Axes, names: Sequence[str]) -> None:
    ax.set_xticks(range(len(names)))
    rotate = len(names) > 3 or max(len(n) for n in names) > 14
    ax.set_xticklabels(names, rotation=20 if rotate else 0, ha="right" if rotate else "center")


def _grouped_bars(
    ax: Axes,
    groups: Sequence[str],
    series: dict[str, Sequence[float]],
    colors: Sequence[str],
    labels: bool = True,
) -> None:
    """Bars per group (x) and series (side by side), values annotated on top."""
    k = len(series)
    width = 0.8 / max(k, 1)
    x = np.arange(len(groups))
    for j, (name, values) in enumerate(series.items()):
        pos = x - 0.4 + width * (j + 0.5)
        bars = ax.bar(pos, values, width, label=name, color=colors[j], edgecolor="white")
        if labels and len(groups) * k <= 24:
            ax.bar_label(bars, fmt="%.0f", fontsize=7, padding=1)
    ax.set_xticks(x)
    ax.set_xticklabels(groups)


def _percent_axis(ax: Axes, ncols: int, legend: bool = True) -> None:
    """0-100 % ticks with headroom above for value labels and a one-row legend."""
    ax.set_ylim(0, 122)
    ax.set_yticks(range(0, 101, 20))
    if legend:
        ax.legend(frameon=False, ncols=ncols, loc="upper center", fontsize=8)


def _rate_bars(
    ax: Axes, names: Sequence[str], rates: Sequence[dict[str, float]], legend: bool = True
) -> None:
    """FR, OR-5 and OR-10 as bars per agent (``rates``, one per name) on a percent axis."""
    series = {label: [r[k] for r in rates] for k, label in RATE_LABELS.items()}
    _grouped_bars(ax, names, series, [METRIC_COLORS[k] for k in RATE_LABELS])
    _agent_ticks(ax, names)
    _percent_axis(ax, 3, legend=legend)
    _style(ax)


def _levels(runs: dict[str, Any]) -> list[str]:
    """The task levels any run has scores for (all three when none has)."""
    levels = {lv for run in runs.values() for lv in run["scores"]["by_level"]}
    return sorted(levels) or ["1", "2", "3"]


def _percent_lines(
    lines: dict[str, dict[int, float]],
    ticks: Sequence[int],
    tick_labels: Sequence[str] | None = None,
    *,
    xlabel: str,
    ylabel: str,
    title: str,
) -> Figure:
    """One figure, one line of percentages ({x: y}) per run, a marker at each point."""
    fig, axes = _figure(6.5, 3.8)
    ax = axes[0, 0]
    for i, (n, points) in enumerate(lines.items()):
        ax.plot(list(points), list(points.values()), marker="o", color=_color(i), label=n)
    ax.set_xticks(ticks)
    if tick_labels is not None:
        ax.set_xticklabels(tick_labels)
    ax.set_ylim(-3, 105)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(frameon=False, fontsize=8)
    _style(ax)
    return fig


def _rows(run: dict[str, Any]) -> list[dict[str, Any]]:
    return run.get("episodes") or []


# ---------------------------------------------------------------------------- Figure 2


def fig_fr_or(runs: dict[str, Any]) -> Figure:
    """Figure 2: FR against OR-5 and OR-10 per agent (the feasible-optimal gap)."""
    names = list(runs)
    fig, axes = _figure(max(5.5, 1.6 * len(names) + 2), 3.8)
    ax = axes[0, 0]
    _rate_bars(ax, names, [runs[n]["scores"]["overall"] for n in names])
    ax.set_ylabel("% of tasks")
    ax.set_title("Feasibility vs optimality (Fig. 2)")
    return fig


# ---------------------------------------------------------------------------- Figure 3


def fig_or_by_level(runs: dict[str, Any]) -> Figure:
    """Figure 3: OR-5 by task level, one bar per agent within each level."""
    names = list(runs)
    levels = _levels(runs)
    fig, axes = _figure(max(5.5, 1.2 * len(levels) * max(1, len(names) / 2) + 2), 3.8)
    ax = axes[0, 0]
    series = {
        n: [runs[n]["scores"]["by_level"].get(lv, {}).get("OR5", 0.0) for lv in levels]
        for n in names
    }
    _grouped_bars(ax, [LEVEL_NAMES.get(lv, lv) for lv in levels], series,
                  [_color(i) for i in range(len(names))])  # fmt: skip
    _percent_axis(ax, min(len(names), 4))
    ax.set_ylabel("OR-5 (% of tasks)")
    ax.set_title("Optimality by task level (Fig. 3)")
    _style(ax)
    return fig


# ---------------------------------------------------------------------------- Figure 4


def fig_search(runs: dict[str, Any]) -> Figure:
    """Figure 4: violins of Search Effort E and Yield Y per agent; OR-5 by shared E bins."""
    names = list(runs)
    fig, axes = _figure(max(11, 3 * len(names) + 5), 4.0, ncols=3)
    for ax, key, label in ((axes[0, 0], "effort", "Search Effort E"),
                           (axes[0, 1], "yield", "Search Yield Y")):  # fmt: skip
        data = [[r[key] for r in _rows(runs[n])] or [0] for n in names]
        parts = ax.violinplot(data, positions=range(len(names)), showmedians=True, widths=0.8)
        for i, body in enumerate(parts["bodies"]):
            body.set_facecolor(_color(i))
            body.set_alpha(0.55)
        for key_ in ("cmins", "cmaxes", "cbars", "cmedians"):
            parts[key_].set_color("#444444")
            parts[key_].set_linewidth(1)
        _agent_ticks(ax, names)
        ax.set_ylabel(label)
        ax.set_title(label + " per episode")
        _style(ax)
    sources = {s for n in names for s in runs[n]["search"]["yield_source"]}
    if "arguments" in sources:
        axes[0, 1].set_title("Search Yield Y per episode\n(from call arguments: payloads not stored)",
                             fontsize=10)  # fmt: skip
    ax = axes[0, 2]
    pooled = [r["effort"] for n in names for r in _rows(runs[n])]
    edges = quantile_edges(pooled, 4)
    if len(edges) >= 2:
        nb = len(edges) - 1
        width = 0.8 / len(names)
        highest = 1.0
        for i, n in enumerate(names):
            total, top = np.zeros(nb), np.zeros(nb)
            for r in _rows(runs[n]):
                b = bin_index(r["effort"], edges)
                total[b] += 1
                top[b] += r["top5"]
            pos = np.arange(nb) - 0.4 + width * (i + 0.5)
            highest = max(highest, float(total.max()))
            ax.bar(pos, total, width, color=_color(i), alpha=0.3, edgecolor=_color(i))
            ax.bar(pos, top, width, color=_color(i), label=n)
            for p, t, k in zip(pos, total, top, strict=True):
                if t:
                    ax.text(p, t, f"{100 * k / t:.0f}%", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(nb))
        ax.set_xticklabels(
            [
                f"[{edges[b]:.0f}, {edges[b + 1]:.0f}" + (")" if b < nb - 1 else "]")
                for b in range(nb)
            ]
        )
        ax.set_ylim(0, highest * 1.25)
        ax.legend(frameon=False, fontsize=7, loc="upper left", ncols=min(3, len(names)))
    ax.set_xlabel("Search Effort E (quantile bins over all runs)")
    ax.set_ylabel("episodes (dark: OR-5 achieved)")
    ax.set_title("OR-5 by search effort")
    _style(ax)
    fig.suptitle("Information gathering (Fig. 4)")
    return fig


# ---------------------------------------------------------------------------- Figure 7


def fig_revelation(runs: dict[str, Any]) -> Figure:
    """Figure 7: OR-5 as a function of the turn t* at which everything was revealed."""
    labels = [b["bin"] for b in next(iter(runs.values()))["revelation"] if b["bin"] != "never"]
    return _percent_lines(
        {n: _or5_by_revelation_bin(run) for n, run in runs.items()},
        range(len(labels)),
        labels,
        xlabel="user turn t* when all constraints are revealed",
        ylabel="OR-5 (% of episodes)",
        title="Effect of revelation speed (Fig. 7)",
    )


def _or5_by_revelation_bin(run: dict[str, Any]) -> dict[int, float]:
    """OR-5 by the position of each t* bin (never-revealed left out) that holds episodes."""
    bins = [b for b in run["revelation"] if b["bin"] != "never"]
    return {j: b["OR5"] for j, b in enumerate(bins) if b["n"]}


# ---------------------------------------------------------------------------- Figure 8


def fig_level_breakdown(runs: dict[str, Any]) -> Figure:
    """Figure 8: FR and OR-5/OR-10 per agent, one panel per task level."""
    names = list(runs)
    levels = _levels(runs)
    fig, axes = _figure(max(10, 1.3 * len(names) * len(levels) + 2), 3.8, ncols=len(levels),
                        sharey=True)  # fmt: skip
    for j, (ax, lv) in enumerate(zip(axes[0], levels, strict=True)):
        rates = [runs[n]["scores"]["by_level"].get(lv, _NO_RATES) for n in names]
        _rate_bars(ax, names, rates, legend=j == 0)
        counts = {runs[n]["scores"]["by_level"].get(lv, {}).get("n", 0) for n in names}
        ax.set_title(f"{LEVEL_NAMES.get(lv, lv)} (n = {'/'.join(map(str, sorted(counts)))})")
    axes[0, 0].set_ylabel("% of tasks")
    fig.suptitle("Task level breakdown (Fig. 8)")
    return fig


# ---------------------------------------------------------------------------- Figure 9


def fig_efficiency(runs: dict[str, Any]) -> Figure:
    """Figure 9: OR-5 against the mean number of extra turns after t*, one point per agent."""
    fig, axes = _figure(6.0, 4.0)
    ax = axes[0, 0]
    for i, (n, run) in enumerate(runs.items()):
        x = run["efficiency"]["extra_turns"]["mean"]
        y = run["scores"]["overall"]["OR5"]
        if x is None:
            continue
        ax.scatter([x], [y], s=70, color=_color(i), zorder=3)
        ax.annotate(n, (x, y), textcoords="offset points", xytext=(6, 4), fontsize=8)
    ax.set_xlabel("mean extra turns after t* (lower is more efficient)")
    ax.set_ylabel("OR-5 (% of tasks)")
    ax.set_ylim(-3, 108)
    ax.set_xlim(left=0)
    ax.set_title("Conversation efficiency vs OR-5 (Fig. 9)")
    _style(ax)
    ax.grid(axis="x", color="#e5e5e5", linewidth=0.8)
    return fig


# --------------------------------------------------------------------------- Figure 10


def fig_constraints(runs: dict[str, Any]) -> Figure:
    """Figure 10: share of episodes satisfying every constraint, by the task's constraint count."""
    counts = sorted({int(k) for run in runs.values() for k in run["constraints"]["by_count"]})
    return _percent_lines(
        {n: _satisfied_by_count(run, counts) for n, run in runs.items()},
        counts,
        xlabel="number of hard constraints in the task",
        ylabel="all constraints satisfied (%)",
        title="Constraint count analysis (Fig. 10)",
    )


def _satisfied_by_count(run: dict[str, Any], counts: list[int]) -> dict[int, float]:
    """The share satisfying every constraint, by each of ``counts`` the run has tasks with."""
    by = run["constraints"]["by_count"]
    return {c: by[str(c)]["all_satisfied"] for c in counts if str(c) in by}


# --------------------------------------------------------------------------- Figure 11


def fig_turns(runs: dict[str, Any]) -> Figure:
    """Figure 11: distribution of t* per agent (top), box plots of conversation length (bottom)."""
    names = list(runs)
    fig, axes = _figure(max(7, 1.2 * len(names) + 3), 6.5, nrows=2)
    top, bottom = axes[0, 0], axes[1, 0]
    t_values = [[r["t_star"] for r in _rows(runs[n]) if r["t_star"] is not None] for n in names]
    hi = max((max(v) for v in t_values if v), default=0)
    width = 0.8 / len(names)
    for i, (n, values) in enumerate(zip(names, t_values, strict=True)):
        hist = np.bincount(np.asarray(values, dtype=int), minlength=hi + 1) if values else []
        share = 100 * np.asarray(hist, dtype=float) / max(len(values), 1)
        top.bar(np.arange(len(share)) - 0.4 + width * (i + 0.5), share, width, color=_color(i),
                label=n)  # fmt: skip
    top.xaxis.set_major_locator(MaxNLocator(integer=True))
    top.set_xlabel("user turn t* when all constraints are revealed")
    top.set_ylabel("% of episodes")
    top.set_title("When users finish revealing (should match across agents)")
    top.legend(frameon=False, fontsize=8)
    _style(top)
    lengths = [[r["user_turns"] for r in _rows(runs[n])] or [0] for n in names]
    box = bottom.boxplot(lengths, positions=range(len(names)), widths=0.5, patch_artist=True,
                         medianprops={"color": "black"})  # fmt: skip
    for i, patch in enumerate(box["boxes"]):
        patch.set_facecolor(_color(i))
        patch.set_alpha(0.6)
    _agent_ticks(bottom, names)
    bottom.set_ylabel("user turns per conversation")
    bottom.set_title("Conversation length")
    _style(bottom)
    fig.suptitle("Conversation efficiency controls (Fig. 11)")
    return fig
