"""The paired bootstrap every comparison of runs uses (``analyze``'s comparisons, persona
effects and the report's leaderboard): one definition, seeded explicitly, so the same inputs
give the same interval everywhere."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> dict[str, Any]:
    """Bootstrap CI of mean(a) - mean(b) over paired units (tasks), in the units of a and b.

    Units are resampled with replacement ``resamples`` times with ``np.random.default_rng(seed)``;
    the CI is the percentile interval. ``p_value`` is the two-sided bootstrap p-value
    2 x min(P(diff <= 0), P(diff >= 0)), capped at 1.
    """
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    n = len(a)
    if n == 0:
        return {"n": 0, "diff": None, "ci_low": None, "ci_high": None, "p_value": None,
                "resamples": resamples, "seed": seed, "level": level}  # fmt: skip
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    chunk = max(1, 2_000_000 // n)  # bound memory: at most ~2M indices at a time
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = d[idx].mean(axis=1)
    alpha = (1 - level) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    p = min(1.0, 2 * min(float((means <= 0).mean()), float((means >= 0).mean())))
    return {
        "n": n,
        "diff": round(float(d.mean()), 4),
        "ci_low": round(float(low), 4),
        "ci_high": round(float(high), 4),
        "p_value": round(p, 4),
        "resamples": resamples,
        "seed": seed,
        "level": level,
    }


def unpaired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> dict[str, Any]:
    """Bootstrap CI of mean(a) - mean(b) when the units of ``a`` and ``b`` are not paired (runs
    of different task sets): each sample resampled on its own, ``resamples`` times with
    ``np.random.default_rng(seed)``; the same keys as :func:`paired_bootstrap` (``n`` is
    ``[len(a), len(b)]``)."""
    if not len(a) or not len(b):
        return {"n": [len(a), len(b)], "diff": None, "ci_low": None, "ci_high": None,
                "p_value": None, "resamples": resamples, "seed": seed, "level": level}  # fmt: skip
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    means = (x[rng.integers(0, len(x), (resamples, len(x)))].mean(axis=1)
             - y[rng.integers(0, len(y), (resamples, len(y)))].mean(axis=1))  # fmt: skip
    alpha = (1 - level) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    p = min(1.0, 2 * min(float((means <= 0).mean()), float((means >= 0).mean())))
    return {"n": [len(x), len(y)], "diff": round(float(x.mean() - y.mean()), 4),
            "ci_low": round(float(low), 4), "ci_high": round(float(high), 4),
            "p_value": round(p, 4), "resamples": resamples, "seed": seed, "level": level}  # fmt: skip
