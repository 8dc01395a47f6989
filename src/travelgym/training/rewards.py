"""Rewards as pure functions of the scores the metrics already compute (never a re-check).

**Behavior2Trip** (paper Section 4.2)::

    R_total = P_action + R_format * (R_C + R_UPC)

- ``P_action`` = -1 when the episode had any invalid action (a malformed action, a tool call or
  memory operation whose response carried an error), else 0; 0 with ``penalty=False``.
- ``R_format`` in {0, 1}: the gate. With ``gate="format"`` (default) it is 1 when a plan was
  delivered and the Format check (``format.json``) passed; with ``gate="delivered"`` when a plan
  could be read at all.
- ``R_C`` = passed / applicable commonsense checks, ``R_UPC`` = passed / applicable
  personalisation checks (both in [0, 1], from :class:`~travelgym.suites.behavior2trip.scoring.InstanceResult`).
  When no check of a group applies (an Easy profile may state no checkable preference), the
  group is vacuously satisfied: 1 for a delivered plan, 0 otherwise. This matches the UPC macro
  metric, where such an answer passes; within a GRPO group (one instance) it is a constant and
  does not change the advantages.

So R_total lies in [-1, 2]; an undeliverable plan gets exactly ``P_action``.

**COMPASS**: 0 for no plan or an infeasible one; a feasible plan gets ``0.5 + 0.5 * q`` where the
quality ``q`` in [0, 1] is, when the score carries the exact rank (``rank_percentile``), 1 for an
optimal plan and ``1 - rank / |X_feas|`` otherwise (the worst feasible plan gets 0.5); without a
rank, the optimality tiers: optimal 1, top 5 % 0.75, top 10 % 0.5, top 20 % 0.25, else 0.
See ``docs/training/rewards.md``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from travelgym.suites.behavior2trip.scoring import InstanceResult
from travelgym.suites.compass.scoring import PlanScore

Gate = Literal["format", "delivered"]
FORMAT_CHECK = "format.json"
INVALID_ACTION_PENALTY = -1.0
FEASIBLE_REWARD = 0.5
# without an exact rank: (flag, quality), best first; "optimal" is PlanScore.optimal
TIER_QUALITY: tuple[tuple[str, float], ...] = (
    ("optimal", 1.0),
    ("5", 0.75),
    ("10", 0.5),
    ("20", 0.25),
)


class RewardBreakdown(BaseModel):
    """The parts of a Behavior2Trip reward: ``total = p_action + r_format * (r_c + r_upc)``."""

    total: float
    p_action: float
    r_format: float
    r_c: float
    r_upc: float
    r_plan: float  # r_format * (r_c + r_upc)
    invalid_actions: int
    delivered: bool
    c_passed: int = 0
    c_applicable: int = 0
    upc_passed: int = 0
    upc_applicable: int = 0
    upc_vacuous: bool = False  # no personalisation check applied
    penalty: bool = True
    gate: Gate = "format"


class CompassReward(BaseModel):
    """A COMPASS reward: ``total = 0`` when infeasible, else ``0.5 + 0.5 * quality``."""

    total: float
    feasible: bool
    quality: float  # in [0, 1]; 0 when infeasible
    basis: Literal["infeasible", "rank", "tiers"]
    optimal: bool = False
    rank: int | None = None
    rank_percentile: float | None = None


def _fraction(passed: int, applicable: int, delivered: bool) -> float:
    if applicable:
        return passed / applicable
    return 1.0 if delivered else 0.0


def b2t_reward(
    result: InstanceResult | dict[str, Any] | None,
    invalid_actions: int = 0,
    *,
    penalty: bool = True,
    gate: Gate = "format",
) -> RewardBreakdown:
    """The Behavior2Trip reward of a scored answer (``None``: nothing delivered, nothing known
    of the checks) and the episode's count of invalid actions; see the module docstring."""
    if gate not in ("format", "delivered"):
        raise ValueError(f"unknown gate {gate!r}: use 'format' or 'delivered'")
    if isinstance(result, dict):
        result = InstanceResult.model_validate(result)
    p_action = INVALID_ACTION_PENALTY if penalty and invalid_actions > 0 else 0.0
    if result is None:
        return RewardBreakdown(total=p_action, p_action=p_action, r_format=0.0, r_c=0.0,
                               r_upc=0.0, r_plan=0.0, invalid_actions=invalid_actions,
                               delivered=False, penalty=penalty, gate=gate)  # fmt: skip
    delivered = result.delivered
    if gate == "format":
        fmt = next((c for c in result.checks if c.id == FORMAT_CHECK), None)
        r_format = 1.0 if delivered and fmt is not None and fmt.passed else 0.0
    else:
        r_format = 1.0 if delivered else 0.0
    r_c = _fraction(result.c_passed, result.c_applicable, delivered)
    r_upc = _fraction(result.upc_passed, result.upc_applicable, delivered)
    r_plan = r_format * (r_c + r_upc)
    return RewardBreakdown(
        total=p_action + r_plan, p_action=p_action, r_format=r_format, r_c=r_c, r_upc=r_upc,
        r_plan=r_plan, invalid_actions=invalid_actions, delivered=delivered,
        c_passed=result.c_passed, c_applicable=result.c_applicable,
        upc_passed=result.upc_passed, upc_applicable=result.upc_applicable,
        upc_vacuous=result.upc_applicable == 0, penalty=penalty, gate=gate,
    )  # fmt: skip


def b2t_episode_reward(
    episode: Any, *, penalty: bool = True, gate: Gate = "format"
) -> RewardBreakdown:
    """:func:`b2t_reward` of a scored :class:`~travelgym.suites.behavior2trip.episode.TripEpisode` (or its
    JSON dict): its ``score`` and ``invalid_actions``. An unscored episode is a ValueError."""
    get = episode.get if isinstance(episode, dict) else lambda k: getattr(episode, k)
    score = get("score")
    if score is None:
        raise ValueError(f"episode {get('episode_id')!r} has no score: score it first")
    return b2t_reward(score, int(get("invalid_actions") or 0), penalty=penalty, gate=gate)


def _tier_quality(score: PlanScore) -> float:
    for flag, quality in TIER_QUALITY:
        if score.optimal if flag == "optimal" else score.top.get(flag, False):
            return quality
    return 0.0


def compass_reward(score: PlanScore | dict[str, Any] | None) -> CompassReward:
    """The COMPASS reward of a :class:`~travelgym.suites.compass.scoring.PlanScore` (``None``: no plan);
    see the module docstring for the shaping."""
    if isinstance(score, dict):
        score = PlanScore.model_validate(score)
    if score is None or not score.feasible:
        return CompassReward(total=0.0, feasible=False, quality=0.0, basis="infeasible")
    if score.rank_percentile is not None:
        basis = "rank"
        quality = 1.0 if score.optimal else max(0.0, 1.0 - score.rank_percentile / 100.0)
    else:
        basis, quality = "tiers", _tier_quality(score)
    return CompassReward(total=FEASIBLE_REWARD + (1.0 - FEASIBLE_REWARD) * quality,
                         feasible=True, quality=quality, basis=basis, optimal=score.optimal,
                         rank=score.rank, rank_percentile=score.rank_percentile)  # fmt: skip


def compass_episode_reward(episode: Any) -> CompassReward:
    """:func:`compass_reward` of a scored COMPASS :class:`~travelgym.suites.compass.trajectory.Episode` (or its
    JSON dict). An unscored episode is a ValueError."""
    get = episode.get if isinstance(episode, dict) else lambda k: getattr(episode, k)
    score = get("score")
    if score is None:
        raise ValueError(f"episode {get('episode_id')!r} has no score: score it first")
    return compass_reward(score)
