"""``travelgym chains``: Chain-of-Action annotation of a suite's tasks (gold chains for SFT)."""

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
    suite_flags,
)
from travelgym.clikit import FiniteFloatRange, OutputPath, RuledCommand
from travelgym.core.registry import capable, require

if TYPE_CHECKING:
    from travelgym.llm.endpoints import BaseURL


def _suites() -> list[str]:
    return capable("chains")


@click.command(cls=RuledCommand)
@suite_flags("chains")
@click.option("--annotator", required=True, metavar="SPEC",
              help="Who annotates: scripted (the scripted planner), local:smollm2 (or "
              "local:GGUF), hf:CKPT, or a MODEL served at --base-url.")  # fmt: skip
@click.option("--suite", type=click.Choice(_suites()), default=None,
              help="The suite whose tasks are annotated (default: the first that can).")  # fmt: skip
@int_option("--limit", at_least=1, help="At most N tasks.")
@click.option("--ids", default=None, metavar="ID,...",
              help="These task ids, in this order (comma-separated).")  # fmt: skip
@base_url_option()
@int_option("--concurrency", at_least=1, at_most=512, default=4,
            help="Tasks annotated at a time (LLM annotators).")  # fmt: skip
@click.option("--timeout", "timeout_s", type=FiniteFloatRange(min=1.0), default=None,
              help="Seconds per model request.")  # fmt: skip
@int_option("--db-seed", at_least=0, default=0, help="Seed of the generated database.")
@data_dir_option
@click.option("--out", type=OutputPath("file"), required=True,
              help="The chains JSONL to write (replaced; its manifest beside it).")  # fmt: skip
@json_option("Print the summary as JSON.")
def chains(annotator: str, suite: str | None, limit: int | None, ids: str | None,
           base_url: BaseURL, concurrency: int, timeout_s: float | None, db_seed: int,
           data_dir: Path | None, out: Path, as_json: bool, **flags: Any) -> None:  # fmt: skip
    """Annotate tasks with gold Chain-of-Action trajectories (thoughts, tool calls,
    observations, the plan and its checks), the SFT baseline's data."""
    names = _suites()
    if not names:
        raise click.ClickException("no installed suite supports Chain-of-Action annotation")
    name = suite or names[0]
    target = require(name, "chains")
    # the suite's own flags of ``chains`` (which tasks, on which database), given
    _, options = command_options(name, "chains", **flags)
    task_ids = [i.strip() for i in ids.split(",") if i.strip()] if ids else None
    if ids is not None and not task_ids:
        raise click.UsageError("--ids: give at least one task id")
    client_options = {"timeout_s": timeout_s} if timeout_s is not None else {}
    result = target.annotate_chains(annotator, out, options, task_ids=task_ids, limit=limit,
                                    base_url=base_url, client_options=client_options,
                                    concurrency=concurrency, db_seed=db_seed,
                                    data_dir=data_dir)  # fmt: skip
    if as_json:
        emit_json(result)
        return
    click.echo(target.format_chains(result))
