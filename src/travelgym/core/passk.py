"""pass^k and pass@k over repeated trials (tau-bench's definitions), estimated without bias.

For a task run ``n`` times with ``c`` successes, and ``k <= n``:

- pass^k = C(c, k) / C(n, k): the chance that ``k`` trials drawn without replacement all
  succeed (how reliably the agent solves it);
- pass@k = 1 - C(n - c, k) / C(n, k): the chance that at least one of them does.

Both are averaged over the tasks with at least ``k`` trials.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from math import comb
from typing import Any


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k of one task: ``n`` trials, ``c`` of them successes (``1 <= k <= n``)."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k of one task: ``n`` trials, ``c`` of them successes (``1 <= k <= n``)."""
    _check(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def successes_by_task(episodes: Iterable[dict[str, Any]],
                      succeeded: Callable[[dict[str, Any]], bool]) -> dict[str, tuple[int, int]]:  # fmt: skip
    """``task_id -> (trials, successes)`` of ``episodes``."""
    counts: dict[str, tuple[int, int]] = {}
    for episode in episodes:
        n, c = counts.get(episode["task_id"], (0, 0))
        counts[episode["task_id"]] = (n + 1, c + bool(succeeded(episode)))
    return counts


def pass_at_k_table(episodes: Iterable[dict[str, Any]],
                    succeeded: Callable[[dict[str, Any]], bool],
                    trials: int) -> dict[str, dict[str, Any]]:  # fmt: skip
    """For each ``k`` from 1 to ``trials``: pass^k and pass@k in percent, averaged over the
    tasks with at least ``k`` counted trials, and how many tasks that is."""
    counts = successes_by_task(episodes, succeeded)
    table = {}
    for k in range(1, trials + 1):
        tasks = [(n, c) for n, c in counts.values() if n >= k]
        if not tasks:
            table[str(k)] = {"pass^k": None, "pass@k": None, "tasks": 0}
            continue
        hat = sum(pass_hat_k(n, c, k) for n, c in tasks) / len(tasks)
        at = sum(pass_at_k(n, c, k) for n, c in tasks) / len(tasks)
        table[str(k)] = {"pass^k": round(100 * hat, 2), "pass@k": round(100 * at, 2),
                         "tasks": len(tasks)}  # fmt: skip
    return table
