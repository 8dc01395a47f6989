"""``travelgym quality``: quality control of a suite's generated tasks in two stages (an
automatic judge giving an operation code per task, applied into a filtered set; a human review
of a stratified sample). The suite comes from the registry (capability ``quality``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from travelgym.cli.common import (
    base_url_option,
    command_options,
    data_dir_option,
    emit_json,
    int_option,
    json_option,
    seed_option,
    suite_flags,
)
from travelgym.clikit import GuardedGroup, InputPath, OutputPath, RuledCommand
from travelgym.core.errors import UserError
from travelgym.core.registry import capable, require

if TYPE_CHECKING:
    from travelgym.llm.endpoints import BaseURL

SUITE_HELP = "Suite whose tasks are controlled (default: the only one that supports it)."


def _suite(name: str | None):
    suites = capable("quality")
    if name is None:
        if len(suites) != 1:
            raise click.UsageError(f"choose the suite with --suite ({', '.join(suites) or 'none'}"
                                   " support quality control)")  # fmt: skip
        name = suites[0]
    elif name not in suites:
        raise click.UsageError(f"--suite {name}: no installed suite of that name supports "
                               f"quality control ({', '.join(suites) or 'none'} do)")  # fmt: skip
    return require(name, "quality")


def _guard(call):
    try:
        return call()
    except (UserError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


@click.group(cls=GuardedGroup)
def quality() -> None:
    """Quality control of generated tasks (Behavior2Trip's Figure 10): assess, apply, sheet,
    summarize."""


def register(main: click.Group) -> None:
    """Add the ``quality`` group to ``main``."""
    main.add_command(quality)


@quality.command("assess", cls=RuledCommand)
@suite_flags("quality assess")
@click.option(
    "--backend",
    required=True,
    metavar="rules|MODEL",
    help="'rules' (deterministic) or a model judging at --base-url.",
)
@int_option(
    "--limit",
    at_least=1,
    help="Judge the first N instances per split (Easy, Medium, Hard interleaved).",
)
@click.option(
    "--chains",
    type=InputPath(),
    default=None,
    help="A chains file: criterion 3 judges each chain's plan (else the witness).",
)
@base_url_option("OpenAI-compatible endpoint of the LLM backend.")
@int_option("--concurrency", at_least=1, default=4)
@click.option("--suite", "suite_name", default=None, help=SUITE_HELP)
@click.option("--out", type=OutputPath("file"), required=True, help="The QC file (JSONL).")
@json_option("Print the summary as JSON.")
@seed_option
@data_dir_option
def assess(backend: str, limit: int | None, chains: Path | None, base_url: BaseURL,
           concurrency: int, suite_name: str | None, out: Path, as_json: bool, seed: int,
           data_dir: Path | None, **flags: Any) -> None:  # fmt: skip
    """Score every unfiltered task on the three criteria and give it an operation code."""
    backend = backend.strip()
    if not backend:
        raise click.UsageError("--backend: give 'rules' or a model name")
    suite = _suite(suite_name)
    # the suite's own flags of ``quality assess`` (which instances: split, scale), given
    _, options = command_options(suite.name, "quality assess", **flags)
    result = _guard(lambda: suite.quality_assess(
        out, backend=backend, limit=limit, chains=chains, data_dir=data_dir, db_seed=seed,
        base_url=base_url, concurrency=concurrency, **options.model_dump()))  # fmt: skip
    emit_json(result) if as_json else click.echo(suite.format_quality("assess", result))


@quality.command("apply")
@click.argument("qc", type=InputPath())
@click.option(
    "--out",
    type=OutputPath("dir"),
    required=True,
    help="Directory for the filtered task files and report.json.",
)
@click.option("--suite", "suite_name", default=None, help=SUITE_HELP)
@json_option("Print the result as JSON.")
@data_dir_option
def apply(qc: Path, out: Path, suite_name: str | None, as_json: bool,
          data_dir: Path | None) -> None:  # fmt: skip
    """Apply QC's operation codes: keep, correct, or leave tasks out, with a report."""
    suite = _suite(suite_name)
    result = _guard(lambda: suite.quality_apply(qc, out, data_dir=data_dir))
    emit_json(result) if as_json else click.echo(suite.format_quality("apply", result))


@quality.command("sheet")
@click.argument("qc", type=InputPath())
@int_option(
    "--sample",
    at_least=1,
    default=1000,
    help="Tasks on the sheet, stratified by difficulty and operation code.",
)
@int_option("--seed", at_least=0, default=0, help="Seed of the sample.")
@click.option("--out", type=OutputPath("file"), required=True, help="The sheet (CSV).")
@click.option("--suite", "suite_name", default=None, help=SUITE_HELP)
@data_dir_option
def sheet(qc: Path, sample: int, seed: int, out: Path, suite_name: str | None,
          data_dir: Path | None) -> None:  # fmt: skip
    """Write a reviewers' sheet: a stratified sample of QC with empty verdict columns."""
    suite = _suite(suite_name)
    click.echo(_guard(lambda: suite.quality_sheet(qc, out, sample=sample, seed=seed,
                                                  data_dir=data_dir)))  # fmt: skip


@quality.command("summarize")
@click.argument("sheet_path", metavar="SHEET", type=InputPath())
@click.option("--suite", "suite_name", default=None, help=SUITE_HELP)
@json_option("Print the statistics as JSON.")
def summarize(sheet_path: Path, suite_name: str | None, as_json: bool) -> None:
    """Agreement of a filled SHEET with the automatic stage, Cohen's kappa, reviewer pairs."""
    suite = _suite(suite_name)
    result = _guard(lambda: suite.quality_summary(sheet_path))
    emit_json(result) if as_json else click.echo(suite.format_quality("summarize", result))
