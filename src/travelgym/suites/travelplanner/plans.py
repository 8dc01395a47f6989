"""An agent's answer as a TravelPlanner plan, and a plan's score.

An answer is text holding a JSON list of days in the submission format (``days``,
``current_city``, ``transportation``, ``breakfast``, ``attraction``, ``lunch``, ``dinner``,
``accommodation``), optionally inside a Markdown code fence or wrapped as ``{"plan": [...]}``.
:func:`score_plan` evaluates it as TravelPlanner does and flattens the verdicts into the score
dict an episode stores.
"""

from __future__ import annotations

import json
import re
from typing import Any

from travelgym.suites.travelplanner.evaluation import PlanResult, evaluate_plan
from travelgym.suites.travelplanner.evaluation.submission import parse_plan
from travelgym.suites.travelplanner.records import DayPlan, Query
from travelgym.suites.travelplanner.sandbox import Sandbox

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)


def plan_of_answer(text: str | None) -> tuple[list[DayPlan] | None, str | None]:
    """``(days, None)`` for an answer holding a plan; ``(None, why)`` otherwise."""
    if text is None or not text.strip():
        return None, "no answer"
    value = _json_value(text)
    if value is None:
        return None, "the answer holds no JSON list of days"
    if isinstance(value, dict):
        value = value.get("plan")
    return parse_plan(value)


def _json_value(text: str) -> Any:
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        candidate = candidate.strip()
        for opener in ("[", "{"):
            start = candidate.find(opener)
            while start >= 0:
                try:
                    value, _ = json.JSONDecoder().raw_decode(candidate[start:])
                except (ValueError, RecursionError):
                    start = candidate.find(opener, start + 1)
                    continue
                if isinstance(value, list) or (isinstance(value, dict) and "plan" in value):
                    return value
                start = candidate.find(opener, start + 1)
    return None


def plan_json(days: list[DayPlan]) -> str:
    """A plan as the JSON text an answer holds."""
    return json.dumps([d.model_dump() for d in days], ensure_ascii=False)


def flat_score(result: PlanResult) -> dict[str, Any]:
    """A :class:`PlanResult` as the score dict of an episode: ``delivered``, ``level``,
    ``commonsense`` / ``hard`` (id -> True, False or None), ``reasons`` (id -> why it failed),
    ``hard_applicable``, ``commonsense_pass``, ``hard_pass``, ``final`` and ``result`` (the
    whole result, for re-computing TravelPlanner's metrics)."""
    verdicts = {**(result.commonsense or {}), **(result.hard or {})}
    return {
        "delivered": result.delivered,
        "level": result.level,
        "commonsense": {k: v.passed for k, v in (result.commonsense or {}).items()},
        "hard": {k: v.passed for k, v in (result.hard or {}).items()},
        "reasons": {k: v.reason for k, v in verdicts.items() if v.reason},
        "hard_applicable": list(result.hard_applicable),
        "commonsense_pass": result.commonsense_pass,
        "hard_pass": result.hard_pass,
        "final": result.final_pass,
        "note": result.note,
        "result": result.model_dump(mode="json"),
    }


def score_plan(query: Query, answer: str | None, sandbox: Sandbox | None) -> dict[str, Any]:
    """The score dict (:func:`flat_score`) of an answer for ``query`` against ``sandbox``."""
    days, why = plan_of_answer(answer)
    return flat_score(evaluate_plan(query, days, sandbox if days else None, note=why))


def result_of_score(score: dict[str, Any]) -> PlanResult:
    """The :class:`PlanResult` a score dict keeps."""
    return PlanResult.model_validate(score["result"])
