"""RQ1's interaction burden in the score summaries: the mean number of clarification turns,
overall and by difficulty, next to DR / C / UPC / Final. Only summaries of RQ1 episodes (the
trajectory withheld, or a clarification dialogue) carry it, so the summaries of ordinary runs
keep their exact shape."""

from __future__ import annotations

from typing import Any

TURNS = "clarification_turns"


def episode_turns(episode: dict[str, Any]) -> int | None:
    """An episode's clarification turns: its dialogue's count, 0 for an RQ1 episode without
    one, ``None`` for an ordinary episode (or a line written before RQ1 existed)."""
    dialogue = episode.get("clarification")
    if isinstance(dialogue, dict):
        turns = dialogue.get("turns")
        return turns if isinstance(turns, int) and not isinstance(turns, bool) else 0
    return 0 if episode.get("trajectory_withheld") else None


def add_turns(summary: dict[str, Any], turns: list[int | None]) -> dict[str, Any]:
    """Add the mean clarification turns to ``summary`` (from ``scoring.summarize``): to
    ``overall``, each ``by_difficulty`` entry and each instance. ``turns`` is aligned with
    ``summary["instances"]``; nothing is added when none of them is an RQ1 episode."""
    if all(t is None for t in turns):
        return summary
    rows = summary["instances"]
    for row, t in zip(rows, turns, strict=True):
        row[TURNS] = t or 0
    summary["overall"][TURNS] = _mean([row[TURNS] for row in rows])
    for level, agg in summary.get("by_difficulty", {}).items():
        agg[TURNS] = _mean([row[TURNS] for row in rows if row["difficulty"] == level])
    return summary


def _mean(values: list[int]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def turns_column(aggregates: list[dict[str, Any]]) -> bool:
    """Whether a table of these aggregates shows the clarification turns column."""
    return any(TURNS in agg for agg in aggregates)
