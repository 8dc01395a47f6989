"""``travelgym run``: each agent's episodes on a suite's tasks, one run directory per agent."""

from __future__ import annotations

from pathlib import Path

import click

from travelgym.cli.common import (
    allow_unsafe_sandbox,
    data_dir_option,
    emit_json,
    suite_argument,
    suite_options,
    unsafe_sandbox_option,
)
from travelgym.clikit import OutputPath, RuledCommand, RuledOption, comma_separated, is_used
from travelgym.core.registry import all_suites

LLM_OPTIONS = ("base_url", "max_calls", "max_tokens_total", "cache_dir")  # useless without an LLM
SUITE_FLAGS = ("user", "level", "trials", "max_turns", "personas", "split", "difficulty",
               "max_steps")  # fmt: skip


def _agent_help() -> str:
    forms = "; ".join(f"{s.name}: {s.agent_usage} (default: {', '.join(s.default_agents)})"
                      for s in all_suites())  # fmt: skip
    return f"Agent spec KIND[:ARG], repeatable. {forms}."


# Options with ``suite_option`` belong to the suites whose options have that field; every rule
# is checked by RuledCommand.
@click.command(cls=RuledCommand)
@suite_argument()
@click.option("--agent", "agents", multiple=True, help=_agent_help())
@click.option(
    "--user",
    cls=RuledOption,
    suite_option=True,
    default="template",
    show_default=True,
    help="template, llm:MODEL, local:smollm2 / local:PATH.gguf or hf:CHECKPOINT_DIR.",
)
@click.option(
    "--tasks",
    "task_ids",
    default=None,
    callback=comma_separated,
    help="Comma-separated task (or instance) ids.",
)
@click.option(
    "--level",
    cls=RuledOption,
    suite_option=True,
    conflicts=["task_ids"],
    counterpart="difficulty",
    type=click.IntRange(1, 3),
    default=None,
    help="Only tasks of this level.",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most N tasks.")
@click.option(
    "--trials",
    cls=RuledOption,
    suite_option=True,
    type=click.IntRange(1, 100),
    default=1,
    show_default=True,
)
@click.option(
    "--personas",
    cls=RuledOption,
    suite_option=True,
    type=click.Choice(["sampled", "task", "balanced"]),
    default=None,
    help="Each conversation's simulated-user persona: sampled per (seed, task, trial) "
    "(default), the task file's, or every persona type spread evenly over the run.",
)
@click.option("--concurrency", type=click.IntRange(1, 512), default=8, show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Run seed.")
@click.option("--db-seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option(
    "--out",
    type=OutputPath("dir"),
    default=None,
    help="Parent directory; one run directory per agent inside (default: runs/SUITE).",
)
@click.option("--resume", is_flag=True, help="Continue interrupted runs in --out.")
@click.option(
    "--retry-errors",
    cls=RuledOption,
    requires=["resume"],
    is_flag=True,
    help="With --resume: run again the episodes that ended in an error.",
)
@click.option(
    "--repair",
    is_flag=True,
    help="With --resume: move bad lines of episodes.jsonl to episodes.quarantine.jsonl and run "
    "their episodes again.",
)
@click.option("--base-url", default=None, help="OpenAI-compatible endpoint (default: env).")
@click.option(
    "--max-turns",
    cls=RuledOption,
    suite_option=True,
    counterpart="max_steps",
    type=click.IntRange(2, 200),
    default=30,
    show_default=True,
)
@click.option(
    "--max-calls", type=click.IntRange(min=1), default=None, help="Cap on LLM calls per run."
)
@click.option(
    "--max-tokens-total",
    type=click.IntRange(min=1),
    default=None,
    help="Cap on LLM tokens per run.",
)
@click.option(
    "--cache-dir",
    type=OutputPath("dir"),
    default=None,
    help="On-disk LLM response cache.",
)
@click.option(
    "--split",
    cls=RuledOption,
    suite_option=True,
    type=click.Choice(["train", "test"]),
    default=None,
    help="the instance split (default: test).",
)
@click.option(
    "--difficulty",
    cls=RuledOption,
    suite_option=True,
    conflicts=["task_ids"],
    counterpart="level",
    type=click.Choice(["easy", "medium", "hard"]),
    default=None,
    help="instances of this difficulty.",
)
@click.option(
    "--max-steps",
    cls=RuledOption,
    suite_option=True,
    counterpart="max_turns",
    type=click.IntRange(1, 200),
    default=None,
    help="agent steps per episode (default: 25).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the score summaries as JSON.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@data_dir_option
@unsafe_sandbox_option
def run(suite: str, agents: tuple[str, ...], task_ids: list[str] | None, limit: int | None,
        concurrency: int, seed: int, db_seed: int, out: Path | None, resume: bool,
        retry_errors: bool, repair: bool, base_url: str | None, max_calls: int | None,
        max_tokens_total: int | None, cache_dir: Path | None, as_json: bool, no_progress: bool,
        data_dir: Path | None, unsafe_sandbox: bool, **flags) -> None:  # fmt: skip
    """Run SUITE's benchmark: every agent's episodes on the chosen tasks, scored by the suite
    (one run directory per agent), then the score table."""
    import asyncio

    from travelgym.runner.batch import RunConfig, run_suite
    from travelgym.runner.specs import SpecError, parse_agent_spec

    allow_unsafe_sandbox(unsafe_sandbox)
    if repair and not resume:
        raise click.UsageError("--repair works on a run being continued: add --resume")
    chosen, options = suite_options(suite, **flags)
    try:
        specs = [parse_agent_spec(chosen, a) for a in (agents or chosen.default_agents)]
        calls_llm = any(s.calls_llm for s in specs) or chosen.options_call_llm(options)
    except SpecError as exc:
        raise click.BadParameter(str(exc)) from exc
    _refuse_llm_options_without_llm(calls_llm)
    client = {k: v for k, v in {"max_calls": max_calls, "max_tokens": max_tokens_total,
                                "cache_dir": cache_dir}.items() if v is not None}  # fmt: skip
    out = out if out is not None else Path("runs") / suite
    given = {k: v for k, v in flags.items() if k in chosen.Options.model_fields and v is not None}
    results = {}
    for spec in specs:
        cfg = RunConfig(suite, spec.text, out / spec.dirname, options=given, task_ids=task_ids,
                        limit=limit, concurrency=concurrency, seed=seed, db_seed=db_seed,
                        data_dir=data_dir, resume=resume, retry_errors=retry_errors,
                        repair=repair, base_url=base_url, progress=not no_progress and not as_json,
                        client_options=client)  # fmt: skip
        try:
            results[spec.text] = asyncio.run(run_suite(cfg))
        except ValueError as exc:  # e.g. unknown task ids
            raise click.ClickException(str(exc)) from exc
        if not as_json:
            click.echo(f"{spec.text}: {cfg.finished} episodes in {cfg.out}")
    if as_json:
        hidden = set(chosen.summary_details)
        emit_json({a: {k: v for k, v in r.items() if k not in hidden} for a, r in results.items()})
        return
    click.echo(chosen.format_results(results))


def _refuse_llm_options_without_llm(calls_llm: bool) -> None:
    """A usage error for an LLM client option (``--base-url``...) when no agent and no user of
    the run calls an LLM: the option would be silently ignored."""
    if calls_llm:
        return
    ctx = click.get_current_context()
    given = [name for name in LLM_OPTIONS if is_used(ctx, name)]
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise click.UsageError(f"{flag} applies to LLM agents and users only; no agent or user "
                               "of this run calls an LLM", ctx)  # fmt: skip
