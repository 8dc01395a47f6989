"""A per-run cap on model calls and tokens, shared by every client of a run."""

from __future__ import annotations

import threading
from typing import Any

from travelgym.llm.protocol import LLMError, Usage


class RunBudget:
    """Counts calls and tokens across clients and refuses calls once a cap is reached.

    :meth:`acquire` runs before each (uncached) call and reserves a call slot, so concurrent
    calls can never exceed ``max_calls`` (a call counts once, however many attempts its retries
    take, and whether or not it succeeds); :meth:`record` adds the call's usage afterwards.
    Clients record an estimate where a reply's usage is missing or invalid
    (:mod:`travelgym.llm.usage`), and a negative count is never added, so the token total only
    grows.
    The token cap is checked before a call against the tokens used so far (a call in flight
    may overshoot it). Updates never await, and a lock guards them, so one budget is safe to
    share between coroutines and threads. Cache hits are counted apart (:meth:`record_hit`).
    """

    def __init__(self, max_calls: int | None = None, max_tokens: int | None = None,
                 max_cost: float | None = None,
                 prices: dict[str, dict[str, float]] | None = None) -> None:  # fmt: skip
        self.max_calls = max_calls
        self.max_tokens = max_tokens
        # dollars: each model's calls are charged at its price (input/output per million tokens)
        self.max_cost = max_cost
        self.prices = dict(prices or {})
        self.cost = 0.0
        self.calls = 0
        self.cached_calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._lock = threading.Lock()

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def usage(self) -> Usage:
        return Usage(prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens)

    def acquire(self) -> None:
        """Reserve one call, or raise ``LLMError("budget", ...)`` when a cap is reached."""
        with self._lock:
            if self.max_calls is not None and self.calls >= self.max_calls:
                raise LLMError("budget", f"call budget exhausted ({self.calls}/{self.max_calls})")
            if self.max_tokens is not None and self.total_tokens >= self.max_tokens:
                raise LLMError(
                    "budget", f"token budget exhausted ({self.total_tokens}/{self.max_tokens})"
                )
            if self.max_cost is not None and self.cost >= self.max_cost:
                raise LLMError("budget", f"cost budget exhausted (${self.cost:.4f} of "
                                         f"${self.max_cost:.4f})")  # fmt: skip
            self.calls += 1

    def record(self, usage: Usage, model: str | None = None) -> None:
        """Add a finished call's token usage (negative counts add nothing), charged at
        ``model``'s price when the budget has one."""
        prompt, completion = max(0, usage.prompt_tokens), max(0, usage.completion_tokens)
        price = self.prices.get(model) if model is not None else None
        with self._lock:
            self.prompt_tokens += prompt
            self.completion_tokens += completion
            if price is not None:
                self.cost += (prompt * price["input"] + completion * price["output"]) / 1e6

    def record_hit(self) -> None:
        """Count a cache hit (not charged against the caps)."""
        with self._lock:
            self.cached_calls += 1

    def snapshot(self) -> dict[str, Any]:
        """Totals and caps as a plain dict (for run summaries)."""
        with self._lock:
            return {
                "calls": self.calls,
                "cached_calls": self.cached_calls,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "total_tokens": self.total_tokens,
                "max_calls": self.max_calls,
                "max_tokens": self.max_tokens,
                "cost_usd": round(self.cost, 6),
                "max_cost": self.max_cost,
            }
