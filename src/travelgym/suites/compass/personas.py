"""Which persona the simulated user takes in each conversation (COMPASS Section 3.5, Appendix E).

A persona has four axes: revelation speed (slow / medium / fast, uniform, with the reveal
probability p uniform within the speed's range), trust (trusting 80 %, questioning 20 %),
reliability (reliable / unreliable, 50 / 50) and one of 9 conversation styles (uniform): 3 x 2
x 2 x 9 = 108 persona *types* (the four categorical axes; p is a continuous draw within a type).

A run assigns the persona of each conversation, keyed by (run seed, task id, trial), in one of
three modes (:data:`PERSONA_MODES`):

* ``sampled`` (the default): an independent draw with Appendix E's probabilities from a
  generator seeded by the run seed, the task id and the trial, so ``--seed`` and ``--trials``
  vary the user, and the same triple always gives the same persona;
* ``task``: the persona written in the task file (what every run did before per-conversation
  personas);
* ``balanced``: over the run's (task, trial) pairs, a seeded permutation spreads the 108 types
  evenly: each occurs ``floor(n / 108)`` or ``ceil(n / 108)`` times in a run of ``n``
  conversations (the trust and reliability axes are then 50 / 50, not Appendix E's shares).

Every function here is pure: the same arguments give the same personas, on any machine.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Sequence
from typing import Literal

import numpy as np

from travelgym.suites.compass.tasks import Persona, Task

PersonaMode = Literal["sampled", "task", "balanced"]
PERSONA_MODES: tuple[str, ...] = ("sampled", "task", "balanced")
SPEEDS = {"slow": (0.4, 0.6), "medium": (0.6, 0.8), "fast": (0.8, 1.0)}
TRUSTING_SHARE = 0.8
RELIABLE_SHARE = 0.5
STYLE_IDS = tuple(range(1, 10))
# every persona type (revelation speed, trust, reliability, style), in a fixed order
PERSONA_TYPES: tuple[tuple[str, str, str, int], ...] = tuple(
    itertools.product(SPEEDS, ("trusting", "questioning"), ("reliable", "unreliable"), STYLE_IDS)
)
_SAMPLED, _BALANCED = zlib.crc32(b"persona"), zlib.crc32(b"balanced-personas")


def _pick(rng: np.random.Generator, options, weights=None):
    return options[int(rng.choice(len(options), p=weights))]


def sample_persona(rng: np.random.Generator) -> Persona:
    """The four simulator axes with the probabilities of Appendix E, Table 8."""
    speed = _pick(rng, ["slow", "medium", "fast"])
    lo, hi = SPEEDS[speed]
    return Persona(
        revelation_speed=speed,
        reveal_probability=round(float(rng.uniform(lo, hi)), 3),
        trust="trusting" if rng.random() < TRUSTING_SHARE else "questioning",
        reliability="reliable" if rng.random() < RELIABLE_SHARE else "unreliable",
        style=int(rng.integers(1, 10)),
    )


def persona_type(persona: Persona | dict) -> tuple[str, str, str, int]:
    """The persona's type: (revelation speed, trust, reliability, style)."""
    get = persona.get if isinstance(persona, dict) else lambda k: getattr(persona, k)
    return (get("revelation_speed"), get("trust"), get("reliability"), get("style"))


def _key_rng(seed: int, salt: int, task_id: str, trial: int) -> np.random.Generator:
    if seed < 0 or trial < 0:
        raise ValueError(f"the run seed and the trial must be >= 0 (got {seed}, {trial})")
    return np.random.default_rng([seed, salt, zlib.crc32(task_id.encode()), trial])


def sampled_persona(seed: int, task_id: str, trial: int) -> Persona:
    """The ``sampled`` persona of one conversation: Appendix E's draw from a generator seeded
    by (run seed, task id, trial) alone."""
    return sample_persona(_key_rng(seed, _SAMPLED, task_id, trial))


def balanced_personas(seed: int, keys: Sequence[tuple[str, int]]) -> dict[tuple[str, int], Persona]:
    """The ``balanced`` personas of a run's (task id, trial) pairs: a permutation seeded by the
    run seed deals the 108 types round-robin (in a seeded order of the types), so every type
    occurs ``floor(n / 108)`` or ``ceil(n / 108)`` times; p is drawn uniformly within the
    speed's range from the pair's own generator. The pairs' order does not matter."""
    ordered = sorted(set(keys))
    if len(ordered) != len(keys):
        raise ValueError("balanced personas: the (task, trial) pairs must be distinct")
    rng = np.random.default_rng([seed, _BALANCED, len(ordered)])
    types = rng.permutation(len(PERSONA_TYPES))
    slots = rng.permutation(len(ordered))
    out = {}
    for key, slot in zip(ordered, slots.tolist(), strict=True):
        speed, trust, reliability, style = PERSONA_TYPES[int(types[slot % len(types)])]
        lo, hi = SPEEDS[speed]
        p = _key_rng(seed, _BALANCED, key[0], key[1]).uniform(lo, hi)
        out[key] = Persona(revelation_speed=speed, reveal_probability=round(float(p), 3),
                           trust=trust, reliability=reliability, style=style)  # fmt: skip
    return out


def assign_personas(mode: str, seed: int, tasks: Sequence[Task],
                    trials: int) -> dict[tuple[str, int], Persona]:  # fmt: skip
    """The persona of every conversation (task id, trial) of a run of ``tasks`` x ``trials``
    with run seed ``seed``, in ``mode`` (see the module docstring)."""
    if mode not in PERSONA_MODES:
        raise ValueError(f"unknown persona mode {mode!r} (choose {', '.join(PERSONA_MODES)})")
    if trials < 1:
        raise ValueError(f"trials must be >= 1 (got {trials})")
    keys = [(t.task_id, k) for t in tasks for k in range(trials)]
    if mode == "balanced":
        return balanced_personas(seed, keys)
    if mode == "task":
        by_id = {t.task_id: t for t in tasks}
        return {key: by_id[key[0]].persona for key in keys}
    return {key: sampled_persona(seed, *key) for key in keys}
