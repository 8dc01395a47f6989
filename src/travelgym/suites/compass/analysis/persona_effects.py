"""Persona effects measured within tasks, so that a user-type effect is not a task effect.

The paper's Tables 6 and 7 pool every conversation of a persona group. When personas are
fixed per task (or simply unevenly spread over tasks) such pooled figures mix the effect of
the user with the difficulty of the tasks that user happened to get: an agent that ignores the
persona altogether can show a "significant" trust effect. The analyses here compare
conversations of the *same task* only:

* a two-level axis (trust, reliability): on every task with conversations of both levels, the
  difference of the outcome's mean between them (percentage points); the effect is the mean of
  these per-task differences, with a percentile bootstrap CI over tasks;
* a many-level axis (style, revelation speed): each conversation's outcome minus its task's
  mean, averaged per level; the *spread* is the population SD of these level means (pp), and
  the within-task CV is that spread over the mean outcome (%). Even without any effect the
  spread of finite groups is above zero, so its chance level comes from permuting the labels
  within each task (seeded); the effect is the spread beyond chance, ``observed - median of
  the null``, and its 95 % interval ``[observed - null 97.5 %, observed - null 2.5 %]`` holds
  zero exactly when the permutation test does not reject at 5 %.

Only tasks with conversations of at least two levels of the axis are informative. With fewer
than :data:`MIN_INFORMATIVE_TASKS` of them the analysis says ``"too small to say"`` and gives
no number. Rates are percentages, every random draw comes from ``seed``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from travelgym.suites.compass.analysis.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    paired_bootstrap,
)

MIN_INFORMATIVE_TASKS = 10
TOO_SMALL = "too small to say"
LEVEL = 0.95
OUTCOME_FLAG = {"OR5": "top5", "FR": "feasible", "OR10": "top10", "OR20": "top20"}
BINARY_AXES = {"trust": ("questioning", "trusting"), "reliability": ("unreliable", "reliable")}
MANY_LEVEL_AXES = ("style", "revelation_speed")


def _by_task(rows: Sequence[Any], axis: str, flag: str) -> dict[str, list[tuple[Any, float]]]:
    """task id -> [(axis value, outcome in percent)] of the rows with a known axis value."""
    out: dict[str, list[tuple[Any, float]]] = defaultdict(list)
    for r in rows:
        value = getattr(r, axis)
        if value is not None:
            out[r.task_id].append((value, 100.0 * bool(getattr(r, flag))))
    return out


def _too_small(base: dict[str, Any], what: str, min_tasks: int) -> dict[str, Any]:
    k = base["informative_tasks"]
    return {**base, "verdict": TOO_SMALL,
            "reason": f"{k} task(s) with {what}, need {min_tasks}"}  # fmt: skip


def binary_effect(rows: Sequence[Any], axis: str, levels: tuple[str, str], *,
                  outcome: str = "OR5", resamples: int = DEFAULT_RESAMPLES,
                  seed: int = DEFAULT_SEED,
                  min_tasks: int = MIN_INFORMATIVE_TASKS) -> dict[str, Any]:  # fmt: skip
    """``levels[0]`` minus ``levels[1]`` on ``axis``, within task: the mean over tasks having
    both of the per-task difference of mean ``outcome`` (pp), with a 95 % bootstrap CI over
    those tasks (``np.random.default_rng(seed)``, ``resamples`` draws)."""
    a, b = levels
    diffs, counts = [], {a: 0, b: 0}
    for members in _by_task(rows, axis, OUTCOME_FLAG[outcome]).values():
        ya = [y for v, y in members if v == a]
        yb = [y for v, y in members if v == b]
        if ya and yb:
            diffs.append(sum(ya) / len(ya) - sum(yb) / len(yb))
            counts[a] += len(ya)
            counts[b] += len(yb)
    base: dict[str, Any] = {"axis": axis, "contrast": f"{a} - {b}", "outcome": outcome,
                            "informative_tasks": len(diffs), "min_tasks": min_tasks,
                            "conversations": counts, "effect": None, "ci_low": None,
                            "ci_high": None, "p_value": None, "level": LEVEL}  # fmt: skip
    if len(diffs) < min_tasks:
        return _too_small(base, f"both {a} and {b} conversations", min_tasks)
    boot = paired_bootstrap(diffs, [0.0] * len(diffs), resamples, seed, LEVEL)
    low, high = boot["ci_low"], boot["ci_high"]
    if low <= 0 <= high:
        verdict = "no effect detected"
    else:
        verdict = f"{a} {'higher' if low > 0 else 'lower'} than {b}"
    return {**base, "effect": boot["diff"], "ci_low": low, "ci_high": high,
            "p_value": boot["p_value"], "resamples": resamples, "seed": seed,
            "verdict": verdict}  # fmt: skip


def _level_means(residuals: np.ndarray, codes: np.ndarray, n_levels: int) -> np.ndarray:
    """Mean residual per level code (rows of ``codes``: one labelling each)."""
    sums = np.stack([(residuals * (codes == k)).sum(axis=-1) for k in range(n_levels)], axis=-1)
    counts = np.stack([(codes == k).sum(axis=-1) for k in range(n_levels)], axis=-1)
    return sums / counts


def within_task_permutations(groups: np.ndarray, codes: np.ndarray, count: int,
                             rng: np.random.Generator) -> np.ndarray:  # fmt: skip
    """``count`` relabellings of ``codes`` (one per row of the result), each a uniformly random
    permutation of the labels within every group of ``groups`` (non-negative integers)."""
    order = np.argsort(groups, kind="stable")
    sorted_codes = codes[order]
    keys = groups[None, :] * 2.0 + rng.random((count, len(groups)))
    shuffled = np.argsort(keys, axis=1, kind="stable")  # grouped, random order within groups
    out = np.empty((count, len(groups)), dtype=codes.dtype)
    out[np.arange(count)[:, None], shuffled] = sorted_codes[None, :]
    return out


def many_level_effect(rows: Sequence[Any], axis: str, *, outcome: str = "OR5",
                      resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                      min_tasks: int = MIN_INFORMATIVE_TASKS) -> dict[str, Any]:  # fmt: skip
    """The within-task spread of ``outcome`` across the levels of ``axis`` (pp), its CV (%),
    their chance levels from ``resamples`` within-task permutations of the labels
    (``np.random.default_rng(seed)``), and the spread beyond chance with its 95 % interval."""
    tasks = {t: m for t, m in _by_task(rows, axis, OUTCOME_FLAG[outcome]).items()
             if len({v for v, _ in m}) > 1}  # fmt: skip
    base: dict[str, Any] = {"axis": axis, "outcome": outcome, "informative_tasks": len(tasks),
                            "min_tasks": min_tasks, "by_level": {}, "spread": None,
                            "chance_spread": None, "effect": None, "ci_low": None,
                            "ci_high": None, "p_value": None, "cv": None, "chance_cv": None,
                            "level": LEVEL}  # fmt: skip
    if len(tasks) < min_tasks:
        return _too_small(base, f"conversations of two or more {axis} levels", min_tasks)
    levels = sorted({v for m in tasks.values() for v, _ in m}, key=str)
    code_of = {v: i for i, v in enumerate(levels)}
    groups, codes, ys, res = [], [], [], []
    for g, members in enumerate(tasks.values()):
        mean = sum(y for _, y in members) / len(members)
        for v, y in members:
            groups.append(g)
            codes.append(code_of[v])
            ys.append(y)
            res.append(y - mean)
    g_arr, c_arr, r_arr = np.asarray(groups), np.asarray(codes), np.asarray(res, dtype=float)
    observed_means = _level_means(r_arr, c_arr, len(levels))
    observed = float(observed_means.std())
    rng = np.random.default_rng(seed)
    chunk = max(1, min(resamples, 2_000_000 // len(r_arr)))
    null = np.empty(resamples)
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        perms = within_task_permutations(g_arr, c_arr, size, rng)
        null[start : start + size] = _level_means(r_arr[None, :], perms, len(levels)).std(axis=1)
    alpha = (1 - LEVEL) / 2
    lo, med, hi = (float(x) for x in np.quantile(null, [alpha, 0.5, 1 - alpha]))
    grand = float(np.mean(ys))
    counts = np.bincount(c_arr, minlength=len(levels))
    by_level = {str(v): {"n": int(counts[i]), "vs_task_mean": round(float(observed_means[i]), 2)}
                for i, v in enumerate(levels)}  # fmt: skip
    effect, low, high = observed - med, observed - hi, observed - lo
    verdict = "no effect detected" if low <= 0 <= high else f"{axis} matters beyond chance"
    return {**base, "by_level": by_level, "spread": round(observed, 4),
            "chance_spread": round(med, 4), "effect": round(effect, 4), "ci_low": round(low, 4),
            "ci_high": round(high, 4),
            "p_value": round(float((1 + (null >= observed - 1e-12).sum()) / (resamples + 1)), 4),
            "cv": round(100 * observed / grand, 2) if grand > 0 else None,
            "chance_cv": round(100 * med / grand, 2) if grand > 0 else None,
            "mean": round(grand, 2), "resamples": resamples, "seed": seed,
            "verdict": verdict}  # fmt: skip


def persona_effects(rows: Sequence[Any], *, outcome: str = "OR5",
                    resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                    min_tasks: int = MIN_INFORMATIVE_TASKS) -> dict[str, Any]:  # fmt: skip
    """Every persona axis's within-task effect on ``outcome``: trust and reliability as
    :func:`binary_effect`, style and revelation speed as :func:`many_level_effect`."""
    kwargs = {"outcome": outcome, "resamples": resamples, "seed": seed, "min_tasks": min_tasks}
    out: dict[str, Any] = {"outcome": outcome, "min_tasks": min_tasks,
                           "conversations": len(rows),
                           "tasks": len({r.task_id for r in rows})}  # fmt: skip
    for axis, levels in BINARY_AXES.items():
        out[axis] = binary_effect(rows, axis, levels, **kwargs)
    for axis in MANY_LEVEL_AXES:
        out[axis] = many_level_effect(rows, axis, **kwargs)
    return out


def describe(effect: dict[str, Any]) -> str:
    """One line for a persona effect: the estimate, its interval and the tasks behind it, or
    why the run is too small to say."""
    axis = effect["axis"]
    if effect["verdict"] == TOO_SMALL:
        return f"{axis}: {TOO_SMALL}: {effect['reason']}"
    interval = f"[{effect['ci_low']:+.1f}, {effect['ci_high']:+.1f}]"
    tasks = f"{effect['informative_tasks']} tasks"
    if "contrast" in effect:
        return (f"{axis} ({effect['contrast']}): {effect['effect']:+.1f} pp {interval}, "
                f"p = {effect['p_value']:.3f}, {tasks}: {effect['verdict']}")  # fmt: skip
    cv = (
        ""
        if effect["cv"] is None
        else f", CV {effect['cv']:.1f}% (chance {effect['chance_cv']:.1f}%)"
    )
    return (f"{axis}: spread {effect['spread']:.1f} pp, beyond chance {effect['effect']:+.1f} pp "
            f"{interval}{cv}, p = {effect['p_value']:.3f}, {tasks}: {effect['verdict']}")  # fmt: skip
