"""PNG analogues of the COMPASS paper's database figures (Appendix F.2, Figures 15-17).

Figures are drawn with matplotlib's object API (``Figure`` saved through the Agg canvas), so no
pyplot state or interactive backend is touched: safe in scripts, tests and notebooks alike.
Per-park and per-airport figures come from :func:`travelgym.suites.compass.stats.compute_stats`; only the
raw flight prices and the per-night series are queried here.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from travelgym.db import connect_readonly
from travelgym.report.figures import save_figures
from travelgym.suites.compass.calibration import NIGHTS, WEEKEND_WEEKDAYS
from travelgym.suites.compass.stats import compute_stats

BAR_COLOR = "#2f6f8f"
TYPE_COLORS = {"major": "#2f6f8f", "regional": "#e08a2c"}
PRICE_COLOR = "#b23a48"
AVAIL_COLOR = "#2f6f8f"
WEEKEND_SHADE = "#d9d9d9"


def write_plots(db_path: str | os.PathLike[str], out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``fig15_hotels.png``, ``fig16_flights.png`` and ``fig17_patterns.png``.

    ``out_dir`` is created when missing; returns the written paths in that order.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cal = compute_stats(db_path)["calibration"]
    prices, nightly = _query_series(db_path)
    figures = {
        "fig15_hotels": _fig15_hotels(cal["parks"]),
        "fig16_flights": _fig16_flights(prices, cal["destination_airports"]),
        "fig17_patterns": _fig17_patterns(nightly, cal["parks"]),
    }
    return save_figures(figures, out)


def _query_series(db_path: str | os.PathLike[str]) -> tuple[np.ndarray, list[tuple]]:
    """All daily flight prices, and (night, mean price, mean availability) per night."""
    conn = connect_readonly(db_path)
    try:
        prices = np.array([r[0] for r in conn.execute("SELECT price FROM flight_prices")], float)
        nightly = [
            (dt.date.fromisoformat(r[0]), r[1], r[2])
            for r in conn.execute(
                "SELECT night, AVG(price), AVG(available) FROM offers GROUP BY night ORDER BY night"
            )
        ]
    finally:
        conn.close()
    return prices, nightly


def short_park_name(name: str) -> str:
    """'Rocky Mountain National Park' -> 'Rocky Mountain'."""
    return name.removesuffix(" National Park")


# ------------------------------------------------------------------------------- Figure 15


def _fig15_hotels(parks: dict[str, dict[str, Any]]) -> Figure:
    """2x2 per-park bars: hotel count, mean nightly price, mean review score, mean distance."""
    ids = sorted(parks, key=lambda p: parks[p]["name"])
    labels = [short_park_name(parks[p]["name"]) for p in ids]
    panels = [
        ("hotels", "Hotels per park", "Number of hotels", "{:.0f}"),
        ("mean_nightly_price", "Average daily room price", "USD per room-night", "${:.0f}"),
        ("mean_review_score", "Average review score", "Guest rating (1-10)", "{:.2f}"),
        ("mean_distance_km", "Average distance to the park", "Driving distance (km)", "{:.0f}"),
    ]
    fig = Figure(figsize=(13, 11), layout="constrained")
    axes = fig.subplots(2, 2, sharey=True)
    for ax, (key, title, xlabel, fmt) in zip(axes.flat, panels, strict=True):
        values = [parks[p][key] or 0.0 for p in ids]
        _hbar(ax, labels, values, fmt)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
    axes[1, 0].set_xlim(0, 10)
    fig.suptitle("Figure 15 analogue: hotel database overview (August 2025)", fontsize=14)
    return fig


def _hbar(ax: Axes, labels: list[str], values: list[float], fmt: str) -> None:
    """Horizontal bars, first label at the top, each bar labelled with its value."""
    y = np.arange(len(labels))
    bars = ax.barh(y, values, color=BAR_COLOR)
    ax.set_yticks(y, labels)
    if not ax.yaxis_inverted():  # shared y axes: invert once
        ax.invert_yaxis()
    ax.bar_label(bars, labels=[fmt.format(v) for v in values], padding=2, fontsize=8)
    ax.margins(x=0.15)
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)


# ------------------------------------------------------------------------------- Figure 16


def _fig16_flights(prices: np.ndarray, airports: dict[str, dict[str, Any]]) -> Figure:
    """Left: flight price histogram (long tail); right: inbound flights per park airport."""
    fig = Figure(figsize=(14, 5.5), layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=[1, 1.3])
    _price_histogram(left, prices)
    _airport_bars(right, airports)
    fig.suptitle("Figure 16 analogue: flight database overview", fontsize=14)
    return fig


def _price_histogram(ax: Axes, prices: np.ndarray) -> None:
    if prices.size:
        ax.hist(prices, bins=80, color=BAR_COLOR, edgecolor="white", linewidth=0.3)
        for q, style in ((50, "-"), (95, "--"), (99, ":")):
            value = float(np.percentile(prices, q))
            ax.axvline(value, color=PRICE_COLOR, linestyle=style, label=f"p{q} = ${value:,.0f}")
        ax.legend(title=f"{prices.size:,} daily leg prices, all classes")
    ax.set_title("Distribution of flight prices")
    ax.set_xlabel("Price per passenger, one leg (USD)")
    ax.set_ylabel("Number of daily price offers")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


def _airport_bars(ax: Axes, airports: dict[str, dict[str, Any]]) -> None:
    codes = sorted(airports, key=lambda c: (-airports[c]["inbound_flights"], c))
    counts = [airports[c]["inbound_flights"] for c in codes]
    colors = [TYPE_COLORS[airports[c]["airport_type"]] for c in codes]
    x = np.arange(len(codes))
    ax.bar(x, counts, color=colors)
    ax.set_xticks(x, codes, rotation=90)
    ax.legend(handles=[Patch(color=c, label=f"{k} airport") for k, c in TYPE_COLORS.items()])
    ax.set_title("Flights per destination airport")
    ax.set_xlabel("Park airport (IATA)")
    ax.set_ylabel("Inbound flights from the 10 departure cities")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


# ------------------------------------------------------------------------------- Figure 17


def _fig17_patterns(nightly: list[tuple], parks: dict[str, dict[str, Any]]) -> Figure:
    """Left: mean price and availability per night, weekends shaded; right: 4-star+ share."""
    fig = Figure(figsize=(14, 5.5), layout="constrained")
    left, right = fig.subplots(1, 2)
    _price_availability(left, nightly)
    _luxury_share(right, parks)
    fig.suptitle("Figure 17 analogue: real-world patterns in the hotel database", fontsize=14)
    return fig


def _price_availability(ax: Axes, nightly: list[tuple]) -> None:
    for night in NIGHTS:
        if night.weekday() in WEEKEND_WEEKDAYS:
            ax.axvspan(night.day - 0.5, night.day + 0.5, color=WEEKEND_SHADE, lw=0)
    days = [n.day for n, _, _ in nightly]
    ax.plot(days, [p for _, p, _ in nightly], "o-", color=PRICE_COLOR, ms=4, label="Mean price")
    ax.set_xlabel("Night of August 2025 (shaded: Fri-Sun)")
    ax.set_ylabel("Mean nightly price (USD)", color=PRICE_COLOR)
    ax.tick_params(axis="y", labelcolor=PRICE_COLOR)
    ax.set_ylim(0, max((p for _, p, _ in nightly), default=1.0) * 1.1)
    ax.set_xlim(0.5, len(NIGHTS) + 0.5)
    ax.set_xticks(range(1, len(NIGHTS) + 1, 2))
    twin = ax.twinx()
    twin.plot(
        days, [a for _, _, a in nightly], "s--", color=AVAIL_COLOR, ms=4, label="Mean availability"
    )
    twin.set_ylabel("Mean rooms available per offer", color=AVAIL_COLOR)
    twin.tick_params(axis="y", labelcolor=AVAIL_COLOR)
    twin.set_ylim(0, max((a for _, _, a in nightly), default=1.0) * 1.6)
    lines = ax.get_lines() + twin.get_lines()
    ax.legend(lines, [ln.get_label() for ln in lines], loc="lower center", ncol=2)
    ax.set_title("Daily price vs. room availability")


def _luxury_share(ax: Axes, parks: dict[str, dict[str, Any]]) -> None:
    ids = sorted(parks, key=lambda p: (-(parks[p]["share_4_star_plus"] or 0.0), parks[p]["name"]))
    labels = [short_park_name(parks[p]["name"]) for p in ids]
    values = [100 * (parks[p]["share_4_star_plus"] or 0.0) for p in ids]
    _hbar(ax, labels, values, "{:.0f}%")
    ax.set_xlim(0, 100)
    ax.set_title("Share of 4-star-and-above hotels per park")
    ax.set_xlabel("Hotels rated 4 stars or more (%)")
