"""``travelgym export``: training data from run directories and suites' tasks as Hugging Face
datasets (registered by ``travelgym.cli``)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from travelgym.cli.common import (
    command_options,
    data_dir_option,
    declared_names,
    int_option,
    json_option,
    suite_argument,
    suite_flags,
    suite_options,
)
from travelgym.clikit import (
    DataDirPath,
    FiniteFloat,
    FiniteFloatRange,
    GuardedGroup,
    InputPath,
    OutputPath,
    RuledCommand,
)
from travelgym.clikit.options import distinct
from travelgym.training.base import training_suite_names, training_suites


def _min_score_help() -> str:
    """The ``--min-score`` help: each suite's default minimum (and what it means)."""
    defaults = [f"{s.sft_min_score} for {s.title}" + (f", {s.sft_min_score_note}"
                                                      if s.sft_min_score_note else "")
                for s in training_suites()]  # fmt: skip
    return f"Minimum reward to keep an episode (default: {'; '.join(defaults)})."


def suite_filter_options(func):
    """The suites' own ``export sft`` options (:attr:`Suite.sft_filters`), each saying whose
    runs it applies to; one flag declared by several suites is one option."""
    found: dict[str, tuple[object, list[str]]] = {}
    for s in training_suites():
        for f in s.sft_filters:
            found.setdefault(f.flag, (f, []))[1].append(s.title)
    for flag, (f, titles) in reversed(list(found.items())):
        text = f"{f.help} ({' and '.join(titles)} runs only)."
        if f.is_flag:
            func = click.option(f"--{flag}", f.name, is_flag=True, default=None, help=text)(func)
        else:
            kind = FiniteFloatRange(0.0, 1.0)
            func = click.option(f"--{flag}", f.name, type=kind, default=None, help=text)(func)
    return func


@click.group(cls=GuardedGroup)
def export() -> None:
    """Export run directories as training data, or a suite's tasks as a dataset."""


@export.command("sft", cls=RuledCommand)
@suite_flags("export sft")
@click.argument(
    "run_dirs",
    nargs=-1,
    required=False,
    type=InputPath(dir_okay=True, file_okay=False),
)
@click.option("--chains", "chain_files", type=InputPath(), multiple=True, callback=distinct,
              help="A Chain-of-Action file of `travelgym chains` to export too (repeatable; "
              "the SFT baseline's data); RUN_DIRS may then be left out.")  # fmt: skip
@click.option("--out", type=OutputPath("file"), required=True,
              help="The JSONL file to write (replaced).")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["openai", "sharegpt"]), default="openai",
              show_default=True,
              help="openai: {messages, tools} (TRL SFTTrainer); sharegpt: LLaMA-Factory.")  # fmt: skip
@click.option("--min-score", type=FiniteFloat(), default=None, help=_min_score_help())
@click.option("--suite", type=click.Choice(training_suite_names()), default=None,
              help="Insist that every run is of this suite (default: each run's manifest).")  # fmt: skip
@int_option("--max-chars", at_least=1,
            help="Skip examples longer than this many characters of JSON.")  # fmt: skip
@click.option("--data-dir", type=DataDirPath(), default=None,
              help="Data directory of the runs' databases (to replay scripted agents' tool calls).")  # fmt: skip
@suite_filter_options
@json_option("Print the export summary as JSON.")
def export_sft_cmd(run_dirs: tuple[Path, ...], chain_files: tuple[Path, ...], out: Path,
                   fmt: str, min_score: float | None, suite: str | None,
                   max_chars: int | None, data_dir: Path | None, as_json: bool,
                   **filters: object) -> None:  # fmt: skip
    """Write the successful trajectories of RUN_DIRS (and the kept chains of --chains files)
    as chat-format JSONL for SFT."""
    from travelgym.training.sft import ExportError, FilterError, export_sft

    if not run_dirs and not chain_files:
        raise click.UsageError("give RUN_DIRS, --chains FILE, or both")
    # the suites' own flags of ``export sft`` (what every run must have used, --scale say),
    # given: read by --suite's model when it is given, else as each run's suite takes them
    insist = {k: filters.pop(k) for k in declared_names("export sft") if k in filters}
    insist = {k: v for k, v in insist.items() if v is not None}
    if suite is not None:
        _, options = command_options(suite, "export sft", **insist)
        insist = {k: getattr(options, k) for k in insist}
    try:
        summary = export_sft(run_dirs, out, fmt=fmt, min_score=min_score, suite=suite,
                             data_dir=data_dir, max_chars=max_chars, filters=filters,
                             chains=chain_files, **insist)  # fmt: skip
    except FilterError as exc:
        raise click.UsageError(str(exc)) from exc
    except ExportError as exc:
        raise click.ClickException(str(exc)) from exc
    tampered = _tamper_verdicts(run_dirs)
    if as_json:
        flagged = {d: t for d, t in tampered.items() if t}  # only when some run is: the field
        click.echo(json.dumps({**summary.model_dump(), **({"tampered": flagged} if flagged else {})},
                              indent=2))  # fmt: skip
        return
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(summary.skipped.items())) or "none"
    click.echo(f"wrote {summary.kept} of {summary.episodes} episode(s) to {summary.out} "
               f"({summary.format}; {summary.rebuilt} rebuilt from trajectories); "
               f"skipped: {skipped}")  # fmt: skip


def _tamper_verdicts(run_dirs) -> dict[str, str | None]:
    """Each run directory's tamper verdict (``None``: nothing wrong); a TAMPERED one is said on
    stderr too, with the first line that disagrees."""
    from travelgym.runner.integrity import verify_run

    found = {}
    for directory in run_dirs:
        verdict = verify_run(directory)
        found[str(directory)] = verdict.tampered
        if verdict.tampered:
            click.echo(f"warning: TAMPERED {directory}: {verdict.tampered}", err=True)
    return found


@export.command("dataset", cls=RuledCommand)
@suite_flags("export")
@suite_argument()
@click.option("--out", type=OutputPath("dir"), required=True,
              help="The dataset directory to write (a new or empty one, or a dataset this "
              "command wrote: replaced whole).")  # fmt: skip
@click.option("--ground-truth", is_flag=True,
              help="Also write the answer key (exact ground truth, witness or annotated plan) "
              "as ground_truth/SPLIT-*.parquet; never in the task columns.")  # fmt: skip
@click.option("--run", "run_dir", type=InputPath(dir_okay=True, file_okay=False), default=None,
              help="Also write this run directory's episodes and scores as "
              "episodes/run-*.parquet.")  # fmt: skip
@int_option("--db-seed", at_least=0, default=0,
            help="Seed of the generated database the tasks belong to.")  # fmt: skip
@json_option("Print the card's metadata as JSON.")
@data_dir_option
def export_dataset_cmd(suite: str, out: Path, ground_truth: bool, run_dir: Path | None,
                       db_seed: int, as_json: bool, data_dir: Path | None,
                       **flags: object) -> None:  # fmt: skip
    """Write SUITE's tasks as a Hugging Face dataset: Parquet per split and a dataset card
    (`datasets.load_dataset("parquet", data_dir=OUT)`; `run --tasks-from OUT`)."""
    from travelgym.clikit.recorded_command import recorded_command
    from travelgym.integrations.hf_dataset import export_dataset

    chosen, options = suite_options(suite, **flags)
    if run_dir is not None and not run_dir.is_dir():
        raise click.BadParameter(f"{run_dir} is not a run directory", param_hint="--run")
    command = recorded_command(click.get_current_context())  # the card names no local path
    meta = export_dataset(chosen, options, out, db_seed=db_seed, data_dir=data_dir,
                          ground_truth=ground_truth, run_dir=run_dir, command=command,
                          selection=tuple(flags))  # fmt: skip
    tampered = _tamper_verdicts([run_dir] if run_dir is not None else [])
    if as_json:
        extra = {"tampered": tampered} if any(tampered.values()) else {}
        click.echo(json.dumps({**meta, **extra}, indent=2, ensure_ascii=False))
        return
    counts = ", ".join(f"{name} {s['rows']}" for name, s in meta["splits"].items())
    click.echo(f"wrote {chosen.title} tasks ({counts}) to {out} "
               f"(content sha256 {meta['content_sha256'][:12]})")  # fmt: skip
