"""Behavior2Trip's part of the HTML report (:func:`report_body`; the page itself is the shared
shell, :mod:`travelgym.report.shell`). It supplies

- a summary table per run: DR, C micro/macro, UPC micro/macro, final and n, overall and by
  difficulty, from :func:`travelgym.suites.behavior2trip.scoring.summarize` on the episodes'
  stored scores;
- the pass rate of each of the 32 checks among the answers it applies to;
- the instance viewer's data (:mod:`.report_data`) and script (``report_assets/viewer.js``):
  pick an instance and read the instruction, the behaviour trajectory (collapsed), the agent's
  steps (thoughts, tool calls with arguments and results, memory operations, invalid actions),
  the final plan day by day (:func:`travelgym.suites.behavior2trip.plan.parse_plan`) and every
  check's verdict and reason.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from travelgym.report.body import ReportBody, ReportRun, Section, Viewer, viewer_filters
from travelgym.report.markup import DEFAULT_MAX_RESULT_CHARS, esc, finite, pct
from travelgym.report.page import asset
from travelgym.report.run_facts import (
    manifest_fact,
    provenance_fact,
    terminations,
    unscored,
)
from travelgym.report.tables import facts_table, metric_table
from travelgym.suites.behavior2trip.columns import METRIC_COLUMNS, OPTIONAL

# the suite's columns (labels, keys in the tooltips) less the judge's and RQ1's
TRIP_METRICS = tuple(c for c in METRIC_COLUMNS if c.key not in OPTIONAL)
LEGEND = ("DR = delivery rate; micro = passed checks among\napplicable checks; macro = answers "
          "passing all their applicable checks of the group; Final = C\nand UPC both passed "
          "(percent).")  # fmt: skip
CHECKS_NOTE = ('<p class="note">Pass rate of each check among the scored answers it applies to '
               "(passed /\napplicable); an undelivered answer fails every applicable check.</p>")  # fmt: skip
VIEWER_OUTCOMES = {"final": "final pass", "failed": "some check failed", "undelivered": "no plan",
                   "invalid": "invalid actions"}  # fmt: skip
VIEWER_LEVELS = {"easy": "easy", "medium": "medium", "hard": "hard"}
VIEWER = Viewer("Instances", viewer_filters("Difficulty", VIEWER_LEVELS, VIEWER_OUTCOMES),
                find_placeholder="instance id, words", list_label="instances",
                hint="Pick an instance on the left.")  # fmt: skip


def summary_tables(summaries: list[tuple[ReportRun, dict[str, Any]]]) -> str:
    """The metrics overall and by difficulty, one row per run (``n`` tagged too)."""
    from travelgym.suites.behavior2trip.profiles import DIFFICULTIES

    overall = [(r.label, r.label, "overall", s["overall"]) for r, s in summaries]
    levels = [d for d in DIFFICULTIES if any(d in s["by_difficulty"] for _, s in summaries)]
    by_level = [(f"{lv} \u00b7 {r.label}", r.label, lv, s["by_difficulty"][lv])
                for lv in levels for r, s in summaries if lv in s["by_difficulty"]]  # fmt: skip
    return "\n".join([
        metric_table("Overall", "summary-overall", TRIP_METRICS, overall, tag_n=True),
        metric_table("By difficulty", "summary-difficulty", TRIP_METRICS, by_level, tag_n=True),
    ])  # fmt: skip


def check_rates(runs: list[ReportRun]) -> dict[str, dict[str, list[int]]]:
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
            + "".join(f"<th>{esc(label)}: pass rate (%)</th>" for label in labels)
            + "</tr></thead>")  # fmt: skip
    body = []
    for check in catalog:
        cells = []
        for label in labels:
            passed, applicable, _ = rates[label].get(check["id"], [0, 0, 0])
            rate = 100.0 * passed / applicable if applicable else None
            cls = "num" + (" low" if rate is not None and rate < 50 else "")
            cells.append(f'<td class="{cls}" data-run="{esc(label)}" data-check="'
                         f'{esc(check["id"])}" title="{passed} of {applicable} applicable">'
                         f"{pct(rate)} <span class='note'>({passed}/{applicable})</span></td>")  # fmt: skip
        title = f"{check['title']}: {check['rule']}" if check["title"] else ""
        body.append(f"<tr><th scope='row' title='{esc(title)}'><code>{esc(check['id'])}</code>"
                    f"</th><td>{esc(check['group'])}</td><td>{esc(check['category'])}</td>"
                    f"{''.join(cells)}</tr>")  # fmt: skip
    body_html = "".join(body)
    return f'<table class="metrics" id="check-rates">{head}<tbody>{body_html}</tbody></table>'


def run_facts(runs: list[ReportRun]) -> str:
    """One row per run: split, episodes (unscored, with invalid actions), how they ended, db
    seed, when it was made and where it is, and the code it ran (commit, Python, packages)."""
    rows = [(run.label, manifest_fact(run, "split"), len(run.episodes), unscored(run),
             sum(1 for e in run.episodes if e.p_action < 0), terminations(run),
             manifest_fact(run, "db_seed"), manifest_fact(run, "created"), str(run.directory),
             provenance_fact(run))
            for run in runs]  # fmt: skip
    return facts_table(("run", "split", "episodes", "unscored", "with invalid actions",
                        "termination", "db seed", "created", "directory", "code"),
                       rows)  # fmt: skip


def report_body(runs: list[ReportRun], *, data_dir: Path | None = None,
                max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
                include_analysis: bool = True) -> ReportBody:  # fmt: skip
    """The summary and checks sections and the viewer's data of Behavior2Trip ``runs``
    (``include_analysis``: Behavior2Trip has no analysis section)."""
    from travelgym.suites.behavior2trip.report_data import run_records, trajectories
    from travelgym.suites.behavior2trip.scoring import summarize

    timings: dict[str, float] = {}
    notes: list[str] = []
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
    records, catalog = run_records(runs, max_result_chars)
    behaviour = trajectories(runs, data_dir, notes)
    timings["episodes_s"] = time.perf_counter() - clock

    checks_html = check_table(catalog, check_rates(runs))
    sections = [Section("summary", "Summary", f"{run_facts(runs)}\n{summary_tables(summaries)}"),
                Section("checks", "Checks", f"{CHECKS_NOTE}\n{checks_html}")]  # fmt: skip
    data = finite({"suite": "behavior2trip", "runs": records, "checks": catalog,
                   "trajectories": behaviour})  # fmt: skip
    return ReportBody(legend=LEGEND, sections=sections, viewer=VIEWER, data=data,
                      css=asset(__package__, "report_assets", "viewer.css"),
                      js=asset(__package__, "report_assets", "viewer.js"),
                      verdicts=sum(1 for r in runs for e in r.episodes if e.score), notes=notes,
                      timings=timings,
                      lazy_keys=("steps", "days", "problems", "memory", "answer"))  # fmt: skip
