"""The ``--noise`` level of Behavior2Trip instances (docs/behavior2trip/instances.md, "Harder
behaviour: --noise"): 0, the default, is the paper's Figure 9 behaviour; a level ``p`` in
(0, 1] sends a share of the favourites to off-profile POIs and adds drifting sessions
(:mod:`.behaviour`), relaxes the Figure 9 rules by ``p`` (:mod:`.behaviour_rules`) and judges
the quality control's clarity against ``p`` (:mod:`.quality`). Noisy instances live in files
and a slot store of their own, named by the level (:func:`noise_tag`)."""

from __future__ import annotations

import math

DECIMALS = 2  # a level has at most two decimals: one file name per level


def check_noise(value: object) -> float:
    """``value`` as a noise level: a number in [0, 1] with at most :data:`DECIMALS` decimals;
    raises ValueError with a one-line message otherwise."""
    try:
        level = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"noise must be a number between 0 and 1, not {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(level) or not 0.0 <= level <= 1.0:
        raise ValueError(f"noise must be a number between 0 and 1, not {value!r}")
    if round(level, DECIMALS) != level:
        raise ValueError(f"noise takes at most {DECIMALS} decimals (0.3, 0.05), not {value!r}")
    return level + 0.0  # -0.0 is 0


def noise_tag(level: float) -> str:
    """The level as file names carry it: ``0.3`` -> ``"noise0.3"``, ``1`` -> ``"noise1"``;
    ``""`` at 0 (the default files keep their names)."""
    level = check_noise(level)
    if not level:
        return ""
    return "noise" + f"{level:.{DECIMALS}f}".rstrip("0").rstrip(".")
