"""COMPASS metrics over finished episodes (paper Sections 4-5 and Appendix A).

Every metric is a pure function of episode records (and, for the constraint analysis, the
tasks); nothing here needs a database or an LLM. The per-metric functions take the feature rows
of :mod:`travelgym.suites.compass.analysis.features`; :func:`analyze_episodes` computes them all for one run
and :func:`analyze_runs` reads run directories, analyses each and compares them.

Rates are percentages (0-100, two decimals). See ``docs/compass/metrics/`` for one page per
metric with its formula and the figure or table of the paper it mirrors.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from travelgym.suites.compass.analysis.features import (
    ERROR_CATEGORIES,
    HALLUCINATION_CATEGORIES,
    EpisodeFeatures,
    extract,
)
from travelgym.suites.compass.analysis.persona_effects import persona_effects
from travelgym.suites.compass.analysis.pooling import check_poolable, differences, run_identity
from travelgym.suites.compass.analysis.rates import FLAG_OF, RATE_KEYS, Rows, grouped, rates
from travelgym.suites.compass.analysis.rates import validation_metrics as validation_metrics
from travelgym.suites.compass.analysis.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    bin_index,
    coefficient_of_variation,
    distribution,
    mean_std,
    paired_bootstrap,
    pct,
    quantile_edges,
    rate,
    two_proportion_ztest,
)
from travelgym.suites.compass.scoring import PlanScore, summarize
from travelgym.suites.compass.tasks import STYLES, Task
from travelgym.suites.compass.trajectory import Episode

ANALYSIS_FORMAT_VERSION = "1"
REVELATION_EDGES = (0, 2, 4, 6, 8)  # t* bins 0-1, 2-3, 4-5, 6-7, 8+ (Figure 7)
EFFORT_BINS = 4
MANIFEST_KEYS = ("suite", "user", "seed", "trials", "db_content_hash", "tasks_sha256", "max_turns",
                 "personas", "created")  # fmt: skip


# ------------------------------------------------------------------------ scores (Figs 2, 3, 8)


def score_rates(
    episodes: Iterable[Episode], tasks: dict[str, Task] | None = None
) -> dict[str, Any]:
    """FR, OR-5/10/20 and exact-optimal overall, by level and by objective type.

    The aggregation of :func:`travelgym.suites.compass.scoring.summarize` over the episodes' scores
    (without its per-task list); an episode without a score counts as infeasible, under its
    task's level and objective when ``tasks`` knows it.
    """
    tasks = tasks or {}
    scores = []
    for e in episodes:
        if e.score:
            scores.append(PlanScore.model_validate(e.score))
            continue
        task = tasks.get(e.task_id)
        scores.append(PlanScore(task_id=e.task_id, level=task.level if task else 1,
                                objective_type=task.objective_type if task else "unknown",
                                recommendation={}, feasible=False,
                                violations=["no score"]))  # fmt: skip
    result = summarize(scores)
    result.pop("tasks")
    return result


# ------------------------------------------------------------------------------ tool errors


def tool_error_rates(rows: Rows) -> dict[str, Any]:
    """Share of tool calls (%) with each error category (Table 4).

    ``rates`` holds the paper's three hallucination categories and their ``total``; internal
    (tool bug) and sandbox (code agent) errors are counted separately in ``other_rates``.
    """
    calls = sum(r.calls for r in rows)
    counts = dict.fromkeys(ERROR_CATEGORIES, 0)
    for r in rows:
        for cat, n in r.errors.items():
            counts[cat] = counts.get(cat, 0) + n
    paper = {c: pct(counts[c], calls) for c in HALLUCINATION_CATEGORIES}
    paper["total"] = pct(sum(counts[c] for c in HALLUCINATION_CATEGORIES), calls)
    other = {c: pct(n, calls) for c, n in counts.items() if c not in HALLUCINATION_CATEGORIES}
    return {"calls": calls, "counts": counts, "rates": paper, "other_rates": other}


# ---------------------------------------------------------------------- search (Section 5.2)


def binned_rates(
    rows: Rows, value: Callable[[EpisodeFeatures], float], edges: Sequence[float]
) -> list[dict[str, Any]]:
    """OR-5 (and FR) per bin ``[lo, hi)`` of ``value`` (the last bin is closed)."""
    if len(edges) < 2:
        return []
    bins: list[list[EpisodeFeatures]] = [[] for _ in range(len(edges) - 1)]
    for r in rows:
        bins[bin_index(value(r), edges)].append(r)
    out = []
    for i, members in enumerate(bins):
        out.append({"lo": edges[i], "hi": edges[i + 1], "n": len(members),
                    "OR5": rate([m.top5 for m in members]),
                    "FR": rate([m.feasible for m in members])})  # fmt: skip
    return out


def search_metrics(rows: Rows, n_bins: int = EFFORT_BINS) -> dict[str, Any]:
    """Search Effort E and Search Yield Y (Figure 4): distributions and OR-5 by quantile bin."""
    effort = [r.effort for r in rows]
    yields = [r.yield_ for r in rows]
    sources = grouped(rows, lambda r: r.yield_source)
    return {
        "effort": distribution(effort),
        "yield": distribution(yields),
        "yield_source": {k: len(v) for k, v in sorted(sources.items())},
        "or5_by_effort_bin": binned_rates(rows, lambda r: r.effort, quantile_edges(effort, n_bins)),
        "or5_by_yield_bin": binned_rates(rows, lambda r: r.yield_, quantile_edges(yields, n_bins)),
    }


# ------------------------------------------------------------- conversation (Figs 7, 9, 11)


def efficiency_metrics(rows: Rows) -> dict[str, Any]:
    """t*, extra turns after t* and conversation length (Appendix A.2, Figures 9 and 11)."""
    revealed = [r for r in rows if r.t_star is not None and r.extra_turns is not None]
    by_extra = grouped(revealed, lambda r: r.extra_turns)
    t_star_hist = grouped(revealed, lambda r: r.t_star)
    return {
        "t_star": distribution([r.t_star for r in revealed]),
        "t_star_histogram": {str(k): len(v) for k, v in sorted(t_star_hist.items())},
        "extra_turns": distribution([r.extra_turns for r in revealed]),
        "conversation_length": distribution([r.user_turns for r in rows]),
        "or5_by_extra_turns": {
            str(k): {"n": len(v), "OR5": rate([m.top5 for m in v])}
            for k, v in sorted(by_extra.items())
        },
        "not_revealed": len(rows) - len(revealed),
        "termination": {
            k: len(v) for k, v in sorted(grouped(rows, lambda r: r.termination).items())
        },
    }


def revelation_bins(rows: Rows, edges: Sequence[int] = REVELATION_EDGES) -> list[dict[str, Any]]:
    """OR-5 by the user turn t* at which all constraints were revealed (Figure 7).

    Bins ``[edges[i], edges[i+1])`` and a last open bin ``edges[-1]+``; episodes where the user
    never revealed everything form a final ``never`` bin (only when there are any).
    """
    out = []
    for i, lo in enumerate(edges):
        hi = edges[i + 1] if i + 1 < len(edges) else None
        members = [r for r in rows if r.t_star is not None and r.t_star >= lo
                   and (hi is None or r.t_star < hi)]  # fmt: skip
        label = f"{lo}+" if hi is None else (str(lo) if hi - lo == 1 else f"{lo}-{hi - 1}")
        out.append({"bin": label, "lo": lo, "hi": hi, "n": len(members),
                    "OR5": rate([m.top5 for m in members])})  # fmt: skip
    never = [r for r in rows if r.t_star is None]
    if never:
        out.append({"bin": "never", "lo": None, "hi": None, "n": len(never),
                    "OR5": rate([m.top5 for m in never])})  # fmt: skip
    return out


# ------------------------------------------------------------------ constraints (Figure 10)


def constraint_metrics(rows: Rows, tasks: dict[str, Task] | None = None) -> dict[str, Any]:
    """Constraint satisfaction by the task's constraint count, and per constraint kind.

    ``by_count[k].all_satisfied``: % of episodes on tasks with k constraints whose final plan
    violates none of them (unbookable plans still count as satisfying); ``mean_share``: mean %
    of the k constraints satisfied. ``by_kind[kind].satisfied``: % of episodes whose task has
    that constraint and whose plan satisfies it. Plans with a missing or unresolvable component
    satisfy no constraint. Episodes without a known task are left out; ``by_kind`` needs
    ``tasks`` (empty without).
    """
    known = [r for r in rows if r.n_constraints]
    by_count = {}
    for k, members in sorted(grouped(known, lambda r: r.n_constraints).items()):
        by_count[str(k)] = {
            "n": len(members),
            "all_satisfied": rate([m.constraints_satisfied == m.n_constraints for m in members]),
            "mean_share": round(
                100
                * sum(m.constraints_satisfied / m.n_constraints for m in members)
                / len(members),
                2,
            ),
            "FR": rate([m.feasible for m in members]),
        }
    return {
        "by_count": by_count,
        "by_kind": constraint_kind_rates(rows, tasks or {}),
        "unresolved_plans": sum(not r.plan_resolved for r in known),
    }


def constraint_kind_rates(rows: Rows, tasks: dict[str, Task]) -> dict[str, dict[str, Any]]:
    """% of episodes satisfying each constraint kind, over episodes whose task has that kind."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        task = tasks.get(r.task_id)
        if task is None:
            continue
        violated = set(r.violated_kinds)
        for c in task.constraints:
            entry = totals[c.kind]
            entry[0] += 1
            entry[1] += bool(r.plan_resolved and c.kind not in violated)
    return {k: {"n": n, "satisfied": pct(s, n)} for k, (n, s) in sorted(totals.items())}


# ----------------------------------------------------------------- user types (Tables 6, 7)


def style_consistency(rows: Rows) -> dict[str, Any]:
    """OR-5 per conversation style and its coefficient of variation across styles (Table 6),
    pooled over tasks (confounded with them; ``persona_effects`` compares within tasks)."""
    by_style = {}
    for style, members in sorted(
        grouped(rows, lambda r: r.style).items(), key=lambda kv: str(kv[0])
    ):
        if style is None:
            continue
        by_style[str(style)] = {"name": STYLES.get(style), "n": len(members),
                                "OR5": rate([m.top5 for m in members])}  # fmt: skip
    values = [v["OR5"] for v in by_style.values()]
    return {"by_style": by_style, "cv": coefficient_of_variation(values), **{
        k: v for k, v in mean_std(values).items() if k != "n"}}  # fmt: skip


def trust_test(rows: Rows) -> dict[str, Any]:
    """OR-5 of questioning vs trusting users and a two-proportion z-test (Table 7), pooled over
    tasks (confounded with them; ``persona_effects`` compares within tasks)."""
    q = [r for r in rows if r.trust == "questioning"]
    t = [r for r in rows if r.trust == "trusting"]
    xq, xt = sum(r.top5 for r in q), sum(r.top5 for r in t)
    return {
        "questioning": {"n": len(q), "OR5": pct(xq, len(q))},
        "trusting": {"n": len(t), "OR5": pct(xt, len(t))},
        **two_proportion_ztest(xq, len(q), xt, len(t)),
    }


def persona_rates(rows: Rows) -> dict[str, Any]:
    """FR / OR rates by each persona axis (revelation speed, trust, reliability)."""
    out = {}
    for axis in ("revelation_speed", "trust", "reliability"):
        groups = grouped(rows, lambda r, a=axis: getattr(r, a))
        out[axis] = {str(k): rates(v) for k, v in sorted(groups.items(), key=lambda kv: str(kv[0]))}
    return out


# ------------------------------------------------------------------ stability (Table 5)


def stability(groups: dict[str, Sequence[EpisodeFeatures]]) -> dict[str, Any]:
    """Per metric: its value in each group (trial or run), mean and population std (Table 5)."""
    per_group = {name: rates(rows) for name, rows in groups.items()}
    metrics = {}
    for key in RATE_KEYS:
        values = [per_group[name][key] for name in groups]
        metrics[key] = {"values": values, **{k: v for k, v in mean_std(values).items() if k != "n"}}
    return {"groups": list(groups), "n": len(groups), "metrics": metrics}


# ------------------------------------------------------------------ comparison of two runs


def task_means(rows: Rows, flag: str) -> dict[str, float]:
    """Per task: mean of a 0/1 outcome over its trials, in percent."""
    acc: dict[str, list[int]] = defaultdict(list)
    for r in rows:
        acc[r.task_id].append(int(getattr(r, flag)))
    return {t: 100 * sum(v) / len(v) for t, v in acc.items()}


def compare(
    rows_a: Rows,
    rows_b: Rows,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """Run A minus run B on their common tasks: difference and 95 % bootstrap CI per rate.

    Outcomes are averaged over trials per task, then tasks are resampled (paired) with
    ``np.random.default_rng(seed)``. Differences are in percentage points.
    """
    out: dict[str, Any] = {}
    common: list[str] = []
    for key in RATE_KEYS:
        a, b = task_means(rows_a, FLAG_OF[key]), task_means(rows_b, FLAG_OF[key])
        common = sorted(set(a) & set(b))
        res = paired_bootstrap([a[t] for t in common], [b[t] for t in common], resamples, seed)
        res["a"] = round(sum(a[t] for t in common) / len(common), 2) if common else None
        res["b"] = round(sum(b[t] for t in common) / len(common), 2) if common else None
        res["significant"] = bool(common) and not (res["ci_low"] <= 0 <= res["ci_high"])
        out[key] = res
    return {"tasks": len(common), "metrics": out}


# ------------------------------------------------------------------------ whole analyses


def features_of(
    episodes: Iterable[Episode], tasks: dict[str, Task] | None = None
) -> list[EpisodeFeatures]:
    tasks = tasks or {}
    return [extract(e, tasks.get(e.task_id)) for e in episodes]


def _task_map(tasks: Iterable[Task] | dict[str, Task] | None) -> dict[str, Task]:
    if tasks is None:
        return {}
    if isinstance(tasks, dict):
        return tasks
    return {t.task_id: t for t in tasks}


def analyze_episodes(
    episodes: Sequence[Episode],
    tasks: Iterable[Task] | dict[str, Task] | None = None,
    *,
    effort_bins: int = EFFORT_BINS,
    include_episodes: bool = True,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """Every metric of one run (one agent): a JSON-serialisable dict.

    Keys: ``n_episodes``, ``n_tasks``, ``trials``, ``scores`` (overall / by_level /
    by_objective), ``tool_errors``, ``search``, ``efficiency``, ``revelation``,
    ``constraints``, ``styles``, ``trust``, ``persona``, ``persona_effects`` (within tasks,
    :mod:`~travelgym.suites.compass.analysis.persona_effects`, drawing from ``seed``),
    ``stability`` (across trials, None for a single trial) and ``episodes`` (the per-episode
    feature rows).
    """
    task_map = _task_map(tasks)
    rows = features_of(episodes, task_map)
    return _analyze_rows(episodes, rows, task_map, effort_bins, include_episodes, resamples, seed)


def _analyze_rows(episodes: Sequence[Episode], rows: list[EpisodeFeatures],
                  task_map: dict[str, Task], effort_bins: int, include_episodes: bool,
                  resamples: int, seed: int) -> dict[str, Any]:  # fmt: skip
    trials = sorted({r.trial for r in rows})
    result: dict[str, Any] = {
        "n_episodes": len(rows),
        "n_tasks": len({r.task_id for r in rows}),
        "trials": len(trials),
        "scores": score_rates(episodes, task_map),
        "tool_errors": tool_error_rates(rows),
        "search": search_metrics(rows, effort_bins),
        "efficiency": efficiency_metrics(rows),
        "revelation": revelation_bins(rows),
        "constraints": constraint_metrics(rows, task_map),
        "validation": validation_metrics(rows),
        "styles": style_consistency(rows),
        "trust": trust_test(rows),
        "persona": persona_rates(rows),
        "persona_effects": persona_effects(rows, resamples=resamples, seed=seed),
        "stability": None,
    }
    if len(trials) > 1:
        per_trial = {f"trial {k}": [r for r in rows if r.trial == k] for k in trials}
        result["stability"] = {"unit": "trial", **stability(per_trial)}
    if include_episodes:
        result["episodes"] = [r.row() for r in rows]
    return result


def load_run(run_dir: Path) -> tuple[dict[str, Any], list[Episode]]:
    """A run directory's manifest (empty when missing) and its counted episodes (no infra error)."""
    from travelgym.core.summary import counted_episodes
    from travelgym.runner.run_manifest import read_manifest
    from travelgym.runner.store import read_episodes

    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    return manifest, counted_episodes(read_episodes(run_dir), manifest)


def _unique_name(name: str, taken: dict[str, Any]) -> str:
    if name not in taken:
        return name
    k = 2
    while f"{name}#{k}" in taken:
        k += 1
    return f"{name}#{k}"


def analyze_runs(
    run_dirs: Sequence[Path | str],
    tasks: Iterable[Task] | dict[str, Task] | None = None,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    include_episodes: bool = True,
    allow_mixed: bool = False,
) -> dict[str, Any]:
    """Analyse run directories (one agent each) and compare them.

    Returns ``{"format_version", "runs": {name: run analysis}, "comparisons": [...],
    "stability": {agent: ...}}``. Runs are named by their manifest's agent (``name#2``... for
    repeats). Each run analysis is :func:`analyze_episodes` plus ``run_dir``, ``agent`` and
    ``manifest`` (identity keys) and ``warnings``. ``comparisons`` holds every pair (i < j) in
    the given order as :func:`compare` of run i minus run j. ``stability`` groups runs of the
    same agent (repeated runs, Table 5) with the ``persona_effects`` of all their conversations
    together; it is empty when every agent ran once. Runs of one
    agent over different task sets, task files or databases raise
    :class:`~travelgym.suites.compass.analysis.pooling.MixedRunsError` unless ``allow_mixed`` (then their row
    lists what differs under ``mixed``). Tasks default to the shipped task file.
    """
    from travelgym.suites.compass.ground_truth import tasks_sha256
    from travelgym.suites.compass.tasks import PACKAGE_TASKS, load_tasks

    if tasks is None:
        tasks = load_tasks()
        shipped_sha = tasks_sha256(PACKAGE_TASKS)
    else:
        shipped_sha = None
    task_map = _task_map(tasks)
    runs: dict[str, Any] = {}
    rows_of: dict[str, list[EpisodeFeatures]] = {}
    names_of_agent: dict[str, list[str]] = defaultdict(list)
    identities: dict[str, dict[str, Any]] = {}
    for run_dir in run_dirs:
        manifest, episodes = load_run(Path(run_dir))
        agent = manifest.get("agent") or (episodes[0].agent if episodes else Path(run_dir).name)
        name = _unique_name(agent, runs)
        rows = features_of(episodes, task_map)
        analysis = _analyze_rows(episodes, rows, task_map, EFFORT_BINS, include_episodes,
                                 resamples, seed)  # fmt: skip
        warnings = []
        if shipped_sha and manifest.get("tasks_sha256") not in (None, shipped_sha):
            warnings.append("the run's task file differs from the shipped one: constraint "
                            "metrics use the shipped tasks")  # fmt: skip
        missing = sorted({e.task_id for e in episodes} - set(task_map))
        if missing:
            warnings.append(
                f"{len(missing)} task id(s) not in the task file: {', '.join(missing[:5])}"
            )
        runs[name] = {
            "run_dir": str(run_dir),
            "agent": agent,
            "manifest": {k: manifest.get(k) for k in MANIFEST_KEYS},
            "warnings": warnings,
            **analysis,
        }
        rows_of[name] = rows
        names_of_agent[agent].append(name)
        identities[name] = run_identity(manifest, episodes)
    names = list(runs)
    comparisons = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            comparisons.append({"a": a, "b": b, **compare(rows_of[a], rows_of[b], resamples, seed)})
    repeated = {}
    for agent, members in names_of_agent.items():
        if len(members) > 1:
            ids = {n: identities[n] for n in members}
            if not allow_mixed:
                check_poolable(agent, ids, {n: runs[n]["run_dir"] for n in members})
            repeated[agent] = {"unit": "run", **stability({n: rows_of[n] for n in members})}
            pooled = [r for n in members for r in rows_of[n]]  # every conversation of the agent
            repeated[agent]["persona_effects"] = persona_effects(pooled, resamples=resamples,
                                                                 seed=seed)  # fmt: skip
            if mixed := differences(ids):
                repeated[agent]["mixed"] = mixed
    return {"format_version": ANALYSIS_FORMAT_VERSION, "runs": runs, "comparisons": comparisons,
            "stability": repeated}  # fmt: skip
