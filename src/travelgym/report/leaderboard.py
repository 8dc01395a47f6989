"""The report's leaderboard: one ranking table of the runs, compared on the tasks they all ran.

Each run's headline metric (the suite's :attr:`~travelgym.core.suite.Suite.headline_metric`: the
share of counted episodes that :meth:`~travelgym.core.suite.Suite.succeeded`, each task's trials
averaged) over the shared tasks, with its 95 % bootstrap CI over tasks and the paired bootstrap
CI of its gap to the top run (:func:`travelgym.core.bootstrap.paired_bootstrap`, the one
``analyze`` uses, seeded explicitly), pass^k where the runs have trials, infra errors, tokens
and cost. Runs scored by different scorer versions are not ranked (their scores mean different
things); runs of different task sets are ranked on the task ids they share, and the table says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from travelgym.core.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, paired_bootstrap
from travelgym.core.passk import pass_at_k_table
from travelgym.core.suite import FIRST_SCORER_VERSION, Suite
from travelgym.report.body import ReportRun, Section
from travelgym.report.markup import DASH, esc

LEVEL = 0.95
# manifest keys that pick a run's tasks and data: runs that differ in one are compared with a note
TASK_SET_KEYS = ("tasks_sha256", "db_content_hash", "db_seed", "split", "db_scale")


@dataclass
class Row:
    """One run's line of the leaderboard (percentages; ``gap`` is ``None`` for the top run)."""

    rank: int
    label: str
    value: float  # the headline metric on the shared tasks, percent
    ci: tuple[float, float]
    gap: dict[str, Any] | None  # paired_bootstrap of run - top: diff, ci_low, ci_high, p_value
    pass_k: float | None
    episodes: int
    infra_errors: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None

    def as_json(self) -> dict[str, Any]:
        """The row as the report's embedded data keeps it."""
        return {"rank": self.rank, "run": self.label, "value": self.value, "ci": list(self.ci),
                "gap": self.gap, "pass_k": self.pass_k, "episodes": self.episodes,
                "infra_errors": self.infra_errors, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "cost_usd": self.cost_usd}  # fmt: skip


@dataclass
class Leaderboard:
    """The ranking of a report's runs, or why there is none (``refused``)."""

    metric: str
    tasks: int = 0  # the task ids every run has a counted episode of
    rows: list[Row] = field(default_factory=list)
    k: int | None = None  # pass^k's k: the fewest trials of any run, when above 1
    notes: list[str] = field(default_factory=list)
    refused: str | None = None
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED

    def as_json(self) -> dict[str, Any]:
        """The leaderboard as the report's embedded data keeps it."""
        return {"metric": self.metric, "tasks": self.tasks, "k": self.k, "level": LEVEL,
                "resamples": self.resamples, "seed": self.seed, "refused": self.refused,
                "notes": self.notes, "rows": [r.as_json() for r in self.rows]}  # fmt: skip


def _as_dict(episode: Any) -> dict[str, Any]:
    return episode if isinstance(episode, dict) else episode.model_dump(mode="json")


def outcomes_by_task(suite: Suite, run: ReportRun) -> dict[str, list[int]]:
    """``task_id -> [1 or 0 per counted trial]``: whether each of the run's counted episodes
    :meth:`~travelgym.core.suite.Suite.succeeded`."""
    found: dict[str, list[int]] = {}
    for episode in map(_as_dict, run.episodes):
        found.setdefault(str(episode["task_id"]), []).append(int(bool(suite.succeeded(episode))))
    return found


def task_values(outcomes: dict[str, list[int]]) -> dict[str, float]:
    """Each task's success in percent, its trials averaged (as ``analyze`` averages them)."""
    return {t: 100 * sum(v) / len(v) for t, v in outcomes.items()}


def _scorer_versions(suite: Suite, runs: list[ReportRun]) -> dict[str, str]:
    return {r.label: str(r.manifest.get(suite.scorer_version_key, FIRST_SCORER_VERSION))
            for r in runs}  # fmt: skip


def _usage(run: ReportRun) -> tuple[int, int, float | None]:
    usage = run.accounting.get("usage") or {}
    tokens_in = sum((usage.get(role) or {}).get("input_tokens", 0) for role in ("agent", "user"))
    tokens_out = sum((usage.get(role) or {}).get("output_tokens", 0) for role in ("agent", "user"))
    cost = usage.get("cost_usd")
    return tokens_in, tokens_out, cost.get("total") if isinstance(cost, dict) else None


def build(suite: Suite, runs: list[ReportRun], *, resamples: int = DEFAULT_RESAMPLES,
          seed: int = DEFAULT_SEED) -> Leaderboard:  # fmt: skip
    """Rank ``runs`` (of ``suite``) by the headline metric on the task ids they all share."""
    board = Leaderboard(suite.headline_metric, resamples=resamples, seed=seed)
    versions = _scorer_versions(suite, runs)
    if len(set(versions.values())) > 1:
        listed = ", ".join(f"{label}: {v}" for label, v in versions.items())
        board.refused = (f"the runs were scored by different scorer versions ({listed}): their "
                         "scores mean different things; re-score them with `travelgym score "
                         "RUN_DIR` or compare runs of one version")  # fmt: skip
        return board
    outcomes = {r.label: outcomes_by_task(suite, r) for r in runs}
    shared = sorted(set.intersection(*(set(o) for o in outcomes.values())))
    board.tasks = len(shared)
    if not shared:
        board.refused = "the runs share no task with a counted episode: nothing to compare"
        return board
    for key in TASK_SET_KEYS:
        values = {repr(r.manifest.get(key)) for r in runs}
        if len(values) > 1:
            board.notes.append(f"the runs differ in {key}: the same task id may not be the same "
                               "task; read the comparison with care")  # fmt: skip
    sizes = {label: len(o) for label, o in outcomes.items()}
    if len(runs) > 1 and any(n != len(shared) for n in sizes.values()):
        board.notes.append(f"compared on the {len(shared)} task(s) every run has a counted "
                           "episode of (of " + ", ".join(f"{k}: {v}" for k, v in sizes.items())
                           + ")")  # fmt: skip
    trials = [r.manifest.get("trials", 1) for r in runs]
    fewest = min(t if isinstance(t, int) else 1 for t in trials)
    board.k = fewest if fewest > 1 else None
    per_task = {label: task_values(o) for label, o in outcomes.items()}
    values = {label: [per_task[label][t] for t in shared] for label in outcomes}
    means = {label: sum(v) / len(v) for label, v in values.items()}
    order = sorted(runs, key=lambda r: -means[r.label])  # stable: ties keep the given order
    top = order[0].label
    for rank, run in enumerate(order, start=1):
        own = paired_bootstrap(values[run.label], [0.0] * len(shared), resamples, seed, LEVEL)
        gap = None if run.label == top else paired_bootstrap(values[run.label], values[top],
                                                             resamples, seed, LEVEL)  # fmt: skip
        pass_k = None
        if board.k:
            picked = [{"task_id": t, "ok": ok} for t in shared for ok in outcomes[run.label][t]]
            table = pass_at_k_table(picked, lambda e: bool(e["ok"]), board.k)
            pass_k = table[str(board.k)]["pass^k"]
        counts = run.accounting.get("outcomes") or {}
        tokens_in, tokens_out, cost = _usage(run)
        board.rows.append(Row(rank, run.label, round(means[run.label], 2),
                              (own["ci_low"], own["ci_high"]), gap, pass_k,
                              counts.get("n", len(run.episodes)), counts.get("infra_errors", 0),
                              tokens_in, tokens_out, cost))  # fmt: skip
    return board


def _num(value: float | None, digits: int = 1) -> str:
    return DASH if value is None else f"{value:.{digits}f}"


def _ci(low: float | None, high: float | None) -> str:
    return DASH if low is None else f"[{low:.1f}, {high:.1f}]"


def _cells(board: Leaderboard, row: Row) -> list[tuple[str, str, str]]:
    """``(column key, text, tooltip)`` of one row."""
    gap = row.gap
    cells = [("rank", str(row.rank), ""), ("run", row.label, ""),
             ("value", _num(row.value), f"{row.value} % over {board.tasks} task(s)"),
             ("ci", _ci(*row.ci), ""),
             ("gap", DASH if gap is None else f"{gap['diff']:+.1f}",
              "" if gap is None else f"p = {gap['p_value']}"),
             ("gap_ci", DASH if gap is None else _ci(gap["ci_low"], gap["ci_high"]), "")]  # fmt: skip
    if board.k:
        cells.append(("pass_k", _num(row.pass_k), ""))
    cells += [("episodes", str(row.episodes), ""), ("infra_errors", str(row.infra_errors), ""),
              ("tokens", f"{row.input_tokens:,} / {row.output_tokens:,}", "input / output"),
              ("cost", DASH if row.cost_usd is None else f"${row.cost_usd:,.4f}", "")]  # fmt: skip
    return cells


def section(board: Leaderboard) -> Section:
    """The leaderboard as the report's first section: the table (``#leaderboard-table``, each
    cell's ``data-run``/``data-col``) and what it compares, or why there is no ranking."""
    if board.refused:
        return Section("leaderboard", "Leaderboard",
                       f'<p class="notes" id="leaderboard-refused">No ranking: {esc(board.refused)}.</p>')  # fmt: skip
    level = f"{LEVEL:.0%}".replace("%", "\u00a0%")
    heads = ["#", "run", f"{board.metric} %", f"{level} CI", "gap to top (pp)",
             f"gap {level} paired CI"]  # fmt: skip
    if board.k:
        heads.append(f"pass^{board.k} %")
    heads += ["episodes", "infra errors", "tokens in / out", "cost"]
    head = "".join(f"<th>{esc(h)}</th>" for h in heads)
    rows = []
    for row in board.rows:
        cells = "".join(f'<td data-run="{esc(row.label)}" data-col="{key}"'
                        + (f' title="{esc(tip)}"' if tip else "") + f">{esc(text)}</td>"
                        for key, text, tip in _cells(board, row))  # fmt: skip
        rows.append(f"<tr>{cells}</tr>")
    caption = (f"Ranked by {board.metric} (% of the {board.tasks} task(s) every run has a "
               "counted episode of, each task's trials averaged); CIs: percentile bootstrap over "
               f"tasks, the gap's paired ({board.resamples} resamples, seed {board.seed}). "
               "Episodes, infra errors (left out of the figures), tokens and cost are of the "
               "whole run.")  # fmt: skip
    notes = "".join(f"<li>{esc(n)}</li>" for n in board.notes)
    return Section("leaderboard", "Leaderboard",
                   f'<table id="leaderboard-table" class="leaderboard"><thead><tr>{head}</tr>'
                   f"</thead><tbody>{''.join(rows)}</tbody></table>"
                   f'<p class="note">{esc(caption)}</p>'
                   + (f'<ul class="notes" id="leaderboard-notes">{notes}</ul>' if notes else ""))  # fmt: skip
