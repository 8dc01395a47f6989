"""Commands over a suite's data, tools and tasks: ``suites``, ``build``, ``stats``, ``ingest``,
``tools``, ``serve-mcp``, ``tasks``, ``solve`` and ``generate-tasks``."""

from __future__ import annotations

from pathlib import Path

import click

from travelgym.cli.common import (
    allow_unsafe_sandbox,
    data_dir_option,
    db_file_option,
    emit_json,
    int_option,
    json_option,
    plots_option,
    seed_option,
    suite_argument,
    suite_flags,
    suite_options,
    unsafe_sandbox_option,
)
from travelgym.clikit import InputPath, OutputPath, RuledCommand
from travelgym.clikit.options import distinct
from travelgym.core.registry import all_suites, broken_suites, require


def register(main: click.Group) -> None:
    """Add this module's commands to ``main``."""
    for command in (suites, build, stats, ingest, tools, serve_mcp, list_tasks, solve,
                    generate_tasks_cmd):  # fmt: skip
        main.add_command(command)


@click.command("suites")
@json_option("Print the suites as JSON.")
def suites(as_json: bool) -> None:
    """List the installed benchmark suites and what each supports."""
    from travelgym.core.capabilities import capabilities_of

    rows = [{"name": s.name, "title": s.title, "description": s.description,
             "options": list(s.Options.model_fields), "agents": s.agent_usage,
             "default_agents": list(s.default_agents), "capabilities": capabilities_of(s)}
            for s in all_suites()]  # fmt: skip
    rows += [{"name": name, "error": why} for name, why in broken_suites().items()]
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        if "error" in row:
            click.echo(f"{row['name']}: not loaded ({row['error']})")
            continue
        extra = f" (also: {', '.join(row['capabilities'])})" if row["capabilities"] else ""
        click.echo(f"{row['name']}: {row['title']} — {row['description']}{extra}")


@click.command(cls=RuledCommand)
@suite_flags("build")
@suite_argument()
@seed_option
@click.option("--force", is_flag=True, help="Rebuild even when the database is current.")
@json_option("Print metadata as JSON.")
@data_dir_option
def build(suite: str, seed: int, force: bool, as_json: bool, data_dir: Path | None,
          **flags) -> None:  # fmt: skip
    """Build SUITE's database where it is missing or stale, and print where it is."""
    chosen, options = suite_options(suite, **flags)
    result = chosen.build(options, seed, data_dir, force=force)
    if as_json:
        emit_json({"path": str(result.path), "built": result.built, **result.metadata})
        return
    state = "built" if result.built else "up to date"
    click.echo(f"{suite} database {state}: {result.path}")
    click.echo(f"content hash: {result.metadata['content_hash']}")


@click.command(cls=RuledCommand)
@suite_flags("stats")
@suite_argument()
@seed_option
@db_file_option("Describe")
@json_option("Print the statistics as JSON.")
@plots_option("PNG analogues of the paper's Figures 15-17")
@data_dir_option
def stats(suite: str, seed: int, db: Path | None, as_json: bool,
          plots: Path | None, data_dir: Path | None, **flags) -> None:  # fmt: skip
    """Print table counts and calibration figures of SUITE's database."""
    chosen, options = suite_options(suite, **flags)
    result = chosen.stats(options, seed, db, data_dir, plots)
    if as_json:
        emit_json(result)
        return
    click.echo(chosen.format_stats(result))


@click.command(cls=RuledCommand)
@suite_flags("ingest")
@suite_argument("ingest")
@click.argument("raw_dir", required=False,
                type=InputPath(dir_okay=True, file_okay=False))  # fmt: skip
@click.option(
    "--out",
    "out",
    type=OutputPath("file"),
    default=None,
    help="SQLite file to write (suites that write into the data directory take none).",
)
@json_option("Print metadata as JSON.")
@data_dir_option
def ingest(suite: str, raw_dir: Path | None, out: Path | None, as_json: bool,
           data_dir: Path | None, **flags) -> None:  # fmt: skip
    """Normalise SUITE's raw data (compass: the Booking.com-API-shaped JSON responses in
    RAW_DIR, into --out) into its database."""
    require(suite, "ingest")
    chosen, options = suite_options(suite, **flags)
    meta = chosen.ingest(raw_dir, out, options, data_dir)
    if as_json:
        emit_json(meta)
    else:
        click.echo(f"ingested {raw_dir or 'the given files'} -> {meta.get('path', out)}")
        click.echo(f"content hash: {meta['content_hash']}")


@click.command()
@suite_argument()
@click.option("--markdown", is_flag=True, help="Print the Markdown tool reference instead of JSON.")
def tools(suite: str, markdown: bool) -> None:
    """Print SUITE's tool schemas (OpenAI function-calling JSON) or their Markdown reference."""
    chosen, _ = suite_options(suite)
    if markdown:
        click.echo(chosen.tool_reference(), nl=False)
    else:
        emit_json(chosen.tool_registry().openai_schemas())


@click.command("serve-mcp", cls=RuledCommand)
@suite_flags("serve-mcp")
@suite_argument()
@seed_option
@db_file_option("Serve")
@data_dir_option
@unsafe_sandbox_option
def serve_mcp(suite: str, seed: int, db: Path | None, data_dir: Path | None,
              unsafe_sandbox: bool, **flags) -> None:  # fmt: skip
    """Serve SUITE's tools as an MCP server over stdin/stdout (one episode per connection)."""
    from travelgym import sandbox
    from travelgym.toolkit.mcp_server import run_stdio

    chosen, options = suite_options(suite, **flags)
    if chosen.tools_run_code:
        allow_unsafe_sandbox(unsafe_sandbox)
        try:
            kind = sandbox.require().kind
        except sandbox.SandboxUnavailable as exc:
            kind = None
            click.echo(f"warning: the Python tool will refuse every call: {exc}", err=True)
        if kind == "unsafe":
            click.echo("warning: the Python tool runs model code WITHOUT a sandbox", err=True)
    contexts, instructions = chosen.tool_server(options, seed, db, data_dir)
    run_stdio(chosen.tool_registry(), contexts, name=f"travelgym-{suite}",
              instructions=instructions)  # fmt: skip


@click.command("tasks", cls=RuledCommand)
@suite_flags("tasks")
@suite_argument()
@json_option("Print a JSON array of task objects (what an agent is told at the start).")
@click.option("--ground-truth", is_flag=True,
              help="With --json: the whole task objects, hidden fields included (constraints "
                   "revealed later, a hidden profile, an answer key).")  # fmt: skip
@data_dir_option
def list_tasks(suite: str, as_json: bool, ground_truth: bool, data_dir: Path | None,
               **flags) -> None:  # fmt: skip
    """List SUITE's tasks."""
    if ground_truth and not as_json:
        raise click.UsageError("--ground-truth needs --json")
    chosen, options = suite_options(suite, **flags)
    tasks = chosen.list_tasks(options, data_dir)
    if as_json:  # the suite's one declaration of what is hidden (Suite.public_task)
        emit_json([t.model_dump(mode="json") if ground_truth else chosen.listed_task(t)
                   for t in tasks])  # fmt: skip
        return
    click.echo(chosen.format_tasks(tasks))


@click.command()
@suite_argument("solve")
@click.option(
    "--task", "task_ids", multiple=True, callback=distinct, help="Only this task (repeatable)."
)
@json_option("Print a JSON array of ground truths.")
@seed_option
@data_dir_option
def solve(suite: str, task_ids: tuple[str, ...], as_json: bool, seed: int,
          data_dir: Path | None) -> None:  # fmt: skip
    """Compute (or reuse) the exact ground truth of every task (or of the --task ones) and
    print it."""
    from travelgym.core.errors import UserError

    chosen = require(suite, "solve")
    try:
        path, truths = chosen.solve(list(task_ids), seed, data_dir)
    except UserError as exc:
        raise click.BadParameter(str(exc), param_hint="--task") from exc
    if as_json:
        emit_json([t.model_dump(mode="json") for t in truths])
        return
    click.echo(chosen.format_solution(path, truths))


@click.command("generate-tasks")
@suite_argument("generate-tasks")
@click.option("--out", type=OutputPath("file"), required=True)
@int_option(
    "--task-seed",
    at_least=0,
    help="Task generator seed (default: the seed of the shipped task set).",
)
@int_option(
    "--db-seed",
    at_least=0,
    default=0,
    help="Seed of the database the tasks are drawn and solved on.",
)
@data_dir_option
def generate_tasks_cmd(
    suite: str, out: Path, task_seed: int | None, db_seed: int, data_dir: Path | None
) -> None:
    """Regenerate the task set (on the --db-seed database) into OUT, with its manifest."""
    click.echo(require(suite, "generate-tasks").generate_tasks(out, task_seed, data_dir, db_seed))
