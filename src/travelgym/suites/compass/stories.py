"""Short backstories for tasks: who travels, why, and what they care about."""

from __future__ import annotations

import numpy as np

NAMES = (
    "Maya", "Daniel", "Priya", "Tom", "Aisha", "Lucas", "Elena", "Marcus", "Grace", "Kenji",
    "Sofia", "Omar", "Hannah", "Diego", "Chloe", "Samuel", "Nadia", "Ethan", "Ruth", "Victor",
)  # fmt: skip
PARTIES = {
    1: ("alone",),
    2: ("with a partner", "with a friend", "with an old college roommate"),
    3: ("with two friends", "with a partner and a teenager", "with two siblings"),
    4: ("with family", "with three friends", "with a partner and two kids"),
    5: ("with a group of friends", "with extended family"),
    6: ("with a hiking club", "with two other families"),
}
MOTIVES = (
    "to celebrate an anniversary", "to finally see the park after years of planning",
    "for a long-awaited hiking trip", "to take photographs of the landscapes",
    "for a quiet break from work", "to celebrate a birthday", "to hike the best trails",
    "for a reunion", "to watch the night sky", "to tick another park off the list",
)  # fmt: skip


def write_story(
    rng: np.random.Generator, park_name: str, travellers: int, constraints: list
) -> str:
    """A two-sentence story consistent with the task's party size and park."""
    name = NAMES[int(rng.integers(len(NAMES)))]
    parties = PARTIES[min(travellers, 6)]
    party = parties[int(rng.integers(len(parties)))]
    motive = MOTIVES[int(rng.integers(len(MOTIVES)))]
    budget = next((c for c in constraints if c.kind == "budget"), None)
    care = "keeping an eye on the total cost" if budget else "getting it right"
    return (
        f"{name} is planning a trip to {park_name} {party} {motive}. "
        f"They want the booking sorted in one conversation and care about {care}."
    )
