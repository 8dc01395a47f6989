"""``travelgym report``: the report shell. It reads the run directories (one suite, named by
their manifests), asks that suite for its part of the page (:meth:`Suite.report_body
<travelgym.core.suite.Suite.report_body>`), and writes one self-contained HTML file
(:mod:`travelgym.report.page`) atomically."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

from travelgym.atomic import write_text_atomic
from travelgym.core.registry import get_suite, suite_names
from travelgym.core.suite import Suite
from travelgym.core.summary import ACCOUNTING, counted_episodes
from travelgym.core.summary_table import outcome_rows, warnings
from travelgym.report import leaderboard
from travelgym.report.body import ReportBody, ReportResult, ReportRun, Section
from travelgym.report.lazy import pack_episodes
from travelgym.report.markup import DEFAULT_MAX_RESULT_CHARS, embed_json, esc
from travelgym.report.page import document
from travelgym.runner.errors import RunDirError
from travelgym.runner.integrity import tamper_notes
from travelgym.runner.run_manifest import read_manifest
from travelgym.runner.run_summary import summarize_run
from travelgym.runner.store import read_run


def _suite_title(name: str) -> str:
    return get_suite(name).title if name in suite_names() else repr(name or "no suite")


def suite_of_runs(run_dirs: list[Path]) -> str:
    """The one suite all ``run_dirs`` belong to (their manifests'); :class:`RunDirError` when
    they mix suites or none is given."""
    if not run_dirs:
        raise RunDirError("no run directory given")
    found = {Path(d): str(read_manifest(Path(d), required=True).get("suite") or "")
             for d in run_dirs}  # fmt: skip
    names = list(dict.fromkeys(found.values()))
    if len(names) > 1:
        titles = [_suite_title(n) for n in names]
        which = ", ".join(titles[:-1]) + " and " + titles[-1]
        listed = "; ".join(f"{d} ({s or 'no suite'})" for d, s in found.items())
        raise RunDirError(f"cannot mix {which} runs in one report: {listed}; write one report "
                          "per suite")  # fmt: skip
    return names[0]


def load_runs(suite: Suite, run_dirs: list[Path]) -> list[ReportRun]:
    """Read each run directory (manifest and episodes as ``suite``'s model); labels are the
    runs' agents, made unique (by directory name, then by number)."""
    runs = []
    for directory in map(Path, run_dirs):
        contents = read_run(directory, suite.name)  # RunDirError without episodes.jsonl
        summary = summarize_run(suite, directory)
        runs.append(ReportRun(directory, contents.manifest,
                              counted_episodes(contents.episodes, contents.manifest),
                              accounting={k: summary[k] for k in ACCOUNTING if k in summary}))  # fmt: skip
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


def outcome_section(runs: list[ReportRun]) -> Section:
    """The report's first section: how each run's episodes ended (infra errors are counted here
    and left out of every figure below), their tokens and cost, pass^k."""
    header, rows = outcome_rows({r.label: r.accounting for r in runs})
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    return Section("outcomes", "Outcomes", f'<table class="outcomes"><thead><tr>{head}</tr>'
                   f"</thead><tbody>{body}</tbody></table><p>Episodes that ended in an infra "
                   "error (endpoint, sandbox, framework) are left out of every figure below "
                   "and can be run again with <code>travelgym run ... --resume "
                   "--retry-errors</code>.</p>")  # fmt: skip


def write_report(run_dirs: list[Path], out: Path, *, data_dir: Path | None = None,
                 max_result_chars: int = DEFAULT_MAX_RESULT_CHARS, include_analysis: bool = True,
                 title: str | None = None) -> ReportResult:  # fmt: skip
    """Write the HTML report of ``run_dirs`` (one suite) to ``out`` and say what went into it."""
    suite = get_suite(suite_of_runs(list(run_dirs)))
    clock = time.perf_counter()
    runs = load_runs(suite, list(run_dirs))
    notes = tamper_notes(runs)
    timings = {"read_s": time.perf_counter() - clock}

    body: ReportBody = suite.report_body(runs, data_dir=data_dir, max_result_chars=max_result_chars,
                                         include_analysis=include_analysis)  # fmt: skip
    notes += body.notes
    notes += [w.removeprefix("warning: ") for w in warnings({r.label: r.accounting for r in runs})]
    body.sections.insert(0, outcome_section(runs))
    clock = time.perf_counter()
    board = leaderboard.build(suite, runs)
    body.sections.insert(0, leaderboard.section(board))
    timings.update(body.timings, leaderboard_s=time.perf_counter() - clock)

    clock = time.perf_counter()
    generated = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    data = {"generated": generated, "leaderboard": board.as_json(), **body.data,
            "max_result_chars": max_result_chars}  # fmt: skip
    pack_episodes(data, body.lazy_keys, body.lazy_tables)
    title = title or f"{suite.title} report: " + ", ".join(r.label for r in runs)
    html = document(suite=suite.name, title=title, generated=generated, runs=runs, body=body,
                    notes=notes, data_json=embed_json(data))  # fmt: skip
    out = write_text_atomic(out, html)
    timings["html_s"] = time.perf_counter() - clock
    return ReportResult(path=out, size_bytes=out.stat().st_size, runs=len(runs),
                        episodes=sum(len(r.episodes) for r in runs), verdicts=body.verdicts,
                        timings={k: round(v, 3) for k, v in timings.items()},
                        notes=notes)  # fmt: skip
