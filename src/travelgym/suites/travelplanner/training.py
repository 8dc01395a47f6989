"""TravelPlanner's rewards and the training helpers the Suite protocol asks for.

The reward of a scored plan is built from its constraint verdicts:

- 0 for an undelivered plan;
- else 0.5 × (commonsense constraints passed / 8)
  + 0.3 × (hard constraints passed / the hard constraints the query sets; 0 where the hard
  constraints were not checked because Complete Information or Within Sandbox failed)
  + 0.2 × final pass (every constraint met).

So it is 1 exactly for a plan that passes TravelPlanner's final pass rate, and it grows with each
constraint passed on the way there.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

W_COMMONSENSE, W_HARD, W_FINAL = 0.5, 0.3, 0.2


class PlannerReward(BaseModel):
    """A reward and its parts (each share in [0, 1])."""

    delivered: bool
    commonsense: float = 0.0
    hard: float = 0.0
    final: bool = False
    total: float = 0.0


def planner_reward(score: dict[str, Any] | None) -> PlannerReward:
    """The reward of an episode's score dict (``None``/undelivered: 0)."""
    if not score or not score.get("delivered"):
        return PlannerReward(delivered=False)
    commonsense = score.get("commonsense") or {}
    cs = sum(v is True for v in commonsense.values()) / max(1, len(commonsense))
    applicable = score.get("hard_applicable") or []
    hard_verdicts = score.get("hard") or {}
    hard = sum(hard_verdicts.get(k) is True for k in applicable) / max(1, len(applicable))
    final = bool(score.get("final"))
    total = W_COMMONSENSE * cs + W_HARD * hard + W_FINAL * final
    return PlannerReward(delivered=True, commonsense=round(cs, 6), hard=round(hard, 6),
                         final=final, total=round(total, 6))  # fmt: skip


def _score_of(episode: Any) -> dict[str, Any] | None:
    return episode.get("score") if isinstance(episode, dict) else getattr(episode, "score", None)


def episode_reward(episode: Any) -> PlannerReward:
    """The reward of a scored episode (its model or JSON dict); unscored is a ValueError."""
    score = _score_of(episode)
    if score is None:
        raise ValueError("the episode is not scored")
    return planner_reward(score)


def format_reward(episode: Any) -> float:
    """The warm-up reward: 1 for a delivered plan, else 0."""
    score = _score_of(episode)
    return 1.0 if score and score.get("delivered") else 0.0


def sft_keep(episode: dict[str, Any], min_score: float) -> str | None:
    """Why an episode is left out of an SFT export (``None``: kept): undelivered, or a
    constraint pass share below ``min_score`` (1: the plan passes every constraint)."""
    score = episode.get("score") or {}
    if not score.get("delivered"):
        return "undelivered"
    verdicts = [*(score.get("commonsense") or {}).values(),
                *((score.get("hard") or {}).get(k) for k in score.get("hard_applicable") or [])]  # fmt: skip
    share = sum(v is True for v in verdicts) / max(1, len(verdicts))
    return None if share >= min_score else "below_min_score"
