"""Commands over finished run directories: ``analyze``, ``report`` and ``annotate``; the suite
comes from the runs' manifests."""

from __future__ import annotations

from pathlib import Path

import click

from travelgym.cli.common import (
    data_dir_option,
    emit_json,
    int_option,
    json_option,
    plots_option,
)
from travelgym.clikit import GuardedGroup, InputPath, OutputPath
from travelgym.core.registry import capable, require
from travelgym.runner.run_summary import summarize_run

RUN_DIRS = InputPath(dir_okay=True, file_okay=False)


def register(main: click.Group) -> None:
    """Add this module's commands to ``main``."""
    for command in (analyze, report, annotate):
        main.add_command(command)


@click.command()
@click.argument("run_dirs", nargs=-1, required=True, type=RUN_DIRS)
@json_option("Print the whole analysis as JSON.")
@plots_option("the suite's counterparts of the paper's figures (PNG and SVG)")
@click.option(
    "--episodes/--no-episodes",
    default=True,
    show_default=True,
    help="Include the per-episode feature rows in the JSON.",
)
@int_option(
    "--resamples", at_least=100, default=2000, help="Bootstrap resamples for run comparisons."
)
@int_option("--seed", at_least=0, default=0, help="Bootstrap seed.")
@click.option(
    "--legend",
    is_flag=True,
    help="After the tables, say what each column means (unit and JSON key too).",
)
@click.option(
    "--allow-mixed",
    is_flag=True,
    help="Pool or compare runs even when they differ in task set, task file or database (the "
    "output then says so).",
)
def analyze(run_dirs: tuple[Path, ...], as_json: bool, plots: Path | None, episodes: bool,
            resamples: int, seed: int, legend: bool, allow_mixed: bool) -> None:  # fmt: skip
    """Compute the analysis metrics of RUN_DIRS (one agent each) and compare them."""
    from travelgym.core.summary_table import outcome_table, warnings
    from travelgym.report.shell import suite_of_runs
    from travelgym.runner.integrity import tamper_suffix, verify_run

    verdicts = {str(d): verify_run(d) for d in run_dirs}  # before anything is read
    tampered = "; ".join(f"{d}: {v.tampered}" for d, v in verdicts.items() if v.tampered)
    with tamper_suffix(tampered or None):
        suite = require(suite_of_runs(list(run_dirs)), "analyze")
        try:
            result = suite.analyze(list(run_dirs), resamples=resamples, seed=seed,
                                   allow_mixed=allow_mixed, plots=plots)  # fmt: skip
        except ValueError as exc:
            raise click.ClickException(str(exc)) from exc
        accounting = run_accounting(suite, run_dirs)  # the analysis counted no infra error
    if not episodes:
        for run in result["runs"].values():
            run.pop("episodes", None)
    result["outcomes"] = {str(d): a for d, a in zip(run_dirs, accounting.values(), strict=True)}
    result["tampered"] = {d: v.tampered for d, v in verdicts.items()}
    for line in warnings(accounting):
        click.echo(line, err=True)
    for directory, verdict in verdicts.items():
        if verdict.tampered:
            click.echo(f"warning: TAMPERED run {directory}: {verdict.tampered}", err=True)
        if verdict.status == "unchained" and not as_json:  # --json: its tampered field is null
            click.echo(f"note: {directory}: no chain (written before tamper evidence)", err=True)
    if as_json:
        emit_json(result)
        return
    click.echo(suite.format_analysis(result))
    click.echo(outcome_table(accounting))
    if legend:
        click.echo("\n" + suite.analysis_legend())
    for directory, verdict in verdicts.items():
        if verdict.tampered:
            click.echo(f"TAMPERED {directory}: {verdict.tampered}")
    for p in result.get("plots", []):
        click.echo(f"plot: {p}")


def run_accounting(suite, run_dirs) -> dict[str, dict]:
    """Each run's outcome counts, usage and pass^k by a label unique among ``run_dirs`` (the
    manifest's agent, else the directory)."""
    from travelgym.core.summary import ACCOUNTING
    from travelgym.runner.store import read_manifest

    out = {}
    for directory in run_dirs:
        label = str(read_manifest(directory).get("agent") or directory.name)
        if label in out:
            label = f"{label} ({directory})"
        summary = summarize_run(suite, directory)
        out[label] = {k: summary[k] for k in ACCOUNTING if k in summary}
    return out


@click.command()
@click.argument("run_dirs", nargs=-1, required=True, type=RUN_DIRS)
@click.option(
    "--out",
    type=OutputPath("file"),
    default=Path("report.html"),
    show_default=True,
    help="HTML file to write.",
)
@int_option(
    "--max-result-chars",
    at_least=100,
    default=2000,
    help="Cut tool results longer than this in the embedded data.",
)
@click.option("--no-analysis", is_flag=True, help="Leave out the analysis tables and figures.")
@click.option("--title", default=None, help="Page title (default: the runs' agents).")
@data_dir_option
def report(run_dirs: tuple[Path, ...], out: Path, max_result_chars: int, no_analysis: bool,
           title: str | None, data_dir: Path | None) -> None:  # fmt: skip
    """Write one self-contained HTML report of RUN_DIRS: score tables, analysis, figures and a
    trajectory viewer with per-turn verdicts."""
    from travelgym.report.shell import write_report
    from travelgym.runner.integrity import tamper_suffix, verify_run

    tampered = "; ".join(f"{d}: {v.tampered}" for d in run_dirs if (v := verify_run(d)).tampered)
    with tamper_suffix(tampered or None):
        try:
            result = write_report(list(run_dirs), out, data_dir=data_dir,
                                  max_result_chars=max_result_chars,
                                  include_analysis=not no_analysis, title=title)  # fmt: skip
        except ValueError as exc:
            raise click.ClickException(str(exc)) from exc
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    seconds = sum(result.timings.values())
    click.echo(f"wrote {result.path} ({result.size_bytes / 2**20:.1f} MiB): {result.runs} run(s), "
               f"{result.episodes} episode(s), {result.verdicts} plan verdict(s) in {seconds:.1f} s")  # fmt: skip


@click.group(cls=GuardedGroup)
def annotate() -> None:
    """Human annotation of the user simulator (COMPASS Appendix H, Table 3)."""


@annotate.command("export")
@click.argument("run_dir", type=RUN_DIRS)
@int_option(
    "--conversations",
    at_least=1,
    default=45,
    help="Conversations to sample (all their user responses after the opening become rows).",
)
@int_option(
    "--responses",
    at_least=1,
    help="Keep a seeded sample of this many responses (default: all of them).",
)
@int_option("--seed", at_least=0, default=0)
@click.option(
    "--format", "fmt", type=click.Choice(["csv", "jsonl"]), default="csv", show_default=True
)
@click.option("--out", type=OutputPath("file"), required=True)
def annotate_export(run_dir: Path, conversations: int, responses: int | None, seed: int, fmt: str,
                    out: Path) -> None:  # fmt: skip
    """Write an annotation sheet of RUN_DIR's user responses with empty error flags and rubrics."""
    from travelgym.report.shell import suite_of_runs

    suite = require(suite_of_runs([run_dir]), "annotate")
    try:
        line = suite.export_sheet(run_dir, out, conversations=conversations, seed=seed, fmt=fmt,
                                  responses=responses)  # fmt: skip
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(line)


@annotate.command("summarize")
@click.argument("sheet", type=InputPath())
@json_option("Print the statistics as JSON.")
def annotate_summarize(sheet: Path, as_json: bool) -> None:
    """Table 3 of a filled SHEET: error rates, rubric means, spreads and distributions."""
    suites = capable("annotate")
    if not suites:
        raise click.ClickException("no installed suite supports annotation")
    suite = require(suites[0], "annotate")  # sheets carry no suite; the annotating suite reads it
    result = suite.summarize_sheet(sheet)
    if as_json:
        emit_json(result)
        return
    click.echo(suite.format_sheet_summary(result))
