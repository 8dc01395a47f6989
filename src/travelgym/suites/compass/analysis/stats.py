"""Small statistics for the COMPASS analysis: rates, z-test, bootstrap (the shared one of
:mod:`travelgym.core.bootstrap`), CV, quantile bins.

Pure functions over plain numbers (NumPy only, no SciPy). Rates are percentages (0-100)
rounded to two decimals, as in :func:`travelgym.suites.compass.scoring.summarize` and the paper's tables.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

# the one paired bootstrap, shared with the report's leaderboard
from travelgym.core.bootstrap import DEFAULT_RESAMPLES as DEFAULT_RESAMPLES
from travelgym.core.bootstrap import DEFAULT_SEED as DEFAULT_SEED
from travelgym.core.bootstrap import paired_bootstrap as paired_bootstrap


def pct(count: float, n: int) -> float:
    """``count / n`` as a percentage rounded to two decimals (0.0 when ``n`` is 0)."""
    return round(100 * count / n, 2) if n else 0.0


def rate(flags: Sequence[bool]) -> float:
    """Share of true flags, in percent."""
    return pct(sum(bool(f) for f in flags), len(flags))


def mean_std(values: Sequence[float]) -> dict[str, Any]:
    """Mean and population standard deviation (ddof = 0, as in the paper's Table 5)."""
    if not values:
        return {"n": 0, "mean": None, "std": None}
    arr = np.asarray(values, dtype=float)
    return {
        "n": len(values),
        "mean": round(float(arr.mean()), 4),
        "std": round(float(arr.std()), 4),
    }


def coefficient_of_variation(values: Sequence[float]) -> float | None:
    """CV in percent: population standard deviation / mean x 100 (Table 6); None if mean is 0."""
    if not values:
        return None
    arr = np.asarray(values, dtype=float)
    mean = float(arr.mean())
    if mean == 0:
        return None
    return round(100 * float(arr.std()) / mean, 2)


def distribution(values: Sequence[float]) -> dict[str, Any]:
    """n, mean, std, min, quartiles, max (None entries for an empty list)."""
    if not values:
        return {k: None for k in ("mean", "std", "min", "q1", "median", "q3", "max")} | {"n": 0}
    arr = np.asarray(values, dtype=float)
    q1, med, q3 = (float(x) for x in np.quantile(arr, [0.25, 0.5, 0.75]))
    return {
        "n": int(arr.size),
        "mean": round(float(arr.mean()), 4),
        "std": round(float(arr.std()), 4),
        "min": float(arr.min()),
        "q1": round(q1, 4),
        "median": round(med, 4),
        "q3": round(q3, 4),
        "max": float(arr.max()),
    }


def two_proportion_ztest(x1: int, n1: int, x2: int, n2: int) -> dict[str, Any]:
    """Pooled two-sided two-proportion z-test of p1 = x1/n1 against p2 = x2/n2 (Table 7).

    z = (p1 - p2) / sqrt(p (1 - p) (1/n1 + 1/n2)) with the pooled p = (x1 + x2) / (n1 + n2);
    the two-sided p-value is erfc(|z| / sqrt 2). When a group is empty the test is undefined
    (z and p are None); when the pooled p is 0 or 1 both proportions are equal: z = 0, p = 1.
    """
    if n1 <= 0 or n2 <= 0:
        return {"z": None, "p_value": None}
    p1, p2 = x1 / n1, x2 / n2
    pooled = (x1 + x2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return {"z": 0.0, "p_value": 1.0}
    z = (p1 - p2) / se
    return {"z": round(z, 6), "p_value": round(math.erfc(abs(z) / math.sqrt(2)), 6)}


def quantile_edges(values: Sequence[float], n_bins: int) -> list[float]:
    """Distinct quantile bin edges of ``values`` (at most ``n_bins`` bins)."""
    if not values:
        return []
    qs = np.quantile(np.asarray(values, dtype=float), np.linspace(0, 1, n_bins + 1))
    edges: list[float] = []
    for q in qs:
        q = float(q)
        if not edges or q > edges[-1]:
            edges.append(q)
    if len(edges) == 1:  # every value equal: one bin [v, v]
        edges.append(edges[0])
    return edges


def bin_index(value: float, edges: Sequence[float]) -> int:
    """Index of the bin ``[e_i, e_i+1)`` holding ``value``; the last bin is closed."""
    last = len(edges) - 2
    for i in range(last):
        if value < edges[i + 1]:
            return i
    return max(last, 0)
