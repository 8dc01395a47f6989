"""Rewards as pure functions of the scores the metrics already compute (never a re-check).

Each suite defines its reward (:meth:`~travelgym.core.suite.Suite.reward`): Behavior2Trip's
``R_total = P_action + R_format * (R_C + R_UPC)`` (paper Section 4.2) in
:mod:`travelgym.suites.behavior2trip.training`, COMPASS's ``0.5 + 0.5 * quality`` of a feasible
plan in :mod:`travelgym.suites.compass.training`. The training environments, the rollouts and
the SFT filter use them; this module finds the right one for an episode. See
``docs/training/rewards.md``.
"""

from __future__ import annotations

from typing import Any

from travelgym.core.registry import get_suite


def episode_reward(episode: Any, suite: str | None = None, **kwargs: Any) -> Any:
    """The reward of a scored episode (an episode model or its JSON dict) by its suite's
    reward (``suite``: default the episode's own ``suite`` field); ``kwargs`` go to the suite's
    reward (e.g. ``penalty``, ``gate``). Its ``total`` is the scalar reward; an unscored
    episode is a ValueError."""
    if suite is None:
        suite = episode.get("suite") if isinstance(episode, dict) else episode.suite
    return get_suite(suite).reward(episode, **kwargs)
