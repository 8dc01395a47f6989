"""The HTML report of Behavior2Trip run directories (``manifest.json`` with ``"suite":
"behavior2trip"``); :func:`travelgym.suites.compass.report.write_report` hands such runs here.

Like the COMPASS report the page is one self-contained file (inline CSS and JavaScript, the data
as JSON in a ``<script type="application/json">`` element, every ``<`` escaped). It shows

- a summary table per run: DR, C micro/macro, UPC micro/macro, final and n, overall and by
  difficulty, from :func:`travelgym.suites.behavior2trip.scoring.summarize` on the episodes' stored scores;
- the pass rate of each of the 32 checks among the answers it applies to;
- a viewer: pick an instance and read the instruction, the behaviour trajectory (collapsed), the
  agent's steps (thoughts, tool calls with arguments and results, memory operations, invalid
  actions), the final plan day by day (:func:`travelgym.suites.behavior2trip.plan.parse_plan`) and every
  check's verdict and reason.

The viewer reads ``#run=N&task=INSTANCE_ID`` from the URL; script errors are recorded in
``#console-errors`` and ``data-ready="1"`` is set on ``<html>`` when the viewer has rendered.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from travelgym.atomic import write_text_atomic
from travelgym.report.assets import DOM_HELPERS_JS, ERROR_HOOK_JS, REPORT_CSS
from travelgym.runner.integrity import tamper_notes
from travelgym.runner.run_manifest import read_manifest
from travelgym.runner.store import RunDirError
from travelgym.suites.compass.report import (
    DEFAULT_MAX_RESULT_CHARS,
    MAX_ARGUMENT_CHARS,
    MAX_TEXT_CHARS,
    ReportResult,
    _clip,
    _esc,
    _finite,
    _json_text,
    embed_json,
)

SUITE = "behavior2trip"
TRIP_METRICS = (("DR", "DR"), ("C_micro", "C micro"), ("C_macro", "C macro"),
                ("UPC_micro", "UPC micro"), ("UPC_macro", "UPC macro"), ("final", "Final"))  # fmt: skip
MAX_TRAJECTORY_ACTIONS = 300  # behaviour actions embedded per instance (the viewer shows 20 first)
MAX_ANSWER_CHARS = 60000


def run_suite(directory: Path) -> str:
    """The suite a run directory's manifest names (``compass`` when it names none)."""
    return str(read_manifest(directory).get("suite") or "compass")


@dataclass
class TripRun:
    directory: Path
    manifest: dict[str, Any]
    episodes: list[Any]  # TripEpisode
    label: str = ""


def load_trip_runs(run_dirs: list[Path]) -> list[TripRun]:
    from travelgym.runner.store import read_episodes
    from travelgym.suites.behavior2trip.episode import TripEpisode

    runs = []
    for directory in run_dirs:
        directory = Path(directory)
        manifest = read_manifest(directory, required=True)
        runs.append(TripRun(directory, manifest, read_episodes(directory, TripEpisode)))
    labels = [r.manifest.get("agent") or r.directory.name for r in runs]
    for run, label in zip(runs, labels, strict=True):
        run.label = label if labels.count(label) == 1 else f"{label} ({run.directory.name})"
    seen: dict[str, int] = {}
    for run in runs:
        seen[run.label] = seen.get(run.label, 0) + 1
        if seen[run.label] > 1:
            run.label = f"{run.label} #{seen[run.label]}"
    return runs


# --------------------------------------------------------------------------- embedded data


def _call(c, max_result_chars: int) -> dict[str, Any]:
    out: dict[str, Any] = {"n": c.name, "a": _clip(_json_text(c.arguments), MAX_ARGUMENT_CHARS),
                           "ok": 1 if c.ok else 0, "rc": c.result_chars}  # fmt: skip
    if c.result is not None:
        out["r"] = _clip(_json_text(c.result), max_result_chars)
    if c.error_category or c.error_message:
        out["e"] = f"{c.error_category or 'error'}: {c.error_message or ''}"
    return out


def _step(s, max_result_chars: int) -> dict[str, Any]:
    out: dict[str, Any] = {"i": s.index}
    if s.text:
        out["x"] = _clip(s.text, MAX_TEXT_CHARS)
    if s.think:
        out["th"] = _clip(s.think, MAX_TEXT_CHARS)
    if s.tool_calls:
        out["calls"] = [_call(c, max_result_chars) for c in s.tool_calls]
    if s.memory_ops:
        out["mem"] = [{"a": m.action, "k": m.key, "v": _clip(_json_text(m.value), 4000),
                       "ok": 1 if m.ok else 0, "r": _clip(m.response or "", 2000)}
                      for m in s.memory_ops]  # fmt: skip
    if s.invalid_actions:
        out["inv"] = [{"s": a.source, "k": a.kind, "m": _clip(a.message, 4000),
                       "raw": _clip(a.raw or "", 4000)} for a in s.invalid_actions]  # fmt: skip
    if s.observation:
        out["obs"] = _clip(s.observation, MAX_TEXT_CHARS)
    if s.answer:
        out["ans"] = 1
    return out


def _plan(answer: str | None) -> tuple[list[dict[str, Any]] | None, list[str]]:
    from travelgym.suites.behavior2trip.plan import parse_plan

    if answer is None:
        return None, ["no answer"]
    try:
        plan, problems = parse_plan(answer)
    except Exception as exc:  # noqa: BLE001 - one odd answer must not stop the report
        return None, [f"the plan could not be parsed: {type(exc).__name__}: {exc}"]
    if plan is None:
        return None, list(problems)
    return plan.to_json(), list(problems) + list(plan.issues)


def _episode(e, check_index: dict[str, int], max_result_chars: int) -> dict[str, Any]:
    days, problems = _plan(e.final_answer)
    out: dict[str, Any] = {
        "id": e.episode_id, "task": e.instance_id, "trial": e.trial, "diff": e.difficulty,
        "term": e.termination, "inv": e.invalid_actions, "calls": e.tool_calls,
        "dur": round(e.duration_s, 3), "instr": _clip(e.instruction, MAX_TEXT_CHARS),
        "steps": [_step(s, max_result_chars) for s in e.steps], "days": days,
        "problems": problems,
    }  # fmt: skip
    if e.error:
        out["err"] = _clip(e.error, MAX_TEXT_CHARS)
    if e.final_answer is not None:
        out["answer"] = _clip(e.final_answer, MAX_ANSWER_CHARS)
    if e.memory:
        out["memory"] = _clip(_json_text(e.memory), 8000)
    if e.score:
        s = e.score
        out["score"] = {k: s.get(k) for k in ("delivered", "c_passed", "c_applicable", "upc_passed",
                                               "upc_applicable", "c_pass", "upc_pass", "final")}  # fmt: skip
        out["score"]["problems"] = s.get("problems") or []
        checks = []
        for c in s.get("checks") or []:
            cid = c.get("id")
            if cid not in check_index:
                check_index[cid] = len(check_index)
            checks.append([check_index[cid], c.get("passed"), c.get("reason", "")])
        out["checks"] = checks
    return out


def _trajectories(runs: list[TripRun], data_dir: Path | None,
                  notes: list[str]) -> dict[str, dict[str, Any]]:  # fmt: skip
    """The behaviour trajectory (first actions) of every instance the runs used, read from the
    installed instance files (never generated here)."""
    from travelgym.suites.behavior2trip.instances import instances_path, iter_instances

    wanted: dict[str, set[str]] = {}
    for run in runs:
        for e in run.episodes:
            split = e.split or run.manifest.get("split", "test")
            wanted.setdefault(split, set()).add(e.instance_id)
    out: dict[str, dict[str, Any]] = {}
    for split, ids in sorted(wanted.items()):
        try:
            path = instances_path(split, data_dir)
        except Exception as exc:  # noqa: BLE001
            notes.append(f"no behaviour trajectories: {type(exc).__name__}: {exc}")
            continue
        if not path.exists():
            notes.append(f"no behaviour trajectories: {path} does not exist (run "
                         "`travelgym run behavior2trip` once with this data directory)")  # fmt: skip
            continue
        try:
            for x in iter_instances(path, check=False):
                if x.instance_id in ids:
                    actions = [a.model_dump(mode="json", exclude_none=True)
                               for a in x.trajectory[:MAX_TRAJECTORY_ACTIONS]]  # fmt: skip
                    out[x.instance_id] = {"n": len(x.trajectory), "actions": actions}
        except ValueError as exc:
            notes.append(f"no behaviour trajectories from {path}: {exc}")
    missing = {i for ids in wanted.values() for i in ids} - set(out)
    if missing and out:
        notes.append(f"{len(missing)} instance(s) not in the installed instance files: "
                     f"{', '.join(sorted(missing)[:10])}")  # fmt: skip
    return out


# --------------------------------------------------------------------------- HTML pieces


def _pct(value: Any) -> str:
    return f"{value:.1f}" if isinstance(value, int | float) else "\u2013"


def _summary_row(label: str, run: str, group: str, agg: dict[str, Any]) -> str:
    cells = [f'<th scope="row">{_esc(label)}</th>',
             f'<td class="num" data-run="{_esc(run)}" data-group="{_esc(group)}" '
             f'data-metric="n">{agg.get("n", 0)}</td>']  # fmt: skip
    for key, _ in TRIP_METRICS:
        cells.append(f'<td class="num" data-run="{_esc(run)}" data-group="{_esc(group)}" '
                     f'data-metric="{key}">{_pct(agg.get(key))}</td>')  # fmt: skip
    return "<tr>" + "".join(cells) + "</tr>"


def summary_tables(summaries: list[tuple[TripRun, dict[str, Any]]]) -> str:
    head = ("<thead><tr><th></th><th>n</th>"
            + "".join(f"<th>{_esc(name)} (%)</th>" for _, name in TRIP_METRICS)
            + "</tr></thead>")  # fmt: skip
    parts = ['<h3>Overall</h3><table class="metrics" id="summary-overall">' + head + "<tbody>"]
    for run, summary in summaries:
        parts.append(_summary_row(run.label, run.label, "overall", summary["overall"]))
    parts.append("</tbody></table>")
    from travelgym.suites.behavior2trip.profiles import DIFFICULTIES

    levels = [d for d in DIFFICULTIES if any(d in s["by_difficulty"] for _, s in summaries)]
    parts.append('<h3>By difficulty</h3><table class="metrics" id="summary-difficulty">' + head
                 + "<tbody>")  # fmt: skip
    for level in levels:
        for run, summary in summaries:
            if level in summary["by_difficulty"]:
                parts.append(_summary_row(f"{level} \u00b7 {run.label}", run.label, level,
                                          summary["by_difficulty"][level]))  # fmt: skip
    parts.append("</tbody></table>")
    return "\n".join(parts)


def check_catalog(seen: list[str]) -> list[dict[str, str]]:
    """Id, group, category, title and rule of the 32 checks, then any other id the scores
    name (in the order met)."""
    try:
        from travelgym.suites.behavior2trip.checks import CHECKS
    except ImportError:  # pragma: no cover - the checks ship with the package
        CHECKS = ()
    out = [{"id": c.id, "group": c.group, "category": c.category, "title": c.title,
            "rule": c.rule} for c in CHECKS]  # fmt: skip
    known = {c["id"] for c in out}
    return out + [{"id": i, "group": "", "category": "", "title": "", "rule": ""}
                  for i in seen if i not in known]  # fmt: skip


def check_rates(runs: list[TripRun]) -> dict[str, dict[str, list[int]]]:
    """run label -> check id -> [passed, applicable, answers scored]."""
    out: dict[str, dict[str, list[int]]] = {}
    for run in runs:
        rates = out.setdefault(run.label, {})
        for e in run.episodes:
            for c in (e.score or {}).get("checks") or []:
                row = rates.setdefault(c.get("id"), [0, 0, 0])
                row[2] += 1
                if c.get("passed") is not None:
                    row[1] += 1
                    row[0] += bool(c.get("passed"))
    return out


def check_table(catalog: list[dict[str, str]], rates: dict[str, dict[str, list[int]]]) -> str:
    labels = list(rates)
    head = ("<thead><tr><th>check</th><th>group</th><th>category</th>"
            + "".join(f"<th>{_esc(label)}: pass rate (%)</th>" for label in labels)
            + "</tr></thead>")  # fmt: skip
    body = []
    for check in catalog:
        cells = []
        for label in labels:
            passed, applicable, _ = rates[label].get(check["id"], [0, 0, 0])
            rate = 100.0 * passed / applicable if applicable else None
            cls = "num" + (" low" if rate is not None and rate < 50 else "")
            cells.append(f'<td class="{cls}" data-run="{_esc(label)}" data-check="'
                         f'{_esc(check["id"])}" title="{passed} of {applicable} applicable">'
                         f"{_pct(rate)} <span class='note'>({passed}/{applicable})</span></td>")  # fmt: skip
        title = f"{check['title']}: {check['rule']}" if check["title"] else ""
        body.append(f"<tr><th scope='row' title='{_esc(title)}'><code>{_esc(check['id'])}</code>"
                    f"</th><td>{_esc(check['group'])}</td><td>{_esc(check['category'])}</td>"
                    f"{''.join(cells)}</tr>")  # fmt: skip
    body_html = "".join(body)
    return f'<table class="metrics" id="check-rates">{head}<tbody>{body_html}</tbody></table>'


def run_facts(runs: list[TripRun]) -> str:
    rows = []
    for run in runs:
        m = run.manifest
        terms: dict[str, int] = {}
        for e in run.episodes:
            terms[e.termination] = terms.get(e.termination, 0) + 1
        unscored = sum(1 for e in run.episodes if not e.score)
        invalid = sum(1 for e in run.episodes if e.p_action < 0)
        rows.append("<tr>" + "".join(f"<td>{_esc(v)}</td>" for v in (
            run.label, m.get("split", "\u2013"), len(run.episodes), unscored, invalid,
            ", ".join(f"{k} {v}" for k, v in sorted(terms.items())), m.get("db_seed", "\u2013"),
            m.get("created", "\u2013"), str(run.directory))) + "</tr>")  # fmt: skip
    head = ("<thead><tr><th>run</th><th>split</th><th>episodes</th><th>unscored</th>"
            "<th>with invalid actions</th><th>termination</th><th>db seed</th><th>created</th>"
            "<th>directory</th></tr></thead>")  # fmt: skip
    return f'<table class="runs" id="run-facts">{head}<tbody>{"".join(rows)}</tbody></table>'


# --------------------------------------------------------------------------- the report


def write_trip_report(run_dirs: list[Path], out: Path, *, data_dir: Path | None = None,
                      max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
                      title: str | None = None) -> ReportResult:  # fmt: skip
    """Write the HTML report of Behavior2Trip ``run_dirs`` to ``out``."""
    from travelgym.suites.behavior2trip.scoring import summarize

    timings: dict[str, float] = {}
    notes: list[str] = []
    clock = time.perf_counter()
    if not run_dirs:
        raise RunDirError("no run directory given")
    runs = load_trip_runs(list(run_dirs))
    notes += tamper_notes(runs)
    timings["read_s"] = time.perf_counter() - clock

    clock = time.perf_counter()
    summaries = []
    for run in runs:
        scores = [e.score for e in run.episodes if e.score]
        summaries.append((run, summarize(scores)))
        if len(scores) < len(run.episodes):
            notes.append(f"{run.label}: {len(run.episodes) - len(scores)} unscored episode(s) "
                         "are left out of the tables")  # fmt: skip
    timings["summaries_s"] = time.perf_counter() - clock

    clock = time.perf_counter()
    check_index: dict[str, int] = {}
    records = []
    for run in runs:
        episodes = sorted(run.episodes, key=lambda e: (e.instance_id, e.trial))
        records.append({"label": run.label, "agent": run.manifest.get("agent", run.label),
                        "dir": str(run.directory), "split": run.manifest.get("split"),
                        "episodes": [_episode(e, check_index, max_result_chars)
                                     for e in episodes]})  # fmt: skip
    catalog = check_catalog(list(check_index))
    position = {c["id"]: i for i, c in enumerate(catalog)}
    remap = {i: position[cid] for cid, i in check_index.items()}
    for record in records:
        for ep in record["episodes"]:
            for row in ep.get("checks", []):
                row[0] = remap[row[0]]
            ep.get("checks", []).sort(key=lambda row: row[0])
    trajectories = _trajectories(runs, data_dir, notes)
    timings["episodes_s"] = time.perf_counter() - clock

    clock = time.perf_counter()
    generated = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    data = {"generated": generated, "suite": SUITE, "runs": records, "checks": catalog,
            "trajectories": trajectories, "max_result_chars": max_result_chars}  # fmt: skip
    title = title or "Behavior2Trip report: " + ", ".join(r.label for r in runs)
    rates = check_rates(runs)
    document = _document(title, generated, runs, summaries, check_table(catalog, rates), notes,
                         embed_json(_finite(data)))  # fmt: skip
    out = write_text_atomic(out, document)
    timings["html_s"] = time.perf_counter() - clock
    return ReportResult(path=out, size_bytes=out.stat().st_size, runs=len(runs),
                        episodes=sum(len(r.episodes) for r in runs),
                        verdicts=sum(1 for r in runs for e in r.episodes if e.score),
                        timings={k: round(v, 3) for k, v in timings.items()},
                        notes=notes)  # fmt: skip


def _document(title: str, generated: str, runs: list[TripRun], summaries, checks_html: str,
              notes: list[str], data_json: str) -> str:  # fmt: skip
    note_html = ""
    if notes:
        note_html = ('<ul class="notes" id="report-notes">'
                     + "".join(f"<li>{_esc(n)}</li>" for n in notes) + "</ul>")  # fmt: skip
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="travelgym report (behavior2trip)">
<title>{_esc(title)}</title>
<script>{ERROR_HOOK_JS}</script>
<style>{REPORT_CSS}{TRIPS_CSS}</style>
</head>
<body data-suite="behavior2trip">
<header>
<h1>{_esc(title)}</h1>
<p class="meta">Generated {_esc(generated)} from {len(runs)} Behavior2Trip run(s),
{sum(len(r.episodes) for r in runs)} episode(s). DR = delivery rate; micro = passed checks among
applicable checks; macro = answers passing all their applicable checks of the group; Final = C
and UPC both passed (percent).</p>
<nav><a href="#summary">Summary</a> <a href="#checks">Checks</a>
<a href="#viewer">Instances</a></nav>
{note_html}
</header>
<main>
<section id="summary">
<h2>Summary</h2>
{run_facts(runs)}
{summary_tables(summaries)}
</section>
<section id="checks">
<h2>Checks</h2>
<p class="note">Pass rate of each check among the scored answers it applies to (passed /
applicable); an undelivered answer fails every applicable check.</p>
{checks_html}
</section>
<section id="viewer">
<h2>Instances</h2>
<div class="controls">
<label>Run <select id="run-select"></select></label>
<label>Difficulty <select id="level-filter"><option value="">all</option>
<option value="easy">easy</option><option value="medium">medium</option>
<option value="hard">hard</option></select></label>
<label>Outcome <select id="outcome-filter"><option value="">all</option>
<option value="final">final pass</option><option value="failed">some check failed</option>
<option value="undelivered">no plan</option><option value="invalid">invalid actions</option>
</select></label>
<label>Find <input id="task-filter" type="search" placeholder="instance id, words"></label>
<span id="list-count"></span>
</div>
<div class="viewer-body">
<ol id="episode-list" aria-label="instances"></ol>
<article id="episode-view"><p class="hint">Pick an instance on the left.</p></article>
</div>
</section>
</main>
<pre id="console-errors" hidden></pre>
<script type="application/json" id="report-data">{data_json}</script>
<script>{TRIPS_VIEWER_JS}</script>
</body>
</html>
"""


TRIPS_CSS = r"""
td.low { color: var(--bad); }
table.checks tr.fail td, table.checks tr.fail th { background: #fdecea; }
table.checks tr.fail td.verdict { color: var(--bad); font-weight: 600; }
table.checks tr.pass td.verdict { color: var(--ok); }
table.checks tr.na td { color: var(--muted); }
table.actions { font-size: 12px; }
ol.steps { list-style: none; padding: 0; margin: 10px 0; }
li.step { margin: 8px 0; padding: 8px 12px; border-radius: 8px; border: 1px solid var(--line);
  background: var(--agent); }
li.step.has-invalid { border-color: var(--bad); }
.think { color: var(--muted); font-style: italic; white-space: pre-wrap; }
.invalid { color: var(--bad); background: #fdecea; border: 1px solid var(--bad); border-radius: 4px;
  padding: 2px 6px; margin: 3px 0; font-size: 12.5px; white-space: pre-wrap; }
.memop { font-size: 12.5px; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.memop.bad { color: var(--bad); }
div.day { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; padding: 6px 10px; }
div.day h4 { margin: 2px 0 6px; }
table.day-items { font-size: 12.5px; }
"""

TRIPS_VIEWER_JS = r"""
(function () {
  'use strict';
  var DATA = JSON.parse(document.getElementById('report-data').textContent);
  var runs = DATA.runs, checks = DATA.checks, trajectories = DATA.trajectories || {};
  var state = { run: 0, id: null };
  var visible = [];
  var SHOW_ACTIONS = 20;

/*DOM_HELPERS*/
  function badge(text, cls, title) { return el('span', { cls: 'badge ' + cls, text: text, title: title }); }
  function str(x) { return x === undefined || x === null ? '' : String(x); }
  function pretty(text) {
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return String(text); }
  }
  function failedChecks(ep) { return (ep.checks || []).filter(function (c) { return c[1] === false; }); }
  function outcome(ep) {
    var s = ep.score;
    if (!s) return badge('unscored', 'muted');
    if (!s.delivered) return badge('\u2717 no plan', 'bad');
    if (s.final) return badge('\u2713 final', 'ok');
    return badge('\u2717 ' + failedChecks(ep).length + ' failed', 'bad');
  }

  function fillRuns() {
    var select = $('run-select');
    runs.forEach(function (run, i) {
      select.appendChild(el('option', { value: String(i), text: run.label + ' (' + run.episodes.length + ')' }));
    });
    select.addEventListener('change', function () { state.run = Number(select.value); renderList(); renderView(); writeHash(); });
  }
  function passes(ep) {
    var level = $('level-filter').value, result = $('outcome-filter').value;
    var words = $('task-filter').value.trim().toLowerCase();
    if (level && ep.diff !== level) return false;
    var s = ep.score || {};
    if (result === 'final' && !s.final) return false;
    if (result === 'failed' && !failedChecks(ep).length) return false;
    if (result === 'undelivered' && s.delivered) return false;
    if (result === 'invalid' && !ep.inv) return false;
    if (words && (ep.task + ' ' + ep.instr).toLowerCase().indexOf(words) < 0) return false;
    return true;
  }
  function renderList() {
    var run = runs[state.run];
    visible = run ? run.episodes.filter(passes) : [];
    var list = $('episode-list');
    list.textContent = '';
    visible.forEach(function (ep) {
      add(list, el('li', { 'data-id': ep.id, cls: ep.id === state.id ? 'selected' : '' },
        el('button', { type: 'button', on: { click: function () { select(ep.id); } } },
          ep.task + (ep.trial ? ' #' + ep.trial : ''), ' ', badge(ep.diff, 'muted'), outcome(ep),
          ep.inv ? badge(ep.inv + ' invalid', 'warn') : null)));
    });
    $('list-count').textContent = visible.length + ' of ' + (run ? run.episodes.length : 0);
  }
  function select(id) {
    state.id = id;
    Array.prototype.forEach.call($('episode-list').children, function (li) {
      li.className = li.getAttribute('data-id') === id ? 'selected' : '';
    });
    renderView();
    writeHash();
  }

  function trajectoryNode(ep) {
    var t = trajectories[ep.task];
    var details = el('details', { cls: 'task', id: 'behaviour' });
    if (!t) {
      add(details, [el('summary', { text: 'Behaviour trajectory (not available)' }),
        el('p', { cls: 'hint', text: 'The instance file was not found when the report was written.' })]);
      return details;
    }
    add(details, el('summary', { text: 'Behaviour trajectory (' + t.n + ' actions)' }));
    var cols = ['session', 'timestamp', 'action_type', 'poi_type', 'poi_name', 'city', 'price', 'categories'];
    function table(actions) {
      return el('table', { cls: 'actions' },
        el('thead', null, el('tr', null, cols.map(function (c) { return el('th', { text: c }); }))),
        el('tbody', null, actions.map(function (a) {
          return el('tr', null, cols.map(function (c) {
            var v = a[c];
            if (c === 'city' && a.origin) v = a.origin + ' \u2192 ' + a.city;
            return el('td', { text: Array.isArray(v) ? v.join(', ') : str(v) });
          }));
        })));
    }
    add(details, table(t.actions.slice(0, SHOW_ACTIONS)));
    if (t.actions.length > SHOW_ACTIONS) {
      var more = el('details', null, el('summary', { text: 'the other ' + (t.actions.length - SHOW_ACTIONS) + ' action(s) embedded' }));
      more.addEventListener('toggle', function () {
        if (more.open && more.children.length === 1) add(more, table(t.actions.slice(SHOW_ACTIONS)));
      });
      add(details, more);
    }
    if (t.n > t.actions.length) add(details, el('p', { cls: 'note', text: (t.n - t.actions.length) + ' later action(s) not embedded' }));
    return details;
  }

  function callNode(c) {
    var details = el('details', { cls: 'call' },
      el('summary', null, el('span', { cls: c.ok ? 'call-ok' : 'call-bad', text: c.ok ? '\u2713 ' : '\u2717 ' }),
        c.n + '(' + (c.a.length > 80 ? c.a.slice(0, 80) + '\u2026' : c.a) + ')',
        el('span', { cls: 'note', text: '  ' + c.rc + ' chars' })));
    details.addEventListener('toggle', function () {
      if (!details.open || details.filled) return;
      details.filled = true;
      add(details, [el('div', { cls: 'note', text: 'arguments' }), el('pre', { cls: 'args', text: pretty(c.a) })]);
      if (c.e) add(details, el('div', { cls: 'error-text', text: c.e }));
      if (c.r !== undefined) add(details, [el('div', { cls: 'note', text: 'result' }), el('pre', { cls: 'result', text: pretty(c.r) })]);
      else if (!c.e) add(details, el('div', { cls: 'note', text: 'result not kept in the trajectory (' + c.rc + ' characters)' }));
    });
    return details;
  }
  function stepNode(s) {
    var li = el('li', { cls: 'step' + (s.inv ? ' has-invalid' : ''), 'data-step': String(s.i) },
      el('div', { cls: 'turn-head', text: 'step ' + s.i + (s.ans ? ' \u00b7 delivered the answer' : '') }));
    if (s.th) add(li, el('div', { cls: 'think', text: s.th }));
    if (s.x) add(li, el('div', { cls: 'turn-text', text: s.x }));
    (s.inv || []).forEach(function (a) {
      add(li, el('div', { cls: 'invalid', text: '\u26a0 invalid ' + a.s + ' action (' + a.k + '): ' + a.m + (a.raw ? '\n' + a.raw : '') }));
    });
    (s.mem || []).forEach(function (m) {
      add(li, el('div', { cls: 'memop' + (m.ok ? '' : ' bad'), text: 'memory ' + m.a + ' ' + m.k + (m.a === 'write' ? ' = ' + m.v : '') + (m.r ? ' \u2192 ' + m.r : '') }));
    });
    if (s.calls) {
      var failed = s.calls.filter(function (c) { return !c.ok; }).length;
      var outer = el('details', { cls: 'calls' }, el('summary', { text: s.calls.length + ' tool call(s)' + (failed ? ', ' + failed + ' failed' : '') }));
      s.calls.forEach(function (c) { add(outer, callNode(c)); });
      add(li, outer);
    }
    if (s.obs) add(li, el('details', null, el('summary', { text: 'observation' }), el('pre', { text: s.obs })));
    return li;
  }

  function money(x) { return x === undefined || x === null ? '' : String(x) + ' CNY'; }
  function span(a, b) { return a || b ? str(a) + '\u2013' + str(b) : ''; }
  function dayNode(d, n) {
    var rows = [];
    (d.intercity_transport || []).forEach(function (l) {
      rows.push(['transport', span(l.departure_time, l.arrival_time), str(l.mode) + ' ' + str(l.number) + ' ' + str(l.from_city) + ' \u2192 ' + str(l.to_city) + (l.seat_class ? ' (' + l.seat_class + ')' : ''), money(l.price)]);
    });
    ['breakfast', 'lunch', 'dinner'].forEach(function (k) {
      var v = d[k];
      if (v) rows.push([k, span(v.start_time, v.end_time), str(v.name) + (v.id ? ' [' + v.id + ']' : ''), money(v.price)]);
    });
    (d.attractions || []).forEach(function (v) { rows.push(['attraction', span(v.start_time, v.end_time), str(v.name) + (v.id ? ' [' + v.id + ']' : ''), money(v.price)]); });
    (d.entertainment || []).forEach(function (v) { rows.push(['entertainment', span(v.start_time, v.end_time), str(v.name) + (v.id ? ' [' + v.id + ']' : ''), money(v.price)]); });
    (d.local_transport || []).forEach(function (l) { rows.push(['local', str(l.start_time), str(l.from) + ' \u2192 ' + str(l.to) + ' by ' + str(l.mode) + (l.minutes ? ', ' + l.minutes + ' min' : ''), money(l.cost)]); });
    var s = d.accommodation;
    if (s) rows.push(['hotel', span(s.check_in_time, s.check_out_time), str(s.name) + (s.id ? ' [' + s.id + ']' : ''), money(s.price)]);
    rows.sort(function (a, b) { return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0; });
    return el('div', { cls: 'day', 'data-day': String(d.day || n + 1) },
      el('h4', { text: 'Day ' + (d.day || n + 1) + (d.date ? ' \u00b7 ' + d.date : '') + (d.city ? ' \u00b7 ' + d.city : '') }),
      d.weather ? el('div', { cls: 'note', text: d.weather }) : null,
      el('table', { cls: 'day-items' }, el('tbody', null, rows.map(function (r) {
        return el('tr', { cls: 'item-' + r[0] }, r.map(function (c) { return el('td', { text: c }); }));
      }))));
  }
  function checksNode(ep) {
    var table = el('table', { cls: 'checks', id: 'check-verdicts' },
      el('thead', null, el('tr', null, ['check', 'group', 'verdict', 'reason'].map(function (h) { return el('th', { text: h }); }))));
    var body = el('tbody');
    (ep.checks || []).forEach(function (c) {
      var info = checks[c[0]] || { id: '?' };
      var cls = c[1] === false ? 'fail' : c[1] === true ? 'pass' : 'na';
      add(body, el('tr', { cls: cls, 'data-check': info.id, title: info.title ? info.title + ': ' + info.rule : null },
        el('th', { scope: 'row' }, el('code', { text: info.id })), el('td', { text: info.group }),
        el('td', { cls: 'verdict', text: c[1] === false ? '\u2717 failed' : c[1] === true ? '\u2713 passed' : 'n/a' }),
        el('td', { text: c[2] })));
    });
    add(table, body);
    return table;
  }
  function scoreCard(ep) {
    var s = ep.score;
    var box = el('div', { cls: 'scorecard ' + (s && s.final ? 'ok' : 'bad'), id: 'scorecard' });
    if (!s) { add(box, 'This episode was not scored.'); return box; }
    var dl = el('dl');
    function row(k, v) { add(dl, [el('dt', { text: k }), el('dd', { text: v })]); }
    row('Delivered', s.delivered ? 'yes' : 'no');
    row('Commonsense (C)', s.c_passed + ' / ' + s.c_applicable + (s.c_pass ? ' \u2713' : ' \u2717'));
    row('User preference (UPC)', s.upc_passed + ' / ' + s.upc_applicable + (s.upc_pass ? ' \u2713' : ' \u2717'));
    row('Final', s.final ? 'passed' : 'failed');
    row('Invalid actions', String(ep.inv) + (ep.inv ? ' (P_action = \u22121)' : ''));
    row('Termination', ep.term + ' \u00b7 ' + ep.calls + ' tool call(s) \u00b7 ' + ep.dur + ' s');
    add(box, dl);
    return box;
  }

  function renderView() {
    var view = $('episode-view');
    view.textContent = '';
    var run = runs[state.run], ep = null;
    if (run && state.id) ep = run.episodes.filter(function (e) { return e.id === state.id; })[0] || null;
    if (!ep) { add(view, el('p', { cls: 'hint', text: 'Pick an instance on the left.' })); return; }
    view.setAttribute('data-episode', ep.id);
    add(view, el('h3', null, ep.task + ' ', badge(ep.diff, 'muted'), outcome(ep)));
    add(view, scoreCard(ep));
    if (ep.err) add(view, el('pre', { cls: 'error-text', text: ep.err }));
    add(view, [el('h4', { text: 'Instruction' }), el('div', { cls: 'turn-text', id: 'instruction', text: ep.instr })]);
    add(view, trajectoryNode(ep));
    add(view, el('h4', { text: 'Agent steps (' + ep.steps.length + ')' }));
    add(view, el('ol', { cls: 'steps', id: 'steps' }, ep.steps.map(stepNode)));
    if (ep.memory) add(view, el('details', null, el('summary', { text: 'memory at the end' }), el('pre', { text: pretty(ep.memory) })));
    add(view, el('h4', { text: 'Final plan' }));
    var plan = el('div', { id: 'plan' });
    if (ep.days) ep.days.forEach(function (d, n) { add(plan, dayNode(d, n)); });
    else add(plan, el('p', { cls: 'error-text', text: 'No plan delivered.' }));
    if (ep.problems && ep.problems.length) add(plan, el('ul', { cls: 'notes', id: 'plan-problems' }, ep.problems.map(function (p) { return el('li', { text: p }); })));
    add(view, plan);
    if (ep.answer) add(view, el('details', null, el('summary', { text: 'raw answer' }), el('pre', { cls: 'raw', text: ep.answer })));
    add(view, el('h4', { text: 'Checks (' + failedChecks(ep).length + ' failed)' }));
    add(view, checksNode(ep));
  }

  function readHash() {
    var params = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (pair) {
      if (!pair) return;
      var i = pair.indexOf('=');
      params[decodeURIComponent(i < 0 ? pair : pair.slice(0, i))] = decodeURIComponent(i < 0 ? '' : pair.slice(i + 1));
    });
    return params;
  }
  function applyHash() {
    var p = readHash();
    if (p.run !== undefined) {
      var index = /^\d+$/.test(p.run) ? Number(p.run) : runs.map(function (r) { return r.label; }).indexOf(p.run);
      if (index >= 0 && index < runs.length) state.run = index;
    }
    $('run-select').value = String(state.run);
    var run = runs[state.run];
    if (run && p.task) {
      var trial = p.trial ? Number(p.trial) : null;
      var ep = run.episodes.filter(function (e) { return e.task === p.task && (trial === null || e.trial === trial); })[0];
      state.id = ep ? ep.id : null;
    }
    renderList();
    renderView();
  }
  function writeHash() {
    var run = runs[state.run], ep = null;
    if (run && state.id) ep = run.episodes.filter(function (e) { return e.id === state.id; })[0] || null;
    var hash = '#run=' + state.run + (ep ? '&task=' + encodeURIComponent(ep.task) + '&trial=' + ep.trial : '');
    if (location.hash === hash) return;
    try { history.replaceState(null, '', hash); } catch (e) { /* file: URLs in some browsers */ }
  }

  fillRuns();
  ['level-filter', 'outcome-filter'].forEach(function (id) { $(id).addEventListener('change', renderList); });
  $('task-filter').addEventListener('input', renderList);
  window.addEventListener('hashchange', applyHash);
  applyHash();
  document.documentElement.setAttribute('data-ready', '1');
})();
"""
TRIPS_VIEWER_JS = TRIPS_VIEWER_JS.replace("/*DOM_HELPERS*/\n", DOM_HELPERS_JS)
