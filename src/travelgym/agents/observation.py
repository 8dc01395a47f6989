"""The text an agent reads for a tool call's result: the payload as a complete JSON document
within a size budget (never a prefix of one: :func:`~travelgym.toolkit.budget.fit_json`)."""

from __future__ import annotations

from typing import Any

from travelgym.toolkit.budget import fit_json


def observation_json(payload: Any, max_chars: int, hint: str) -> str:
    """``payload`` as JSON (non-ASCII text kept as is) of at most ``max_chars`` characters: as
    it is when it fits, else the leading whole items of its largest list with a note that says
    so and ``hint`` (what the agent can do to see the rest), or an error document naming its
    size when no list can be shortened enough."""
    return fit_json(payload, max_chars, hint, ensure_ascii=False)
