"""One self-contained HTML report of COMPASS run directories.

``write_report(run_dirs, out)`` writes a single HTML file that needs no network: CSS and
JavaScript are inline, plots are embedded as data URIs, and the episodes are embedded as JSON in
a ``<script type="application/json">`` element. It shows

- summary tables per run (FR, OR-5/10/20, optimal; overall, by level, by objective type) from
  :func:`travelgym.suites.compass.scoring.summarize` on the episodes' scores;
- the tables of :func:`travelgym.suites.compass.analysis.metrics.analyze_runs` and the figures of
  :func:`travelgym.suites.compass.analysis.plots.write_plots`, when those modules are installed;
- a trajectory viewer: pick a run and a task, read the conversation turn by turn (the user's
  dialogue acts and the simulator's instruction, the agent's text, its tool calls and results),
  and see each recommendation's verdict (violated constraints, whether the user had revealed them
  yet, the plan's rank among all feasible plans), computed here on the run's database.

The viewer reads ``#run=N&task=ID[&trial=K]`` from the URL, so a link (or a test) can open a
conversation directly. Script errors are recorded in ``#console-errors`` for headless checks.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import html
import json
import math
import sqlite3
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from travelgym.atomic import write_text_atomic
from travelgym.report.assets import ERROR_HOOK_JS, REPORT_CSS, VIEWER_JS
from travelgym.runner.integrity import tamper_notes
from travelgym.runner.run_manifest import read_manifest
from travelgym.runner.store import RunDirError, read_episodes
from travelgym.suites.compass.tasks import STYLES, GroundTruth, Task, load_tasks
from travelgym.suites.compass.trajectory import Episode

DEFAULT_MAX_RESULT_CHARS = 2000  # tool results longer than this are cut in the embedded data
MAX_ARGUMENT_CHARS = 20000  # tool-call arguments (e.g. code) longer than this are cut
MAX_TEXT_CHARS = 50000  # one turn's text
PLOT_SVG_MAX_BYTES = 1_500_000  # larger SVG figures are embedded as PNG instead
METRIC_COLUMNS = (("FR", "FR"), ("OR5", "OR-5"), ("OR10", "OR-10"), ("OR20", "OR-20"),
                  ("optimal", "optimal"))  # fmt: skip
COMPONENTS = ("hotel", "flight", "permit")


@dataclass
class Run:
    """One run directory: its manifest, episodes and a display label."""

    directory: Path
    manifest: dict[str, Any]
    episodes: list[Episode]
    label: str = ""

    @property
    def db_seed(self) -> int:
        return int(self.manifest.get("db_seed", 0) or 0)


@dataclass
class ReportResult:
    path: Path
    size_bytes: int
    runs: int
    episodes: int
    verdicts: int
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what was left out, and why


def load_runs(run_dirs: list[Path]) -> list[Run]:
    """Read each run directory (manifest and episodes); labels are made unique."""
    runs = []
    for directory in run_dirs:
        directory = Path(directory)
        manifest = read_manifest(directory)
        episodes = read_episodes(directory)  # raises RunDirError without episodes.jsonl
        runs.append(Run(directory, manifest, episodes))
    labels = [r.manifest.get("agent") or (r.episodes[0].agent if r.episodes else r.directory.name)
              for r in runs]  # fmt: skip
    for run, label in zip(runs, labels, strict=True):
        run.label = label if labels.count(label) == 1 else f"{label} ({run.directory.name})"
    seen: dict[str, int] = {}
    for run in runs:  # still equal (same agent, same directory name): number them
        seen[run.label] = seen.get(run.label, 0) + 1
        if seen[run.label] > 1:
            run.label = f"{run.label} #{seen[run.label]}"
    return runs


# --------------------------------------------------------------------------- verdicts


class Verdicts:
    """Per-recommendation verdicts on the run's database, computed once per distinct plan.

    A verdict lists every violated constraint (by index into ``task.constraints``; ``None`` for
    an ID that does not resolve), the plan's utility and objective value, and for feasible plans
    its exact rank among all feasible plans of the task.
    """

    def __init__(self, tasks: dict[str, Task], data_dir: Path | None) -> None:
        self.tasks = tasks
        self.data_dir = data_dir
        self.items: list[dict[str, Any]] = []
        self._index: dict[tuple, int] = {}
        self._dbs: dict[int, tuple[sqlite3.Connection, dict[str, GroundTruth]]] = {}
        self._rankings: dict[tuple[int, str], Any] = {}
        self.truths: dict[int, dict[str, GroundTruth]] = {}

    def database(self, seed: int) -> tuple[sqlite3.Connection, dict[str, GroundTruth]]:
        if seed not in self._dbs:
            from travelgym.db import connect_readonly
            from travelgym.suites.compass.build import ensure_database
            from travelgym.suites.compass.ground_truth import ensure_ground_truth

            db = ensure_database(seed=seed, data_dir=self.data_dir)
            _, truths = ensure_ground_truth(seed=seed, data_dir=self.data_dir)
            self._dbs[seed] = (connect_readonly(db.path), truths)
            self.truths[seed] = truths
        return self._dbs[seed]

    def ranking(self, seed: int, task: Task):
        key = (seed, task.task_id)
        if key not in self._rankings:
            from travelgym.suites.compass.solver import Ranking, build_components

            conn, _ = self.database(seed)
            self._rankings[key] = Ranking(task, build_components(conn, task))
        return self._rankings[key]

    def close(self) -> None:
        for conn, _ in self._dbs.values():
            conn.close()
        self._dbs.clear()

    def verdict(self, seed: int, task_id: str, recommendation: Any) -> int | None:
        """The index of this recommendation's verdict in ``items`` (None: unknown task)."""
        task = self.tasks.get(task_id)
        if task is None or not isinstance(recommendation, dict):
            return None
        key = (seed, task_id, json.dumps(recommendation, sort_keys=True, default=str))
        if key not in self._index:
            try:
                item = self._compute(seed, task, recommendation)
            except Exception as exc:  # noqa: BLE001 - one odd plan must not stop the report
                item = {"error": f"{type(exc).__name__}: {exc}"}
            self._index[key] = len(self.items)
            self.items.append(item)
        return self._index[key]

    def _compute(self, seed: int, task: Task, recommendation: dict) -> dict[str, Any]:
        from travelgym.suites.compass.scoring import best_of, revealed_violations, score_plan

        conn, truths = self.database(seed)
        truth = truths.get(task.task_id)
        if truth is None:
            return {"error": f"no ground truth for {task.task_id}"}
        rec = {k: recommendation.get(k) for k in COMPONENTS}
        hotels = rec["hotel"]
        options = (
            hotels[:3] if isinstance(hotels, list) and hotels and task.level == 1 else [hotels]
        )
        candidates = []
        for hotel in options:
            plan = {**rec, "hotel": hotel}
            if not all(v is None or isinstance(v, str) for v in plan.values()):
                candidates.append(None)
                continue
            candidates.append(score_plan(conn, task, truth, plan))
        scored = [c for c in candidates if c is not None]
        if not scored:
            return {"ok": False, "v": [[None, "the recommendation's IDs are not strings"]]}
        best = best_of(scored)
        everything = list(range(len(task.constraints)))
        violations = revealed_violations(conn, task, best.recommendation, everything)
        if not violations and best.violations:  # keep the scorer's word on feasibility
            violations = [(None, v) for v in best.violations]
        item: dict[str, Any] = {"ok": best.feasible, "v": [[i, t] for i, t in violations]}
        if len(options) > 1:
            item["hotel"] = best.recommendation.get("hotel")
        if best.feasible:
            rank = self.ranking(seed, task).count_better(best.utility) + 1
            item.update(u=best.utility, val=best.objective_value, gap=best.optimality_gap,
                        rank=rank, pct=round(100 * rank / truth.feasible_count, 4),
                        top=[best.top.get(a, False) for a in ("5", "10", "20")],
                        opt=best.optimal)  # fmt: skip
        return item


# --------------------------------------------------------------------------- embedded data


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\u2026 [cut: {len(text):,} characters in all]"


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


class _Encoder:
    """Turns episodes into the compact records the viewer reads."""

    def __init__(self, verdicts: Verdicts, max_result_chars: int) -> None:
        self.verdicts = verdicts
        self.max_result_chars = max_result_chars
        self.tools: list[str] = []
        self._tool_index: dict[str, int] = {}
        self.arguments: list[Any] = []  # distinct tool-call arguments (JSON values)
        self.prompts: list[str] = []  # distinct simulator instructions
        self._prompt_index: dict[str, int] = {}
        self._argument_index: dict[str, int] = {}
        self.results_cut = 0

    def tool(self, name: str) -> int:
        if name not in self._tool_index:
            self._tool_index[name] = len(self.tools)
            self.tools.append(name)
        return self._tool_index[name]

    def argument(self, value: Any) -> int:
        """Index of the arguments in the shared table (scripted agents repeat many calls)."""
        key = repr(value)  # distinguishes 1 from "1", and is faster than json.dumps
        if key not in self._argument_index:
            text = _json_text(value)
            if len(text) > MAX_ARGUMENT_CHARS:  # keep huge arguments (code) readable, but bounded
                value = _clip(text, MAX_ARGUMENT_CHARS)
            self._argument_index[key] = len(self.arguments)
            self.arguments.append(value)
        return self._argument_index[key]

    def call(self, c) -> list:
        result = None
        if c.result is not None:
            text = _json_text(c.result)
            if len(text) > self.max_result_chars:
                self.results_cut += 1
            result = _clip(text, self.max_result_chars)
        row = [self.tool(c.name), self.argument(c.arguments), 1 if c.ok else 0, c.result_chars,
               result, c.error_category, c.error_message]  # fmt: skip
        while row and row[-1] is None:
            row.pop()
        return row

    def turn(self, seed: int, task_id: str, t) -> dict[str, Any]:
        out: dict[str, Any] = {"i": t.index, "r": "u" if t.role == "user" else "a"}
        if t.text:
            out["x"] = _clip(t.text, MAX_TEXT_CHARS)
        if t.acts:
            out["acts"] = [
                {k: v for k, v in (("t", a.type), ("c", a.constraint_index), ("d", a.detail))
                 if v is not None}
                for a in t.acts
            ]  # fmt: skip
        if t.prompt:
            if t.prompt not in self._prompt_index:
                self._prompt_index[t.prompt] = len(self.prompts)
                self.prompts.append(t.prompt)
            out["p"] = self._prompt_index[t.prompt]
        if t.tool_calls:
            out["calls"] = [self.call(c) for c in t.tool_calls]
        if t.recommendation:
            out["rec"] = t.recommendation
            out["v"] = self.verdicts.verdict(seed, task_id, t.recommendation)
        if t.error:
            out["err"] = t.error
        if t.duration_s:
            out["dur"] = round(t.duration_s, 3)
        if t.usage.total_tokens:
            out["tok"] = [t.usage.prompt_tokens, t.usage.completion_tokens]
        return out

    def episode(self, seed: int, e: Episode) -> dict[str, Any]:
        score = dict(e.score or {})
        out: dict[str, Any] = {
            "id": e.episode_id,
            "task": e.task_id,
            "trial": e.trial,
            "term": e.termination,
            "calls": sum(len(t.tool_calls) for t in e.turns),
            "dur": round(e.duration_s, 3),
            "turns": [self.turn(seed, e.task_id, t) for t in e.turns],
        }
        if e.error:
            out["err"] = e.error
        if e.revealed_all_turn is not None:
            out["tall"] = e.revealed_all_turn
        if e.usage.total_tokens:
            out["tok"] = [e.usage.prompt_tokens, e.usage.completion_tokens]
        if e.llm_calls:
            out["llm"] = e.llm_calls
        if e.final_recommendation:
            out["final"] = e.final_recommendation
            index = self.verdicts.verdict(seed, e.task_id, e.final_recommendation)
            out["fv"] = index
            verdict = self.verdicts.items[index] if index is not None else {}
            if score and score.get("feasible") and score.get("rank") is None and "rank" in verdict:
                score["rank"], score["rank_percentile"] = verdict["rank"], verdict["pct"]
        if score:
            score.pop("recommendation", None)
            score.pop("task_id", None)
            out["score"] = _finite(score)
        return out


def _task_record(task: Task, truth: GroundTruth | None) -> dict[str, Any]:
    persona = task.persona.model_dump()
    persona["style_text"] = STYLES.get(task.persona.style, str(task.persona.style))
    objective = task.objective
    out: dict[str, Any] = {
        "level": task.level,
        "objective": objective.type,
        "metric": getattr(objective, "metric", None) or f"{len(objective.features)} features",
        "objective_text": objective.sentence(),
        "park": ", ".join(task.park.park_ids),
        "constraints": [
            {"kind": c.kind, "rev": c.revelation, "text": c.sentence()} for c in task.constraints
        ],
        "persona": persona,
        "story": task.story,
    }
    if truth is not None:
        out["truth"] = {"n": truth.feasible_count, "optimum": truth.optimum_value,
                        "plan": truth.optimal_plan}  # fmt: skip
    return out


def embed_json(data: Any) -> str:
    """JSON for a ``<script type="application/json">`` element: every ``<`` is written as
    ``\\u003c`` (so no ``</script>``, ``<!--`` or ``<script`` can end or confuse the element),
    and U+2028/U+2029 are escaped too. ``JSON.parse`` reads the text back unchanged."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                      default=_json_default)  # fmt: skip
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))  # fmt: skip


def _json_default(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return str(value)


def _finite(obj: Any) -> Any:
    """Replace NaN and infinities (not JSON) with None, recursively."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


# --------------------------------------------------------------------------- HTML pieces


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _fmt(value: Any) -> str:
    if value is None:
        return "\u2013"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "\u2013"
        if value == int(value) and abs(value) < 1e15:
            return f"{value:.1f}"
        return (
            f"{value:.4g}" if abs(value) < 1e-3 or abs(value) >= 1e5 else f"{value:.3f}".rstrip("0")
        )
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10000 else str(value)
    if isinstance(value, list | tuple):
        shown = ", ".join(_fmt(v) for v in value[:20])
        return shown + (f", \u2026 ({len(value)} in all)" if len(value) > 20 else "")
    return str(value)


def _summary_row(label: str, run: str, group: str, agg: dict[str, Any]) -> str:
    cells = [f'<th scope="row">{_esc(label)}</th>', f'<td class="num">{agg.get("n", 0)}</td>']
    for key, _ in METRIC_COLUMNS:
        value = agg.get(key)
        text = f"{value:.1f}" if isinstance(value, int | float) else "\u2013"
        cells.append(f'<td class="num" data-run="{_esc(run)}" data-group="{_esc(group)}" '
                     f'data-metric="{key}">{text}</td>')  # fmt: skip
    return "<tr>" + "".join(cells) + "</tr>"


def _summary_tables(summaries: list[tuple[Run, dict[str, Any]]]) -> str:
    head = ("<thead><tr><th></th><th>n</th>"
            + "".join(f"<th>{_esc(name)} (%)</th>" for _, name in METRIC_COLUMNS)
            + "</tr></thead>")  # fmt: skip
    parts = ['<h3>Overall</h3><table class="metrics" id="summary-overall">' + head + "<tbody>"]
    for run, summary in summaries:
        parts.append(_summary_row(run.label, run.label, "overall", summary["overall"]))
    parts.append("</tbody></table>")
    levels = sorted({lv for _, s in summaries for lv in s["by_level"]})
    parts.append('<h3>By level</h3><table class="metrics" id="summary-level">' + head + "<tbody>")
    for level in levels:
        for run, summary in summaries:
            if level in summary["by_level"]:
                parts.append(_summary_row(f"Level {level} \u00b7 {run.label}", run.label,
                                          f"level-{level}", summary["by_level"][level]))  # fmt: skip
    parts.append("</tbody></table>")
    objectives = sorted({o for _, s in summaries for o in s["by_objective"]})
    parts.append('<h3>By objective type</h3><table class="metrics" id="summary-objective">'
                 + head + "<tbody>")  # fmt: skip
    for objective in objectives:
        for run, summary in summaries:
            if objective in summary["by_objective"]:
                parts.append(_summary_row(f"{objective} \u00b7 {run.label}", run.label,
                                          f"objective-{objective}",
                                          summary["by_objective"][objective]))  # fmt: skip
    parts.append("</tbody></table>")
    return "\n".join(parts)


def _run_facts(runs: list[Run]) -> str:
    rows = []
    for run in runs:
        m = run.manifest
        terms: dict[str, int] = {}
        for e in run.episodes:
            terms[e.termination] = terms.get(e.termination, 0) + 1
        unscored = sum(1 for e in run.episodes if not e.score)
        rows.append(
            "<tr>" + "".join(f"<td>{_esc(v)}</td>" for v in (
                run.label, m.get("user", "\u2013"), len(run.episodes), unscored,
                ", ".join(f"{k} {v}" for k, v in sorted(terms.items())),
                m.get("seed", "\u2013"), m.get("db_seed", "\u2013"), m.get("trials", "\u2013"),
                m.get("created", "\u2013"), str(run.directory)))
            + "</tr>"
        )  # fmt: skip
    head = ("<thead><tr><th>run</th><th>user</th><th>episodes</th><th>unscored</th>"
            "<th>termination</th><th>seed</th><th>db seed</th><th>trials</th><th>created</th>"
            "<th>directory</th></tr></thead>")  # fmt: skip
    return f'<table class="runs" id="run-facts">{head}<tbody>{"".join(rows)}</tbody></table>'


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _is_flat_list(value: Any) -> bool:
    return isinstance(value, list) and all(_is_scalar(v) for v in value)


def _cell(value: Any) -> str:
    return f'<td class="num">{_esc(_fmt(value))}</td>' if isinstance(value, int | float) and \
        not isinstance(value, bool) else f"<td>{_esc(_fmt(value))}</td>"  # fmt: skip


def render_value(value: Any, depth: int = 0, max_rows: int = 300) -> str:
    """A generic HTML rendering of JSON-like analysis results: dicts of scalars become
    key/value tables, dicts (or lists) of flat dicts become matrices, deeper dicts sections."""
    if _is_scalar(value) or _is_flat_list(value):
        return f"<p>{_esc(_fmt(value))}</p>"
    if isinstance(value, list):
        if value and all(isinstance(v, dict) and all(_is_scalar(x) or _is_flat_list(x)
                                                     for x in v.values()) for v in value):  # fmt: skip
            columns: list[str] = []
            for row in value:
                columns += [k for k in row if k not in columns]
            body = "".join("<tr>" + "".join(_cell(row.get(c)) for c in columns) + "</tr>"
                           for row in value[:max_rows])  # fmt: skip
            more = f"<p class='note'>{len(value) - max_rows} more rows not shown</p>" \
                if len(value) > max_rows else ""  # fmt: skip
            head = "".join(f"<th>{_esc(c)}</th>" for c in columns)
            return f'<table class="analysis"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}'
        return "".join(render_value(v, depth + 1, max_rows) for v in value[:max_rows])
    if not isinstance(value, dict) or not value:
        return f"<p>{_esc(_fmt(value))}</p>"
    if all(_is_scalar(v) or _is_flat_list(v) for v in value.values()):
        body = "".join(f"<tr><th scope='row'>{_esc(k)}</th>{_cell(v)}</tr>"
                       for k, v in list(value.items())[:max_rows])  # fmt: skip
        return f'<table class="analysis kv"><tbody>{body}</tbody></table>'
    inner = list(value.values())
    if all(isinstance(v, dict) and v and all(_is_scalar(x) or _is_flat_list(x) for x in v.values())
           for v in inner):  # fmt: skip
        columns = []
        for row in inner:
            columns += [k for k in row if k not in columns]
        head = "<th></th>" + "".join(f"<th>{_esc(c)}</th>" for c in columns)
        body = "".join(f"<tr><th scope='row'>{_esc(k)}</th>"
                       + "".join(_cell(row.get(c)) for c in columns) + "</tr>"
                       for k, row in list(value.items())[:max_rows])  # fmt: skip
        return (
            f'<table class="analysis"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        )
    tag = f"h{min(6, 4 + depth)}"
    parts = []
    scalars = {k: v for k, v in value.items() if _is_scalar(v) or _is_flat_list(v)}
    if scalars:
        parts.append(render_value(scalars, depth + 1, max_rows))
    for key, sub in value.items():
        if key in scalars:
            continue
        section = f"<{tag}>{_esc(key)}</{tag}>{render_value(sub, depth + 1, max_rows)}"
        parts.append(f'<div class="sub">{section}</div>' if depth else section)
    return "".join(parts)


ANALYSIS_SKIP = {
    "run_dir",
    "agent",
    "manifest",
    "warnings",
    "episodes",
    "format_version",
    "scores",
}  # scores: the summary tables above already show them
MAX_ANALYSIS_ROWS = 400  # per table


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Leaf values of a JSON-like tree keyed by dotted paths (lists of scalars stay whole;
    list items that are dicts are named by their first string field, else by index)."""
    if _is_scalar(value) or _is_flat_list(value):
        return {prefix or "value": value}
    out: dict[str, Any] = {}
    if isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items()]
    else:
        items = []
        for i, v in enumerate(value):
            label = next((x for x in v.values() if isinstance(x, str)), None) \
                if isinstance(v, dict) else None  # fmt: skip
            items.append((f"[{label}]" if label is not None else f"[{i}]", v))
    for key, sub in items:
        out.update(flatten(sub, f"{prefix}.{key}" if prefix else key))
    return out


def _matrix(rows: dict[str, dict[str, Any]], columns: list[str], css_id: str) -> str:
    """A table of dotted paths (rows) by runs (columns)."""
    paths: list[str] = []
    for column in columns:
        paths += [p for p in rows.get(column, {}) if p not in paths]
    head = "<th></th>" + "".join(f"<th>{_esc(c)}</th>" for c in columns)
    body = []
    for path in paths[:MAX_ANALYSIS_ROWS]:
        cells = "".join(_cell(rows.get(c, {}).get(path)) for c in columns)
        body.append(f"<tr><th scope='row'>{_esc(path)}</th>{cells}</tr>")
    more = (f"<p class='note'>{len(paths) - MAX_ANALYSIS_ROWS} more rows in the raw JSON</p>"
            if len(paths) > MAX_ANALYSIS_ROWS else "")  # fmt: skip
    return (f'<table class="analysis" id="{_esc(css_id)}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>{more}")  # fmt: skip


def render_analysis(result: dict[str, Any]) -> str:
    """``analyze_runs`` output as HTML: one table per metric group with the runs as columns,
    then the pairwise comparisons and the stability across repeated runs."""
    runs = result.get("runs") if isinstance(result.get("runs"), dict) else None
    if runs is None:
        return render_value(result)
    names = list(runs)
    parts = []
    warnings = [f"{n}: {w}" for n, r in runs.items() for w in (r.get("warnings") or [])]
    if warnings:
        parts.append('<ul class="notes">' + "".join(f"<li>{_esc(w)}</li>" for w in warnings)
                     + "</ul>")  # fmt: skip
    groups: list[str] = []
    for run in runs.values():
        groups += [k for k in run if k not in ANALYSIS_SKIP and k not in groups]
    scalars = [g for g in groups if all(_is_scalar(r.get(g)) for r in runs.values())]
    if scalars:
        rows = {n: {g: runs[n].get(g) for g in scalars} for n in names}
        parts.append("<h3>Runs</h3>" + _matrix(rows, names, "analysis-runs"))
    for index, group in enumerate(g for g in groups if g not in scalars):
        rows = {n: flatten(runs[n].get(group)) for n in names if runs[n].get(group) is not None}
        if not rows:
            continue
        table = _matrix(rows, names, f"analysis-{group}")
        parts.append(f'<details class="metric-group" data-group="{_esc(group)}"'
                     f'{" open" if index < 2 else ""}><summary>{_esc(group)}</summary>{table}'
                     "</details>")  # fmt: skip
    comparisons = result.get("comparisons") or []
    if comparisons:
        labels = [f"{c.get('a')} \u2212 {c.get('b')}" for c in comparisons]
        rows = {label: flatten({k: v for k, v in c.items() if k not in ("a", "b")})
                for label, c in zip(labels, comparisons, strict=True)}  # fmt: skip
        parts.append('<details class="metric-group" data-group="comparisons" open><summary>'
                     "Pairwise comparisons (first run minus second)</summary>"
                     + _matrix(rows, labels, "analysis-comparisons") + "</details>")  # fmt: skip
    stability = result.get("stability") or {}
    if isinstance(stability, dict) and stability:
        rows = {agent: flatten(v) for agent, v in stability.items()}
        parts.append('<details class="metric-group" data-group="stability" open><summary>'
                     "Stability across repeated runs</summary>"
                     + _matrix(rows, list(rows), "analysis-stability") + "</details>")  # fmt: skip
    return "".join(parts)


@contextlib.contextmanager
def _runs_already_read(metrics: Any, runs: list[Run]):
    """Let ``analyze_runs`` use the episodes this report has already read instead of parsing
    every ``episodes.jsonl`` a second time (about a fifth of the report's time on full runs):
    its ``load_run`` is swapped, for the call only, for one that answers from memory."""
    original = getattr(metrics, "load_run", None)
    if original is None:
        yield
        return
    cache = {str(Path(r.directory)): (r.manifest, r.episodes) for r in runs}

    def load_run(run_dir):
        hit = cache.get(str(Path(run_dir)))
        return hit if hit is not None else original(run_dir)

    metrics.load_run = load_run
    try:
        yield
    finally:
        metrics.load_run = original


def _analyze(runs: list[Run], tasks: dict[str, Task], notes: list[str]) -> dict | None:
    """``analyze_runs`` on the runs (with the per-episode rows the figures need), or None."""
    try:
        from travelgym.suites.compass.analysis import metrics
    except ImportError:
        notes.append(
            "travelgym.suites.compass.analysis.metrics is not installed: no extra metric tables"
        )
        return None
    import inspect

    kwargs: dict[str, Any] = {}
    params = inspect.signature(metrics.analyze_runs).parameters
    if "tasks" in params:
        kwargs["tasks"] = tasks
    if "allow_mixed" in params:  # a report shows everything, and says what a row mixes
        kwargs["allow_mixed"] = True
    try:
        with _runs_already_read(metrics, runs):
            result = metrics.analyze_runs([r.directory for r in runs], **kwargs)
    except Exception as exc:  # noqa: BLE001 - the rest of the report is still worth having
        notes.append(f"analyze_runs failed: {type(exc).__name__}: {exc}")
        return None
    if not isinstance(result, dict):
        return {"result": result}
    for agent, row in (result.get("stability") or {}).items():
        if isinstance(row, dict) and row.get("mixed"):
            notes.append(f"the stability row of {agent} pools runs that differ in "
                         f"{' and '.join(row['mixed'])}")  # fmt: skip
    return result


def _analysis_section(result: dict[str, Any]) -> str:
    result = _finite(result)
    for run in (result.get("runs") or {}).values():
        if isinstance(run, dict):
            run.pop("episodes", None)  # per-episode rows: the viewer shows the episodes
    raw = html.escape(json.dumps(result, indent=1, default=str))
    return (f'<section id="analysis"><h2>Analysis</h2>{render_analysis(result)}'
            f"<details><summary>Raw analysis JSON</summary><pre class='raw'>{raw}</pre></details>"
            "</section>")  # fmt: skip


def _plots_section(source: dict[str, Any] | list[Path], notes: list[str]) -> str:
    try:
        from travelgym.suites.compass.analysis.plots import write_plots
    except ImportError:
        notes.append("travelgym.suites.compass.analysis.plots is not installed: no figures")
        return ""
    import inspect

    params = inspect.signature(write_plots).parameters
    kwargs = {"formats": ("svg",)} if "formats" in params else {}
    figures = []
    with tempfile.TemporaryDirectory(prefix="travelgym-report-") as tmp:
        try:
            paths = [Path(p) for p in write_plots(source, Path(tmp), **kwargs)]
        except Exception as exc:  # noqa: BLE001
            notes.append(f"write_plots failed: {type(exc).__name__}: {exc}")
            return ""
        stems: dict[str, dict[str, Path]] = {}
        for path in paths:
            stems.setdefault(path.stem, {})[path.suffix.lower()] = path
        for stem, by_suffix in stems.items():
            svg, png = by_suffix.get(".svg"), by_suffix.get(".png")
            if svg is not None and (svg.stat().st_size <= PLOT_SVG_MAX_BYTES or png is None):
                mime, data = "image/svg+xml", svg.read_bytes()
            elif png is not None:
                mime, data = "image/png", png.read_bytes()
            else:
                continue
            uri = f"data:{mime};base64,{base64.b64encode(data).decode()}"
            caption = stem.replace("_", " ").replace("-", " ")
            figures.append(f'<figure class="plot" data-plot="{_esc(stem)}"><img alt="{_esc(caption)}" '
                           f'src="{uri}"><figcaption>{_esc(caption)}</figcaption></figure>')  # fmt: skip
    if not figures:
        return ""
    return (
        f'<section id="plots"><h2>Figures</h2><div class="plots">{"".join(figures)}</div></section>'
    )


# --------------------------------------------------------------------------- the report


def write_report(
    run_dirs: list[Path],
    out: Path,
    *,
    data_dir: Path | None = None,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    include_analysis: bool = True,
    title: str | None = None,
) -> ReportResult:
    """Write the HTML report of ``run_dirs`` to ``out`` and say what went into it."""
    from travelgym.suites.compass.scoring import PlanScore, summarize
    from travelgym.suites.compass.tasks import PACKAGE_TASKS

    if not run_dirs:
        raise RunDirError("no run directory given")

    timings: dict[str, float] = {}
    notes: list[str] = []
    clock = time.perf_counter()
    runs = load_runs(list(run_dirs))
    notes += tamper_notes(runs)
    timings["read_s"] = time.perf_counter() - clock

    clock = time.perf_counter()
    summaries = []
    for run in runs:
        scores = [PlanScore.model_validate(e.score) for e in run.episodes if e.score]
        summaries.append((run, summarize(scores)))
    timings["summaries_s"] = time.perf_counter() - clock

    clock = time.perf_counter()
    tasks = {t.task_id: t for t in load_tasks()}
    from travelgym.suites.compass.ground_truth import tasks_sha256

    current_sha = tasks_sha256(PACKAGE_TASKS)
    for run in runs:
        sha = run.manifest.get("tasks_sha256")
        if sha and sha != current_sha:
            notes.append(f"{run.label}: its task file differs from the installed one; verdicts "
                         "use the installed tasks")  # fmt: skip
    verdicts = Verdicts(tasks, data_dir)
    encoder = _Encoder(verdicts, max_result_chars)
    try:
        run_records = []
        for run in runs:
            episodes = sorted(run.episodes, key=lambda e: (e.task_id, e.trial))
            run_records.append({
                "label": run.label, "agent": run.manifest.get("agent", run.label),
                "user": run.manifest.get("user"), "dir": str(run.directory),
                "db_seed": run.db_seed, "seed": run.manifest.get("seed"),
                "episodes": [encoder.episode(run.db_seed, e) for e in episodes],
            })  # fmt: skip
        used = {e.task_id for run in runs for e in run.episodes}
        seeds = sorted({run.db_seed for run in runs})
        truths = verdicts.truths.get(seeds[0]) or verdicts.database(seeds[0])[1]
        task_records = {tid: _task_record(tasks[tid], truths.get(tid))
                        for tid in sorted(used) if tid in tasks}  # fmt: skip
        unknown = sorted(used - set(tasks))
        if unknown:
            notes.append(f"{len(unknown)} task(s) not in the installed task file: "
                         f"{', '.join(unknown[:10])}")  # fmt: skip
    finally:
        verdicts.close()
    timings["verdicts_s"] = time.perf_counter() - clock
    if encoder.results_cut:
        notes.append(f"{encoder.results_cut} tool result(s) longer than {max_result_chars:,} "
                     "characters were cut in the embedded data")  # fmt: skip

    clock = time.perf_counter()
    analysis = plots = ""
    if include_analysis:
        result = _analyze(runs, tasks, notes)
        timings["analysis_s"] = time.perf_counter() - clock
        clock = time.perf_counter()
        if result is not None:
            plots = _plots_section(result, notes)  # before the episode rows are dropped
            analysis = _analysis_section(result)
        timings["figures_tables_s"] = time.perf_counter() - clock

    clock = time.perf_counter()
    generated = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    data = {
        "generated": generated,
        "runs": run_records,
        "tasks": task_records,
        "verdicts": _finite(verdicts.items),
        "tools": encoder.tools,
        "arguments": _finite(encoder.arguments),
        "prompts": encoder.prompts,
        "max_result_chars": max_result_chars,
    }
    title = title or "COMPASS report: " + ", ".join(r.label for r in runs)
    document = _document(title, generated, runs, summaries, analysis, plots, notes,
                         embed_json(data))  # fmt: skip
    out = write_text_atomic(out, document)
    timings["html_s"] = time.perf_counter() - clock
    return ReportResult(path=out, size_bytes=out.stat().st_size, runs=len(runs),
                        episodes=sum(len(r.episodes) for r in runs), verdicts=len(verdicts.items),
                        timings={k: round(v, 3) for k, v in timings.items()},
                        notes=notes)  # fmt: skip


def _document(title: str, generated: str, runs: list[Run], summaries, analysis: str, plots: str,
              notes: list[str], data_json: str) -> str:  # fmt: skip
    nav = ['<a href="#summary">Summary</a>']
    if analysis:
        nav.append('<a href="#analysis">Analysis</a>')
    if plots:
        nav.append('<a href="#plots">Figures</a>')
    nav.append('<a href="#viewer">Trajectories</a>')
    note_html = ""
    if notes:
        note_html = ('<ul class="notes" id="report-notes">'
                     + "".join(f"<li>{_esc(n)}</li>" for n in notes) + "</ul>")  # fmt: skip
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="travelgym report">
<title>{_esc(title)}</title>
<script>{ERROR_HOOK_JS}</script>
<style>{REPORT_CSS}</style>
</head>
<body>
<header>
<h1>{_esc(title)}</h1>
<p class="meta">Generated {_esc(generated)} from {len(runs)} run(s),
{sum(len(r.episodes) for r in runs)} episode(s). Percentages of episodes; OR-A = feasible and
within the top A&nbsp;% of the task's feasible plans.</p>
<nav>{" ".join(nav)}</nav>
{note_html}
</header>
<main>
<section id="summary">
<h2>Summary</h2>
{_run_facts(runs)}
{_summary_tables(summaries)}
</section>
{analysis}
{plots}
<section id="viewer">
<h2>Trajectories</h2>
<div class="controls">
<label>Run <select id="run-select"></select></label>
<label>Level <select id="level-filter"><option value="">all</option><option value="1">I</option>
<option value="2">II</option><option value="3">III</option></select></label>
<label>Outcome <select id="outcome-filter"><option value="">all</option>
<option value="feasible">feasible</option><option value="infeasible">infeasible</option>
<option value="optimal">optimal</option><option value="suboptimal">feasible, not optimal</option>
<option value="error">errors</option></select></label>
<label>Find <input id="task-filter" type="search" placeholder="task id, park, words in the conversation"></label>
<span id="list-count"></span>
</div>
<div class="viewer-body">
<ol id="episode-list" aria-label="episodes"></ol>
<article id="episode-view"><p class="hint">Pick a task on the left.</p></article>
</div>
</section>
</main>
<pre id="console-errors" hidden></pre>
<script type="application/json" id="report-data">{data_json}</script>
<script>{VIEWER_JS}</script>
</body>
</html>
"""
