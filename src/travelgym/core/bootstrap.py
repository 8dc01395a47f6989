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
        return _result(0, None, None, resamples, seed, level)
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    chunk = max(1, 2_000_000 // n)  # bound memory: at most ~2M indices at a time
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = d[idx].mean(axis=1)
    return _result(n, float(d.mean()), means, resamples, seed, level)


def _result(n: Any, diff: float | None, means: Any, resamples: int, seed: int,
            level: float) -> dict[str, Any]:  # fmt: skip
    """The keys every bootstrap returns: the percentile interval of the resampled ``means`` at
    ``level`` and the two-sided p-value 2 x min(P(diff <= 0), P(diff >= 0)), capped at 1
    (all ``None`` without ``means``)."""
    low = high = p = None
    if means is not None:
        alpha = (1 - level) / 2
        low, high = (round(float(v), 4) for v in np.quantile(means, [alpha, 1 - alpha]))
        p = round(min(1.0, 2 * min(float((means <= 0).mean()), float((means >= 0).mean()))), 4)
    return {"n": n, "diff": None if diff is None else round(diff, 4), "ci_low": low,
            "ci_high": high, "p_value": p, "resamples": resamples, "seed": seed,
            "level": level}  # fmt: skip


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
        return _result([len(a), len(b)], None, None, resamples, seed, level)
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    means = (x[rng.integers(0, len(x), (resamples, len(x)))].mean(axis=1)
             - y[rng.integers(0, len(y), (resamples, len(y)))].mean(axis=1))  # fmt: skip
    return _result([len(x), len(y)], float(x.mean() - y.mean()), means, resamples, seed, level)
