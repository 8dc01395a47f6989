"""Rates over episode feature rows (FR, OR-5/10/20, exact optimum): the building block of every
COMPASS metric (:mod:`travelgym.suites.compass.analysis.metrics`), and G.3's validation of the
final answer measured with them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from travelgym.suites.compass.analysis.features import EpisodeFeatures
from travelgym.suites.compass.analysis.stats import rate

RATE_KEYS = ("FR", "OR5", "OR10", "OR20", "optimal")
FLAG_OF = {"FR": "feasible", "OR5": "top5", "OR10": "top10", "OR20": "top20", "optimal": "optimal"}

Rows = Sequence[EpisodeFeatures]


def rates(rows: Rows) -> dict[str, Any]:
    """``{"n", "FR", "OR5", "OR10", "OR20", "optimal"}`` of feature rows, in percent."""
    return {"n": len(rows), **{k: rate([getattr(r, FLAG_OF[k]) for r in rows]) for k in RATE_KEYS}}


def validation_metrics(rows: Rows) -> dict[str, Any]:
    """G.3's mandatory validation as measured: of the episodes with a final recommendation,
    the share (%) whose every package went through its recommend_* tool, and FR/OR of the
    validated and the unvalidated ones apart."""
    answered = [r for r in rows if r.validated is not None]
    validated = [r for r in answered if r.validated]
    unvalidated = [r for r in answered if not r.validated]

    def subset(part: list[EpisodeFeatures]) -> dict[str, Any]:  # no rate of nothing
        return rates(part) if part else {"n": 0, **dict.fromkeys(RATE_KEYS)}

    share = rate([bool(r.validated) for r in answered]) if answered else None
    return {"n": len(answered), "share_validated": share, "validated": subset(validated),
            "unvalidated": subset(unvalidated)}  # fmt: skip


def grouped(rows: Rows, key: Callable[[EpisodeFeatures], Any]) -> dict[Any, list[EpisodeFeatures]]:
    groups: dict[Any, list[EpisodeFeatures]] = defaultdict(list)
    for r in rows:
        groups[key(r)].append(r)
    return groups
