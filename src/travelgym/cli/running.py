"""``travelgym run``: each agent's episodes on a suite's tasks, one run directory per agent."""

from __future__ import annotations

import datetime as dt
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from travelgym.cli.common import (
    allow_unsafe_sandbox,
    base_url_option,
    data_dir_option,
    emit_json,
    int_option,
    json_option,
    parse_settings,
    settings_option,
    suite_argument,
    suite_flags,
    suite_options,
    unsafe_sandbox_option,
)
from travelgym.clikit import (
    FiniteFloat,
    FiniteFloatRange,
    InputPath,
    OutputPath,
    RuledCommand,
    RuledOption,
    comma_separated,
    is_used,
)
from travelgym.core.registry import all_suites, get_suite

INFRA_ERROR_EXIT = 3  # ``run``'s exit status when infra errors exceed --max-error-rate

if TYPE_CHECKING:
    from travelgym.llm.endpoints import BaseURL

LLM_OPTIONS = ("base_url", "max_calls", "max_tokens_total", "cache_dir")  # useless without an LLM
# the agent model's generation options (travelgym.runner.generation): flag name -> option name
GEN_FLAGS = {"temperature": "temperature", "top_p": "top_p", "max_tokens": "max_tokens",
             "reasoning_effort": "reasoning_effort", "gen_seed": "seed",
             "extra_body": "extra_body"}  # fmt: skip
GEN_OPTIONS = (*GEN_FLAGS, "gen_config", "gen_preset")  # useless without an LLM agent


def generation_options(func):
    """The ``--gen-preset``, ``--gen-config`` and per-option generation flags of ``run``."""
    from travelgym.runner.generation import PRESETS, REASONING_EFFORTS

    options = [
        click.option("--gen-preset", type=click.Choice(list(PRESETS)), default=None,
                     help="Generation settings by name (the paper's Appendix G.2: "
                     "paper-default = temperature 0, qwen3-thinking = 0.7 with thinking, gpt5 = "
                     "medium reasoning, no temperature)."),
        click.option("--gen-config", type=InputPath(),
                     default=None, help="JSON (or .toml) file of generation options: "
                     "temperature, top_p, max_tokens, reasoning_effort, seed, extra_body "
                     "(overrides --gen-preset; the flags below override it)."),
        click.option("--temperature", type=FiniteFloat(), default=None,
                     help="Agent sampling temperature, 0-2 (default: not sent)."),
        click.option("--top-p", type=FiniteFloat(), default=None, help="Agent nucleus sampling, (0, 1]."),
        click.option("--max-tokens", type=int, default=None,
                     help="Agent output tokens per reply (--max-tokens-total caps the run)."),
        click.option("--reasoning-effort", type=click.Choice(REASONING_EFFORTS), default=None,
                     help="Agent reasoning effort (reasoning models)."),
        click.option("--gen-seed", type=int, default=None,
                     help="Sampling seed sent with the agent's requests."),
        click.option("--extra-body", default=None,
                     help="JSON object merged into the agent's request body (e.g. "
                     '\'{"chat_template_kwargs": {"enable_thinking": true}}\').'),
    ]  # fmt: skip
    for option in reversed(options):
        func = option(func)
    return func


def _agent_help() -> str:
    forms = "; ".join(f"{s.name}: {s.agent_usage} (default: {', '.join(s.default_agents)})"
                      for s in all_suites())  # fmt: skip
    return (
        f"Agent spec KIND[:ARG], repeatable. {forms} (package.module:factory: a policy "
        "written in Python, docs/agents.md)."
    )


# Options with ``suite_option`` belong to the suites whose options have that field; every rule
# is checked by RuledCommand.
@click.command(cls=RuledCommand)
@suite_flags("run")
@suite_argument()
@click.option("--agent", "agents", multiple=True, help=_agent_help())
@click.option("--model", "models", multiple=True, metavar="MODEL",
              help="The same as --agent llm:MODEL (the suite's native tool-calling agent); "
              "repeatable.")  # fmt: skip
@click.option(
    "--tasks",
    "task_ids",
    default=None,
    callback=comma_separated,
    help="Comma-separated task (or instance) ids.",
)
@int_option("--limit", at_least=1, help="At most N tasks.")
@click.option(
    "--tasks-from",
    type=InputPath(dir_okay=True, file_okay=False),
    default=None,
    metavar="DIR",
    help="Run the tasks of a dataset directory written by `export dataset` (its split picked "
    "by the options; refused unless its rows, versions and hashes match this data).",
)
@int_option(
    "--concurrency",
    at_least=1,
    at_most=512,
    default=8,
    help="Episodes at once (with --backend ray: at most this many Ray workers).",
)
@click.option(
    "--backend",
    type=click.Choice(["asyncio", "ray"]),
    default="asyncio",
    show_default=True,
    help="Where episodes run: this process, or a Ray cluster (the ray extra; this process "
    "still writes the run directory). See docs/ray.md.",
)
@click.option(
    "--ray-address",
    default=None,
    metavar="ADDR",
    help="With --backend ray: the cluster to join (default: start a local one).",
)
@click.option(
    "--gpus-per-episode",
    type=FiniteFloatRange(min=0),
    default=None,
    help="With --backend ray: GPUs each episode's worker holds (hf: models; default 0).",
)
@int_option("--seed", at_least=0, default=0, help="Run seed.")
@int_option("--db-seed", at_least=0, default=0, help="Seed of the generated database.")
@click.option(
    "--out",
    type=OutputPath("dir"),
    default=None,
    help="Parent directory; one run directory per agent inside, named after the agent "
    "(default: a new directory per agent under runs/SUITE, named <UTC start>-<agent>-<hash of "
    "the run's identity>).",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Continue interrupted runs in --out (without --out: the latest run under runs/SUITE "
    "of the same agent, tasks, seeds and settings).",
)
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
@base_url_option()
@int_option("--max-calls", at_least=1, help="Cap on LLM calls per run.")
@int_option("--max-tokens-total", at_least=1, help="Cap on LLM tokens per run.")
@click.option(
    "--cache-dir",
    type=OutputPath("dir"),
    default=None,
    help="On-disk LLM response cache.",
)
@generation_options
@json_option("Print the score summaries as JSON.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option(
    "--count-errors-as-failures",
    is_flag=True,
    help="Score episodes that ended in an infra error (endpoint down, timeout, "
    "sandbox...) as failures instead of leaving them out (recorded in the manifest).",
)
@click.option(
    "--max-error-rate",
    type=FiniteFloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="Exit with status 3 when a run's share of infra errors is above this "
    "(0: any infra error).",
)
@click.option(
    "--pricing",
    type=InputPath(),
    default=None,
    metavar="FILE",
    help='Model prices for the run\'s cost: JSON {MODEL: {"input": D, "output": D}}, '
    "dollars per million tokens (default: litellm's bundled map when installed).",
)
@click.option(
    "--max-cost",
    type=FiniteFloatRange(min=0, min_open=True),
    default=None,
    metavar="DOLLARS",
    help="Stop the run's model calls at this cost (needs prices).",
)
@settings_option
@data_dir_option
@unsafe_sandbox_option
def run(suite: str, agents: tuple[str, ...], models: tuple[str, ...], task_ids: list[str] | None, limit: int | None,
        tasks_from: Path | None, concurrency: int, backend: str, ray_address: str | None,
        gpus_per_episode: float | None, seed: int, db_seed: int, out: Path | None,
        resume: bool, retry_errors: bool, repair: bool, base_url: BaseURL, max_calls: int | None,
        max_tokens_total: int | None, cache_dir: Path | None, as_json: bool, no_progress: bool,
        count_errors_as_failures: bool, max_error_rate: float, pricing: Path | None,
        max_cost: float | None, settings: tuple[str, ...], data_dir: Path | None,
        unsafe_sandbox: bool, **flags) -> None:  # fmt: skip
    """Run SUITE's benchmark: every agent's episodes on the chosen tasks, scored by the suite
    (one run directory per agent), then the score table. Exits with status 3 when a run's
    share of infra errors is above --max-error-rate (everything saved and printed first)."""
    import asyncio

    from travelgym.core.pricing import read_pricing
    from travelgym.core.summary_table import infra_error_rate, outcome_table, warnings
    from travelgym.runner.batch import RunConfig, run_suite
    from travelgym.runner.specs import SpecError, parse_agent_spec
    from travelgym.runner.stopping import RunStopped

    allow_unsafe_sandbox(unsafe_sandbox)
    _refuse_ray_options_without_ray(backend)
    if repair and not resume:
        raise click.UsageError("--repair works on a run being continued: add --resume")
    fields = get_suite(suite).Options.model_fields
    merged = parse_settings(get_suite(suite), settings,
                            {k: v for k, v in flags.items() if k in fields})  # fmt: skip
    chosen, options = suite_options(suite, **merged)
    try:
        given_agents = (*agents, *(f"llm:{m}" for m in models))
        specs = [parse_agent_spec(chosen, a) for a in (given_agents or chosen.default_agents)]
        calls_llm = any(s.calls_llm for s in specs) or chosen.options_call_llm(options)
    except SpecError as exc:
        raise click.BadParameter(str(exc)) from exc
    _refuse_agents_sharing_a_directory(specs)
    _refuse_llm_options_without_llm(calls_llm)
    prices = read_pricing(pricing) if pricing is not None else None
    generation = _generation(any(s.calls_llm for s in specs), flags)
    client = {k: v for k, v in {"max_calls": max_calls, "max_tokens": max_tokens_total,
                                "cache_dir": cache_dir}.items() if v is not None}  # fmt: skip
    by_identity = out is None  # the runner names each run directory once its identity is known
    out = out if out is not None else Path("runs") / suite
    started = dt.datetime.now(dt.timezone.utc)  # the time the default directories carry
    given = options.model_dump(mode="json", include=set(merged))
    check = None
    if tasks_from is not None:
        given, check = _tasks_from(tasks_from, chosen, given, db_seed)
    results = {}
    directories: list[Path] = []
    connected = False
    if backend == "ray":  # one cluster for every agent's run (a local one starts once)
        from travelgym.runner.ray_backend import connect, disconnect

        connected = connect(ray_address)
    try:
        for spec in specs:
            cfg = RunConfig(suite, spec.text, out if by_identity else out / spec.dirname,
                            options=given, task_ids=task_ids,
                            limit=limit, concurrency=concurrency, seed=seed, db_seed=db_seed,
                            data_dir=data_dir, resume=resume, retry_errors=retry_errors,
                            repair=repair, base_url=base_url,
                            progress=not no_progress and not as_json, client_options=client,
                            generation=generation, tasks_check=check, backend=backend,
                            ray_address=ray_address,
                            gpus_per_episode=gpus_per_episode or 0.0,
                            count_errors_as_failures=count_errors_as_failures,
                            pricing=prices, max_cost=max_cost, name_run=by_identity,
                            started=started)  # fmt: skip
            try:
                results[spec.text] = asyncio.run(run_suite(cfg))
            except ValueError as exc:  # e.g. unknown task ids
                raise click.ClickException(str(exc)) from exc
            except RunStopped as stopped:
                click.echo(f"{stopped.saved} of {stopped.total} episodes saved in "
                           f"{stopped.directory}; continue with: {resume_command()}", err=True)  # fmt: skip
                raise SystemExit(stopped.exit_status) from None
            if not as_json:
                click.echo(f"{spec.text}: {cfg.finished} episodes in {cfg.out}")
            directories.append(cfg.out)
    finally:
        if connected:
            disconnect(connected)
    if as_json:
        hidden = set(chosen.summary_details)
        emit_json({a: {k: v for k, v in r.items() if k not in hidden} for a, r in results.items()})
    else:
        click.echo(chosen.format_results(results))
        click.echo(outcome_table(results))
    if not as_json:  # with --json, stdout is the JSON alone and stderr as quiet as before
        for directory in directories:
            click.echo(view_line(directory, data_dir))
    for agent, result in results.items():  # --cache-dir: what the cache did (--json: a key)
        if "llm_cache" in result and not as_json:
            from travelgym.llm.cache import format_stats

            named = f" ({agent})" if len(results) > 1 else ""
            click.echo(format_stats(result["llm_cache"]) + named)
    for line in warnings(results):
        click.echo(line, err=True)
    over = [a for a, r in results.items() if infra_error_rate(r) > max_error_rate]
    if over:
        click.echo(f"error: infra errors above --max-error-rate {max_error_rate:g} in "
                   f"{', '.join(over)}: the scores are incomplete (exit status 3)", err=True)  # fmt: skip
        raise SystemExit(INFRA_ERROR_EXIT)


def view_line(directory: Path, data_dir: Path | None = None) -> str:
    """The line ``run`` prints after a run: how to view it and how to get its scores as JSON
    (on the run's ``--data-dir``, where one was given: its data is there)."""
    where = shlex.quote(str(directory))
    data = f" --data-dir {shlex.quote(str(data_dir))}" if data_dir is not None else ""
    return (f"view: travelgym report {where} --out report.html{data} · JSON: travelgym score "
            f"{where} --json{data}")  # fmt: skip


def resume_command(argv: list[str] | None = None) -> str:
    """The command line this process was started with (``argv``: ``sys.argv``), quoted for a
    shell, with ``--resume`` added unless it is there (before a ``--``, which ends options)."""
    argv = list(sys.argv if argv is None else argv)
    args = argv[1:]
    if "--resume" not in args:
        end = args.index("--") if "--" in args else len(args)
        args.insert(end, "--resume")
    # click's name for the program: ``travelgym``, or ``python -m travelgym.cli``
    ctx = click.get_current_context(silent=True)
    program = ctx.find_root().info_name if ctx is not None and ctx.find_root().info_name else None
    return " ".join(filter(None, [program or shlex.quote(argv[0]), shlex.join(args)]))


def _tasks_from(directory: Path, chosen, given: dict, db_seed: int):
    """``(the run's suite options, the check of its tasks)`` for ``--tasks-from DIR``: the
    dataset's options under those given (``given``: explicitly, by flag or ``--set``; see
    :mod:`travelgym.integrations.hf_dataset_read`)."""
    from travelgym.integrations.hf_dataset_read import plan_run

    dataset, options = plan_run(directory, chosen, given, db_seed)
    suite_options(chosen.name, **{**given, **options})  # a bad option: a usage error now
    return {**given, **options}, lambda run: dataset.check(chosen, run)


def _generation(agent_calls_llm: bool, flags: dict) -> dict:
    """The run's generation options from the flags (popped from ``flags``); a usage error when
    one is given and no agent of the run calls a model (a simulated user's calls never carry
    them), a one-line error when one is bad."""
    from travelgym.runner.generation import GenerationError, parse_extra_body, resolve_generation

    given = {name: flags.pop(name, None) for name in GEN_OPTIONS}
    ctx = click.get_current_context()
    used = [name for name in GEN_OPTIONS if is_used(ctx, name)]
    if used and not agent_calls_llm:
        flag = "--" + used[0].replace("_", "-")
        raise click.UsageError(f"{flag} applies to LLM agents only; no agent of this run calls "
                               "an LLM", ctx)  # fmt: skip
    try:
        values = {GEN_FLAGS[k]: given[k] for k in GEN_FLAGS}
        values["extra_body"] = parse_extra_body(values["extra_body"])
        return resolve_generation(given["gen_preset"], given["gen_config"], values)
    except GenerationError as exc:
        raise click.UsageError(str(exc), ctx) from None


def _refuse_ray_options_without_ray(backend: str) -> None:
    """A usage error for ``--ray-address`` or ``--gpus-per-episode`` without ``--backend ray``
    (they would be silently ignored)."""
    ctx = click.get_current_context()
    given = [name for name in ("ray_address", "gpus_per_episode") if is_used(ctx, name)]
    if given and backend != "ray":
        flag = "--" + given[0].replace("_", "-")
        raise click.UsageError(f"{flag} applies to --backend ray only", ctx)


def _refuse_agents_sharing_a_directory(specs: list) -> None:
    """Two agents of one run must have two run directories: the same agent given twice (or
    ``--agent llm:M`` with ``--model M``) would run once, then stop the run at the second."""
    seen: dict[str, str] = {}
    for spec in specs:
        if spec.dirname in seen:
            same = (
                "is given more than once"
                if seen[spec.dirname] == spec.text
                else (f"and {seen[spec.dirname]} name the same run directory")
            )
            raise click.UsageError(f"agent {spec.text} {same}; give each agent once")
        seen[spec.dirname] = spec.text


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
