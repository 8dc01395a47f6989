"""The format-only (warm-up) reward of Behavior2Trip rollouts (``--reward format``).

A small model rarely writes a valid B2T action at first, so every rollout of a GRPO group gets
the same ``R_total`` (``P_action = -1``) and the advantages are zero: nothing is learnt. The
format reward grades each assistant message of the episode:

- 1.0: it holds an action (tool call, memory operation or answer) and no invalid action;
- 0.5: it holds a parsed action, but also an invalid one (a failed call, a malformed block);
- 0.25: it opens an action block (``<tool_call>``, ``<memory>``, ``<answer>``) that does not
  parse;
- 0 otherwise;

and adds ``R_format`` (1 when a delivered plan passes the Format check). The total is the mean
message grade plus ``R_format``, in [0, 2]. It rewards the action syntax only: the plan's
commonsense and personalisation checks count in the full reward (``--reward full``).
"""

from __future__ import annotations

import re
from typing import Any

ACTION_TAG = re.compile(r"<\s*(tool_call|memory|answer|result)\s*>", re.I)
VALID, PARTIAL, TAGGED = 1.0, 0.5, 0.25


def step_grade(step: Any) -> float:
    """The format grade of one recorded :class:`~travelgym.suites.behavior2trip.agents.base.TripStep`."""
    acted = bool(step.tool_calls or step.memory_ops or step.answer)
    if acted and not step.invalid_actions:
        return VALID
    if acted:
        return PARTIAL
    return TAGGED if ACTION_TAG.search(step.text or "") else 0.0


def format_reward(episode: Any, breakdown: dict[str, Any] | None) -> dict[str, float]:
    """``{"total", "grade", "r_format"}`` of a Behavior2Trip episode and its reward breakdown."""
    grades = [step_grade(s) for s in episode.steps]
    grade = sum(grades) / len(grades) if grades else 0.0
    r_format = float((breakdown or {}).get("r_format", 0.0))
    return {"total": grade + r_format, "grade": grade, "r_format": r_format}
