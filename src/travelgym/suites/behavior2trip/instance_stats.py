"""Table 2 statistics of the Behavior2Trip instances: the per-instance measures, their
per-difficulty means next to the paper's values, and the statistics of the files on disk."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from travelgym.suites.behavior2trip.behaviour import poi_of
from travelgym.suites.behavior2trip.preferences import poi_matches
from travelgym.suites.behavior2trip.profiles import DIFFICULTIES

if TYPE_CHECKING:
    from travelgym.suites.behavior2trip.instance_model import Instance

# Table 2 of the paper: (train, test) values for Easy, Medium, Hard
PAPER_TABLE2: dict[str, dict[str, tuple[float, float, float]]] = {
    "train": {"samples": (3000, 3000, 3000), "actions": (14.5, 38.2, 66.7),
              "preferences": (1.0, 2.4, 4.0), "pois": (10.3, 27.2, 47.8),
              "days": (4.9, 4.9, 5.0), "companions": (2.2, 2.1, 2.3)},
    "test": {"samples": (800, 800, 800), "actions": (14.2, 37.6, 67.2),
             "preferences": (1.0, 2.3, 4.0), "pois": (10.1, 26.9, 48.0),
             "days": (4.9, 4.9, 5.0), "companions": (2.2, 2.2, 2.2)},
}  # fmt: skip


MEASURES = ("samples", "actions", "preferences", "pois", "days", "companions")


def measures(x: Instance) -> dict[str, float]:
    return {
        "samples": 1,
        "actions": len(x.trajectory),
        "preferences": len(x.profile.categories),
        "pois": x.n_pois,
        "days": x.instruction.days,
        "companions": x.instruction.companions,
        "noise_clicks": noise_clicks(x),
        "sessions": x.trajectory[-1].session,
        "bookings": sum(a.action_type == "book" for a in x.trajectory),
    }


def table2(sums: dict[str, dict[str, float]], split: str) -> dict[str, Any]:
    """Per-difficulty means from summed measures, Table 2's next to the paper's values."""
    out: dict[str, Any] = {}
    for i, diff in enumerate(DIFFICULTIES):
        total = sums.get(diff)
        if not total:
            continue
        n = total["samples"]
        entry: dict[str, Any] = {}
        for key, value in total.items():
            mean = n if key == "samples" else value / n
            if key in MEASURES:
                paper = PAPER_TABLE2[split][key][i]
                entry[key] = {"measured": round(mean, 2), "paper": paper,
                              "rel_diff": round((mean - paper) / paper, 3)}  # fmt: skip
            else:
                entry[key] = round(mean, 2)
        out[diff] = entry
    return out


def split_stats(instances: Sequence[Instance], split: str) -> dict[str, Any]:
    """Per-difficulty means of Table 2's measures for ``instances``, next to the paper's values."""
    sums: dict[str, dict[str, float]] = {}
    for x in instances:
        into = sums.setdefault(x.difficulty, {})
        for key, value in measures(x).items():
            into[key] = into.get(key, 0) + value
    return table2(sums, split)


def noise_clicks(instance: Instance) -> int:
    """Clicks on POIs that go against the hidden preferences."""
    prefs = instance.profile.preferences
    return sum(not poi_matches(prefs, poi_of(a)) for a in instance.trajectory)
