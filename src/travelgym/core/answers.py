"""Checks every suite's answer scoring shares."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError

#: :meth:`~travelgym.core.suite.Suite.answer_from_turns` of an episode whose turns do not
#: record its answers (written before they did)
NOT_RECORDED: Any = type("NotRecorded", (), {"__repr__": lambda self: "NOT_RECORDED"})()


def is_trial_number(value: object) -> bool:
    """Whether ``value`` is a valid trial index (an int >= 0; a bool is no trial)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def left_out_all(answers: Path) -> bool:
    """Whether ANSWERS is a run directory with episodes, all of them left out of scoring (infra
    errors): nothing to score, and no mistake."""
    episodes = Path(answers) / "episodes.jsonl"
    return Path(answers).is_dir() and episodes.is_file() and episodes.stat().st_size > 0


def refuse_nothing_known(answers: Path, entries: list[dict], known: set[str], key: str) -> None:
    """A :class:`UserError` when ANSWERS scores nothing: no entries, or none naming a known
    task (``key``: the entries' task field, e.g. ``task_id``). A run directory whose episodes
    all ended in infrastructure errors has no entries to score and is no mistake: its
    summary counts them."""
    if not entries and left_out_all(answers):
        return
    if not entries:
        raise UserError(f"{answers}: no answers in it")
    unknown = [e[key] for e in entries if e[key] not in known]
    if len(unknown) == len(entries):
        shown = ", ".join(map(repr, dict.fromkeys(unknown[:5])))
        raise UserError(f"{answers}: none of its {len(entries)} answer(s) names a "
                        f"known {key.replace('_', ' ')} (e.g. {shown})")  # fmt: skip


def delivered_answer(episode: dict[str, Any]) -> Any:
    """The final answer of an answer-once episode line (Behavior2Trip, TravelPlanner) as its
    steps give it: what its last step delivered (``delivered``), ``None`` when that step
    delivered nothing, :data:`NOT_RECORDED` for steps written before they kept it."""
    steps = episode.get("steps")
    if not isinstance(steps, list) or not steps or not isinstance(steps[-1], dict):
        return None
    last = steps[-1]
    if not last.get("answer"):
        return None
    return last.get("delivered", NOT_RECORDED)
