"""COMPASS's part of the HTML report (:func:`report_body`; the page itself is the shared shell,
:mod:`travelgym.report.shell`). It supplies

- summary tables per run (FR, OR-5/10/20, optimal; overall, by level, by objective type) from
  :func:`travelgym.suites.compass.scoring.summarize` on the episodes' scores;
- the tables of :func:`travelgym.suites.compass.analysis.metrics.analyze_runs` and the figures of
  :func:`travelgym.suites.compass.analysis.plots.write_plots`, when those modules are installed
  (:mod:`.report_analysis`);
- the trajectory viewer's data and script (``report_assets/viewer.js``): pick a run and a task,
  read the conversation turn by turn (the user's dialogue acts and the simulator's instruction,
  the agent's text, its tool calls and results), and see each recommendation's verdict
  (violated constraints, whether the user had revealed them yet, the plan's rank among all
  feasible plans), computed here on the run's database (:mod:`.report_verdicts`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from travelgym.report.body import (
    ReportBody,
    ReportResult,
    ReportRun,
    Section,
    Viewer,
    viewer_filters,
)
from travelgym.report.markup import DEFAULT_MAX_RESULT_CHARS, finite
from travelgym.report.page import asset
from travelgym.report.run_facts import (
    manifest_fact,
    provenance_fact,
    terminations,
    unscored,
)
from travelgym.report.tables import facts_table, metric_table
from travelgym.suites.compass.tables import METRIC_COLUMNS  # the labels run and score print

LEGEND = ("Percentages of episodes; OR-A = feasible and\nwithin the top A&nbsp;% of the task's "
          "feasible plans.")  # fmt: skip
VIEWER_OUTCOMES = {"feasible": "feasible", "infeasible": "infeasible", "optimal": "optimal",
                   "suboptimal": "feasible, not optimal", "error": "errors"}  # fmt: skip
VIEWER = Viewer("Trajectories", viewer_filters("Level", {"1": "I", "2": "II", "3": "III"},
                                               VIEWER_OUTCOMES),
                find_placeholder="task id, park, words in the conversation",
                list_label="episodes", hint="Pick a task on the left.")  # fmt: skip


def db_seed(run: ReportRun) -> int:
    return int(run.manifest.get("db_seed", 0) or 0)


def summary_tables(summaries: list[tuple[ReportRun, dict[str, Any]]]) -> str:
    """FR, OR-5/10/20 and optimal overall, by level and by objective type, one row per run."""
    overall = [(r.label, r.label, "overall", s["overall"]) for r, s in summaries]
    levels = sorted({lv for _, s in summaries for lv in s["by_level"]})
    by_level = [(f"Level {lv} \u00b7 {r.label}", r.label, f"level-{lv}", s["by_level"][lv])
                for lv in levels for r, s in summaries if lv in s["by_level"]]  # fmt: skip
    objectives = sorted({o for _, s in summaries for o in s["by_objective"]})
    by_objective = [(f"{o} \u00b7 {r.label}", r.label, f"objective-{o}", s["by_objective"][o])
                    for o in objectives for r, s in summaries if o in s["by_objective"]]  # fmt: skip
    return "\n".join([
        metric_table("Overall", "summary-overall", METRIC_COLUMNS, overall),
        metric_table("By level", "summary-level", METRIC_COLUMNS, by_level),
        metric_table("By objective type", "summary-objective", METRIC_COLUMNS, by_objective),
    ])  # fmt: skip


def run_facts(runs: list[ReportRun]) -> str:
    """One row per run: user, episodes (unscored), how they ended, seeds, trials, when it was
    made and where it is, and the code it ran (commit, Python, packages)."""
    rows = [(run.label, manifest_fact(run, "user"), len(run.episodes), unscored(run),
             terminations(run), manifest_fact(run, "seed"), manifest_fact(run, "db_seed"),
             manifest_fact(run, "trials"), manifest_fact(run, "created"), str(run.directory),
             provenance_fact(run))
            for run in runs]  # fmt: skip
    return facts_table(("run", "user", "episodes", "unscored", "termination", "seed", "db seed",
                        "trials", "created", "directory", "code"), rows)  # fmt: skip


def report_body(runs: list[ReportRun], *, data_dir: Path | None = None,
                max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
                include_analysis: bool = True) -> ReportBody:  # fmt: skip
    """The summary, analysis and figures sections and the viewer's data of COMPASS ``runs``."""
    from travelgym.suites.compass.report_data import Encoder, task_record
    from travelgym.suites.compass.report_verdicts import Verdicts
    from travelgym.suites.compass.scoring import PlanScore, summarize
    from travelgym.suites.compass.tasks import load_tasks

    timings: dict[str, float] = {}
    notes: list[str] = []
    clock = time.perf_counter()
    summaries = []
    for run in runs:
        scores = [PlanScore.model_validate(e.score) for e in run.episodes if e.score]
        summaries.append((run, summarize(scores)))
    timings["summaries_s"] = time.perf_counter() - clock

    clock = time.perf_counter()
    tasks = {t.task_id: t for t in load_tasks()}
    wanted: dict[int, set[str]] = {}  # only these tasks' ground truths are needed
    for run in runs:
        wanted.setdefault(db_seed(run), set()).update(e.task_id for e in run.episodes)
    verdicts = Verdicts(tasks, data_dir, wanted)
    for run in runs:
        sha = run.manifest.get("tasks_sha256")
        current_sha = verdicts.task_set(db_seed(run)).sha256
        if sha and sha != current_sha:
            notes.append(f"{run.label}: its task file differs from the installed one; verdicts "
                         "use the installed tasks")  # fmt: skip
    encoder = Encoder(verdicts, max_result_chars)
    try:
        run_records = []
        for run in runs:
            episodes = sorted(run.episodes, key=lambda e: (e.task_id, e.trial))
            run_records.append({
                "label": run.label, "agent": run.manifest.get("agent", run.label),
                "user": run.manifest.get("user"), "dir": str(run.directory),
                "db_seed": db_seed(run), "seed": run.manifest.get("seed"),
                "episodes": [encoder.episode(db_seed(run), e) for e in episodes],
            })  # fmt: skip
        used = {e.task_id for run in runs for e in run.episodes}
        seeds = sorted({db_seed(run) for run in runs})
        truths = verdicts.truths.get(seeds[0]) or verdicts.database(seeds[0])[1]
        seed_tasks = verdicts.tasks_of(seeds[0])
        task_records = {tid: task_record(seed_tasks[tid], truths.get(tid))
                        for tid in sorted(used) if tid in seed_tasks}  # fmt: skip
        unknown = sorted(used - set(seed_tasks))
        if unknown:
            notes.append(f"{len(unknown)} task(s) not in the installed task file: "
                         f"{', '.join(unknown[:10])}")  # fmt: skip
    finally:
        verdicts.close()
    timings["verdicts_s"] = time.perf_counter() - clock
    if encoder.results_cut:
        notes.append(f"{encoder.results_cut} tool result(s) longer than {max_result_chars:,} "
                     "characters were cut in the embedded data")  # fmt: skip

    sections = [Section("summary", "Summary", f"{run_facts(runs)}\n{summary_tables(summaries)}")]
    if include_analysis:
        sections += _analysis(runs, tasks, notes, timings)
    data = {"runs": run_records, "tasks": task_records, "verdicts": finite(verdicts.items),
            "tools": encoder.tools, "arguments": finite(encoder.arguments),
            "prompts": encoder.prompts}  # fmt: skip
    return ReportBody(legend=LEGEND, sections=sections, viewer=VIEWER, data=data,
                      css=asset(__package__, "report_assets", "viewer.css"),
                      js=asset(__package__, "report_assets", "viewer.js"),
                      verdicts=len(verdicts.items), notes=notes, timings=timings,
                      lazy_keys=("turns",), lazy_tables=("arguments",))  # fmt: skip


def _analysis(runs: list[ReportRun], tasks: dict[str, Any], notes: list[str],
              timings: dict[str, float]) -> list[Section]:  # fmt: skip
    """The analysis section, after the figures section (made first: it needs the per-episode
    rows the analysis section drops)."""
    from travelgym.suites.compass.report_analysis import analysis_section, analyze, plots_section

    clock = time.perf_counter()
    result = analyze(runs, tasks, notes)
    timings["analysis_s"] = time.perf_counter() - clock
    clock = time.perf_counter()
    found: list[Section] = []
    if result is not None:
        plots = plots_section(result, notes)  # before the episode rows are dropped
        found = [analysis_section(result)] + ([plots] if plots else [])
    timings["figures_tables_s"] = time.perf_counter() - clock
    return found


def write_report(run_dirs: list[Path], out: Path, **options: Any) -> ReportResult:
    """``travelgym report``'s :func:`travelgym.report.shell.write_report` (kept for callers of
    the old entry point; it writes the report of any suite's runs)."""
    from travelgym.report.shell import write_report as write

    return write(list(run_dirs), out, **options)
