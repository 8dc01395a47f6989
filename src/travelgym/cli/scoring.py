"""``travelgym score``: an answers file or a run directory, scored by its suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from travelgym.cli.common import (
    base_url_option,
    data_dir_option,
    emit_json,
    json_option,
    seed_option,
    suite_flags,
)
from travelgym.clikit import InputPath, is_used
from travelgym.core.registry import all_suites, get_suite, suite_names
from travelgym.runner.run_summary import score_answers, summarize_run

if TYPE_CHECKING:
    from travelgym.llm.endpoints import BaseURL


def _manifest(run_dir: Path) -> object:
    """The JSON of a run directory's manifest, ``None`` when it cannot be read (its reader names
    the problem later); never waits on a FIFO or reads a device (a regular file only)."""
    from travelgym.safe_open import read_regular_text

    try:
        return json.loads(read_regular_text(run_dir / "manifest.json"))
    except (OSError, ValueError, RecursionError):
        return None


def detect_suite(answers: Path) -> str | None:
    """The suite of an answers file or run directory: the run manifest's ``suite``, else the
    suite whose answer keys (``Suite.answer_markers``) the first entry carries; ``None`` when
    unknown."""
    if answers.is_dir():
        manifest = _manifest(answers)
        if isinstance(manifest, dict) and manifest.get("suite") in suite_names():
            return manifest["suite"]
        answers = answers / "episodes.jsonl"
    from travelgym.jsonl import JsonLinesError, iter_json_lines

    try:
        first = next((entry for _, entry in iter_json_lines(answers)), None)
    except JsonLinesError:
        return None  # the reader of the chosen suite names the problem
    if not isinstance(first, dict):
        return None
    if first.get("suite") in suite_names():
        return first["suite"]
    found = [s.name for s in all_suites() if any(k in first for k in s.answer_markers)]
    return found[0] if len(found) == 1 else None


def tasks_source(answers: Path) -> dict | None:
    """Where a run directory's tasks came from when it was run ``--tasks-from`` a dataset: the
    dataset's content hash, split and directory (``None`` otherwise)."""
    if not answers.is_dir():
        return None
    manifest = _manifest(answers)
    source = manifest.get("tasks_from") if isinstance(manifest, dict) else None
    if not isinstance(source, dict):
        return None
    return {**source, "directory": manifest.get("tasks_from_directory")}


def chosen_suite(answers: Path, suite: str | None) -> str:
    """``--suite`` if given and not contradicted by ANSWERS, else the detected suite (else the
    first installed one, whose reader then says what is wrong)."""
    detected = detect_suite(answers)
    if suite is not None and detected is not None and suite != detected:
        raise click.UsageError(f"{answers} holds {detected} answers, not {suite}: drop --suite "
                               f"or use --suite {detected}")  # fmt: skip
    return suite or detected or suite_names()[0]


@click.command()
@suite_flags("score")
@click.argument("answers", type=InputPath(dir_okay=True))
@json_option("Print the full score JSON.")
@click.option(
    "--suite",
    type=click.Choice(suite_names()),
    default=None,
    help="Which benchmark (default: detected from the run manifest or the answers).",
)
@seed_option
@base_url_option("OpenAI-compatible endpoint of the --judge model (default: env).")
@data_dir_option
def score(answers: Path, as_json: bool, suite: str | None, seed: int, base_url: BaseURL,
          data_dir: Path | None, **flags) -> None:  # fmt: skip
    """Score ANSWERS (a JSONL file of answers, or a run directory) against the benchmark."""
    from travelgym.runner.integrity import tamper_suffix, verify_run

    ctx = click.get_current_context()
    if is_used(ctx, "base_url") and not is_used(ctx, "judge"):
        raise click.UsageError("--base-url needs --judge (score calls no model otherwise)", ctx)
    verdict = verify_run(answers) if answers.is_dir() else None  # before anything is read
    tampered = verdict.tampered if verdict is not None else None
    if not is_used(ctx, "seed"):  # a run is scored on its own database seed, as it is printed
        seed = run_db_seed(answers, seed)
    with tamper_suffix(tampered):
        _score(answers, as_json, suite, seed, base_url, data_dir, tampered, verdict, flags)


def run_db_seed(answers: Path, default: int) -> int:
    """The database seed a run directory's manifest records (``default`` for an answers file
    or a manifest without a whole-number seed: the suite's checks then say what is wrong)."""
    from travelgym.runner.store import RunDirError, read_manifest

    if not answers.is_dir():
        return default
    try:
        recorded = read_manifest(answers).get("db_seed", default)
    except RunDirError:
        return default
    return recorded if isinstance(recorded, int) and not isinstance(recorded, bool) else default


def _score(answers: Path, as_json: bool, suite: str | None, seed: int, base_url: BaseURL,
           data_dir: Path | None, tampered: str | None, verdict, flags) -> None:  # fmt: skip
    from travelgym.cli.common import suite_options
    from travelgym.core.summary import ACCOUNTING
    from travelgym.core.summary_table import outcome_table, warnings
    from travelgym.runner.recheck import recheck_run, run_scorer_version
    from travelgym.runner.store import read_manifest

    ctx = click.get_current_context()
    name = chosen_suite(answers, suite)
    given = {k: v for k, v in flags.items() if is_used(ctx, k)}
    fields = get_suite(name).Options.model_fields
    for flag in (k for k in given if k not in fields):
        owners = " and ".join(s.name for s in all_suites() if flag in s.Options.model_fields)
        raise click.UsageError(f"--{flag} applies to {owners} only, not to {name}", ctx)
    chosen, options = suite_options(name, **given)
    notes: list[str] = []  # an unfinished run directory: how many episodes are missing
    # a run of another scorer version keeps its stored scores (the digest chain alone vouches
    # for them); any other has each episode's answer and score re-derived from its own turns
    # the run's stored episodes summarised once: its accounting, and its scores where they stand
    summary = summarize_run(chosen, answers) if answers.is_dir() else None
    # only stored episodes can stand: a directory without any is refused as any version's
    episodes = answers / "episodes.jsonl"
    stored = summary is not None and episodes.is_file() and episodes.stat().st_size > 0
    if stored and run_scorer_version(chosen, answers) != chosen.scorer_version:
        result = dict(summary)
    else:
        result = score_answers(chosen, answers, seed, data_dir, notes, options, base_url)
    check = recheck_run(chosen, answers, seed, data_dir, options) if answers.is_dir() else None
    if check is not None:
        notes += check.notes
        tampered = "; ".join(p for p in (tampered, check.tampered) if p) or None
    if summary is not None:  # how the run's episodes ended, what they used: as `run` shows them
        result.update({k: summary[k] for k in ACCOUNTING if k in summary})
    source = tasks_source(answers)
    if source:
        notes.append(f"the run's tasks came from the dataset {source.get('directory')} (content "
                     f"sha256 {source.get('content_sha256')}, split {source.get('split')})")  # fmt: skip
    for note in notes:
        click.echo(f"note: {note}", err=True)
    if tampered:
        click.echo(f"warning: TAMPERED run: {tampered}", err=True)
    if verdict is not None and verdict.status == "unchained":
        click.echo(f"note: {answers}: no chain (written before tamper evidence)", err=True)
    label = (read_manifest(answers).get("agent") or name) if answers.is_dir() else name
    rechecked = check.warnings if check is not None else []
    for line in warnings({label: result}) + [f"warning: {w}" for w in rechecked]:
        click.echo(line, err=True)
    if as_json:
        emit_json({**result, "tampered": tampered, **({"tasks_from": source} if source else {}),
                   **({"recheck": check.as_json()} if check is not None else {})})  # fmt: skip
        return
    click.echo(chosen.format_score(result))
    if "outcomes" in result:
        click.echo(outcome_table({label: result}))
    if tampered:
        click.echo(f"TAMPERED: {tampered}")
