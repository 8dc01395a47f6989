"""Token usage of a run's episodes, the agent's and the simulated user's apart, and its cost
where the run was priced (:mod:`travelgym.core.pricing`): never a made-up price."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

ROLES = ("agent", "user")
_FIELDS = {"agent": "usage", "user": "user_usage"}


def _tokens(usage: Any) -> tuple[int, int]:
    if not isinstance(usage, dict):
        return 0, 0
    values = (usage.get("prompt_tokens"), usage.get("completion_tokens"))
    return tuple(v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0
                 for v in values)  # type: ignore[return-value]  # fmt: skip


def usage_totals(episodes: Iterable[dict[str, Any]],
                 pricing: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """Input and output tokens of every episode (all of them: an infra error's calls were spent
    too) by role, and ``cost_usd`` by role and in all for the roles ``pricing`` prices (the
    manifest's record: role -> ``{"model", "input", "output"}``, dollars per million tokens);
    ``None`` where no price is known."""
    totals = {role: [0, 0] for role in ROLES}
    for episode in episodes:
        for role in ROLES:
            prompt, completion = _tokens(episode.get(_FIELDS[role]))
            totals[role][0] += prompt
            totals[role][1] += completion
    out: dict[str, Any] = {role: {"input_tokens": p, "output_tokens": c}
                           for role, (p, c) in totals.items()}  # fmt: skip
    costs = {}
    for role, price in (pricing or {}).items():
        if role in totals and isinstance(price, dict):
            costs[role] = cost_usd(*totals[role], price)
    out["cost_usd"] = {**costs, "total": round(sum(costs.values()), 6)} if costs else None
    return out


def cost_usd(input_tokens: int, output_tokens: int, price: dict[str, Any]) -> float:
    """Dollars of ``input_tokens`` and ``output_tokens`` at ``price`` (``input`` and ``output``
    in dollars per million tokens)."""
    return round((input_tokens * price["input"] + output_tokens * price["output"]) / 1e6, 6)
