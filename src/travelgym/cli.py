"""The ``travelgym`` command line: one entry point, one subcommand per job."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from travelgym import __version__
from travelgym.clikit import (
    GuardedGroup,
    InputPath,
    OutputPath,
    RuledCommand,
    RuledOption,
    comma_separated,
    is_used,
)

SUITES = click.Choice(["compass"])
ALL_SUITES = click.Choice(["compass", "behavior2trip"])  # suites with build/stats/tools/serve-mcp


def data_dir_option(func):
    """The ``--data-dir`` option every data-touching subcommand shares."""
    return click.option(
        "--data-dir",
        type=OutputPath("dir"),
        default=None,
        help="Data directory (default: $TRAVELGYM_DATA_DIR or the per-user data directory).",
    )(func)


def scale_option(func):
    return click.option(
        "--scale",
        type=click.Choice(["small", "full"]),
        default="small",
        show_default=True,
        help="behavior2trip only: database scale (small: ~80-120 POIs per category and city; "
        "full: the paper's Table 6 counts).",
    )(func)


def seed_option(func):
    return click.option(
        "--seed",
        type=click.IntRange(min=0),
        default=0,
        show_default=True,
        help="Seed of the generated database.",
    )(func)


def unsafe_sandbox_option(func):
    return click.option(
        "--unsafe-sandbox",
        is_flag=True,
        help="Where bubblewrap cannot run, run model-written code WITHOUT an operating-system "
        "sandbox (unsafe: the code can read the answer key; recorded in the run).",
    )(func)


def _allow_unsafe_sandbox(flag: bool) -> None:
    from travelgym import sandbox

    sandbox.allow_unsafe(flag)
    if flag:
        click.echo("warning: --unsafe-sandbox: where bubblewrap is unavailable, model-written "
                   "code runs without an operating-system boundary", err=True)  # fmt: skip


def emit_json(obj) -> None:
    click.echo(json.dumps(obj, indent=2, sort_keys=False))


@click.group(cls=GuardedGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="travelgym")
def main() -> None:
    """travelgym: benchmarks and training environments for travel-planning LLM agents."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        # SIGTERM exits through SystemExit, so that exit handlers run (a local llama.cpp
        # server this process started is stopped; run directories are already fsynced)
        signal.signal(signal.SIGTERM, _exit_on_sigterm)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


@main.command()
@click.argument("suite", type=ALL_SUITES)
@seed_option
@scale_option
@click.option("--force", is_flag=True, help="Rebuild even when the database is current.")
@click.option("--json", "as_json", is_flag=True, help="Print metadata as JSON.")
@data_dir_option
def build(
    suite: str, seed: int, scale: str, force: bool, as_json: bool, data_dir: Path | None
) -> None:
    """Build SUITE's database where it is missing or stale, and print where it is."""
    if suite == "behavior2trip":
        from travelgym.suites.behavior2trip.build import ensure_database as ensure_trips

        result = ensure_trips(scale=scale, seed=seed, data_dir=data_dir, force=force)
    else:
        from travelgym.suites.compass.build import ensure_database

        result = ensure_database(seed=seed, data_dir=data_dir, force=force)
    if as_json:
        emit_json({"path": str(result.path), "built": result.built, **result.metadata})
        return
    state = "built" if result.built else "up to date"
    click.echo(f"{suite} database {state}: {result.path}")
    click.echo(f"content hash: {result.metadata['content_hash']}")


@main.command()
@click.argument("suite", type=ALL_SUITES)
@seed_option
@scale_option
@click.option(
    "--db",
    type=InputPath(sqlite=True),
    default=None,
    help="Describe this database file instead of the generated one.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
@click.option(
    "--plots",
    type=OutputPath("dir"),
    default=None,
    help="Write PNG analogues of the paper's Figures 15-17 into this directory.",
)
@data_dir_option
def stats(
    suite: str,
    seed: int,
    scale: str,
    db: Path | None,
    as_json: bool,
    plots: Path | None,
    data_dir: Path | None,
) -> None:
    """Print table counts and calibration figures of SUITE's database."""
    if suite == "behavior2trip":
        _trips_stats(seed, scale, db, as_json, data_dir)
        return
    from travelgym.suites.compass.build import ensure_database
    from travelgym.suites.compass.stats import compute_stats

    path = db if db is not None else ensure_database(seed=seed, data_dir=data_dir).path
    result = compute_stats(path)
    result["path"] = str(path)
    if plots is not None:
        from travelgym.suites.compass.plots import write_plots

        result["plots"] = [str(p) for p in write_plots(path, plots)]
    if as_json:
        emit_json(result)
        return
    cal = result["calibration"]
    click.echo(f"database: {path}")
    click.echo(f"content hash: {result['content_hash']}")
    for table, count in result["counts"].items():
        click.echo(f"  {table:<22} {count:>9,}")
    click.echo(f"weekend/weekday price ratio: {cal['weekend_weekday_price_ratio']}")
    click.echo(f"most expensive parks: {', '.join(cal['parks_by_mean_price'][:3])}")
    click.echo(f"direct flight share: {cal['direct_share']}")
    for p in result.get("plots", []):
        click.echo(f"plot: {p}")


def _trips_stats(seed: int, scale: str, db: Path | None, as_json: bool, data_dir: Path | None):
    """``stats behavior2trip``: database counts and coverage, plus instance statistics when the
    instances module provides them."""
    from travelgym.suites.behavior2trip.build import ensure_database
    from travelgym.suites.behavior2trip.stats import database_stats

    path = db if db is not None else ensure_database(scale, seed, data_dir).path
    result = {"path": str(path), **database_stats(path)}
    try:
        from travelgym.suites.behavior2trip import instances
    except ImportError:
        instances = None
    if instances is not None and hasattr(instances, "instance_stats"):
        result["instances"] = instances.instance_stats(data_dir=data_dir)
    if as_json:
        emit_json(result)
        return
    click.echo(f"database: {path}")
    click.echo(f"content hash: {result['content_hash']}")
    for table, count in result["counts"].items():
        click.echo(f"  {table:<22} {count:>9,}")
    click.echo(f"  {'total':<22} {result['total_records']:>9,}")
    click.echo(f"every preference value covered in every city: {result['coverage']['complete']}")


@main.command()
@click.argument("suite", type=SUITES)
@click.argument("raw_dir", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option(
    "--out",
    "out",
    type=OutputPath("file"),
    required=True,
    help="SQLite file to write.",
)
@click.option("--json", "as_json", is_flag=True, help="Print metadata as JSON.")
def ingest(suite: str, raw_dir: Path, out: Path, as_json: bool) -> None:
    """Normalise raw Booking.com-API-shaped JSON responses in RAW_DIR into a database."""
    from travelgym.suites.compass.ingest import IngestError, ingest_raw

    try:
        meta = ingest_raw(raw_dir, out)
    except IngestError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        emit_json({"path": str(out), **meta})
    else:
        click.echo(f"ingested {raw_dir} -> {out}")
        click.echo(f"content hash: {meta['content_hash']}")


@main.command()
@click.argument("suite", type=ALL_SUITES)
@click.option("--markdown", is_flag=True, help="Print the Markdown tool reference instead of JSON.")
def tools(suite: str, markdown: bool) -> None:
    """Print SUITE's tool schemas (OpenAI function-calling JSON) or their Markdown reference."""
    if suite == "behavior2trip":
        from travelgym.suites.behavior2trip.tools import render_reference, trips_registry

        if markdown:
            click.echo(render_reference(), nl=False)
        else:
            emit_json(trips_registry().openai_schemas())
        return
    from travelgym.suites.compass.tools import TOOLS_INTRO, compass_registry

    registry = compass_registry()
    if markdown:
        from travelgym.toolkit.docs import render_markdown

        click.echo(render_markdown(registry, "COMPASS tool reference", TOOLS_INTRO), nl=False)
    else:
        emit_json(registry.openai_schemas())


@main.command("serve-mcp")
@click.argument("suite", type=ALL_SUITES)
@seed_option
@scale_option
@click.option(
    "--db",
    type=InputPath(sqlite=True),
    default=None,
    help="Serve this database file instead of the generated one.",
)
@data_dir_option
@unsafe_sandbox_option
def serve_mcp(suite: str, seed: int, scale: str, db: Path | None, data_dir: Path | None,
              unsafe_sandbox: bool) -> None:  # fmt: skip
    """Serve SUITE's tools as an MCP server over stdin/stdout (one episode per connection)."""
    from travelgym import sandbox
    from travelgym.toolkit.mcp_server import run_stdio

    if suite == "behavior2trip":
        _allow_unsafe_sandbox(unsafe_sandbox)
        try:
            kind = sandbox.require().kind
        except sandbox.SandboxUnavailable as exc:
            kind = None
            click.echo(f"warning: the Python tool will refuse every call: {exc}", err=True)
        if kind == "unsafe":
            click.echo("warning: the Python tool runs model code WITHOUT a sandbox", err=True)
        from travelgym.suites.behavior2trip.build import ensure_database as ensure_trips
        from travelgym.suites.behavior2trip.tools import TOOLS_INTRO as TRIPS_INTRO
        from travelgym.suites.behavior2trip.tools import TripsContext, trips_registry

        trips_path = db if db is not None else ensure_trips(scale, seed, data_dir).path
        run_stdio(
            trips_registry(),
            lambda: TripsContext.from_path(trips_path),
            name=f"travelgym-{suite}",
            instructions=TRIPS_INTRO,
        )
        return
    from travelgym.suites.compass.build import ensure_database
    from travelgym.suites.compass.tools import TOOLS_INTRO, CompassContext, compass_registry

    path = db if db is not None else ensure_database(seed=seed, data_dir=data_dir).path
    run_stdio(
        compass_registry(),
        lambda: CompassContext.from_path(path),
        name=f"travelgym-{suite}",
        instructions=TOOLS_INTRO,
    )


def _load_task_list(tasks_file: Path | None):
    from travelgym.suites.compass.tasks import load_tasks

    try:
        return load_tasks(tasks_file)
    except (OSError, ValueError, RecursionError) as exc:
        named = tasks_file is None or str(tasks_file) in str(exc)
        where = "" if named else f"{tasks_file}: "
        raise click.ClickException(f"{where}{exc}") from exc


@main.command("tasks")
@click.argument("suite", type=SUITES)
@click.option("--level", type=click.IntRange(1, 3), default=None, help="Only this level.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of full task objects.")
@click.option(
    "--tasks-file",
    type=InputPath(),
    default=None,
    help="Task file (default: the one shipped with travelgym).",
)
def list_tasks(suite: str, level: int | None, as_json: bool, tasks_file: Path | None) -> None:
    """List SUITE's tasks."""
    tasks = [t for t in _load_task_list(tasks_file) if level is None or t.level == level]
    if as_json:
        emit_json([t.model_dump(mode="json") for t in tasks])
        return
    click.echo(f"{'task':<13} {'level':>5}  {'objective':<32} {'constraints':>11}  park")
    for t in tasks:
        objective = getattr(t.objective, "metric", None) or f"{len(t.objective.features)} features"
        click.echo(
            f"{t.task_id:<13} {t.level:>5}  {t.objective.type + ': ' + objective:<32}"
            f" {len(t.constraints):>11}  {', '.join(t.park.park_ids)}"
        )
    click.echo(f"{len(tasks)} tasks")


@main.command()
@click.argument("suite", type=SUITES)
@click.option("--task", "task_ids", multiple=True, help="Only this task (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of ground truths.")
@seed_option
@data_dir_option
def solve(
    suite: str, task_ids: tuple[str, ...], as_json: bool, seed: int, data_dir: Path | None
) -> None:
    """Compute (or reuse) the exact ground truth of every task and print it."""
    from travelgym.suites.compass.ground_truth import ensure_ground_truth

    path, truths = ensure_ground_truth(seed=seed, data_dir=data_dir)
    unknown = [t for t in task_ids if t not in truths]
    if unknown:
        raise click.BadParameter(f"unknown task id(s): {', '.join(unknown)}", param_hint="--task")
    chosen = [truths[t] for t in task_ids] if task_ids else list(truths.values())
    if as_json:
        emit_json([t.model_dump(mode="json") for t in chosen])
        return
    click.echo(f"ground truth: {path}")
    for t in chosen:
        click.echo(f"{t.task_id}: |X_feas| = {t.feasible_count:,}, optimum = {t.optimum_value}")


SUITE_MARKERS = {  # keys only one suite's answers or episodes carry
    "behavior2trip": ("instance_id", "answer", "final_answer"),
    "compass": ("recommendation", "final_recommendation"),
}


def detect_suite(answers: Path) -> str | None:
    """The suite of an answers file or run directory: the run manifest's ``suite``, else the
    suite whose keys the first entry carries (:data:`SUITE_MARKERS`); ``None`` when unknown."""
    if answers.is_dir():
        try:
            manifest = json.loads((answers / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            manifest = None
        if isinstance(manifest, dict) and manifest.get("suite") in SUITE_MARKERS:
            return manifest["suite"]
        answers = answers / "episodes.jsonl"
    from travelgym.jsonl import JsonLinesError, iter_json_lines

    try:
        first = next((entry for _, entry in iter_json_lines(answers)), None)
    except JsonLinesError:
        return None  # the reader of the chosen suite names the problem
    if not isinstance(first, dict):
        return None
    if first.get("suite") in SUITE_MARKERS:
        return first["suite"]
    found = [suite for suite, keys in SUITE_MARKERS.items() if any(k in first for k in keys)]
    return found[0] if len(found) == 1 else None


def _chosen_suite(answers: Path, suite: str | None) -> str:
    """``--suite`` if given and not contradicted by ANSWERS, else the detected suite."""
    detected = detect_suite(answers)
    if suite is not None and detected is not None and suite != detected:
        raise click.UsageError(f"{answers} holds {detected} answers, not {suite}: drop --suite "
                               f"or use --suite {detected}")  # fmt: skip
    return suite or detected or "compass"


def _refuse_nothing_known(answers: Path, entries: list[dict], known: set[str], key: str) -> None:
    """An error when ANSWERS scores nothing: no entries, or none naming a known task."""
    if not entries:
        raise click.ClickException(f"{answers}: no answers in it")
    unknown = [e[key] for e in entries if e[key] not in known]
    if len(unknown) == len(entries):
        shown = ", ".join(map(repr, dict.fromkeys(unknown[:5])))
        raise click.ClickException(f"{answers}: none of its {len(entries)} answer(s) names a "
                                   f"known {key.replace('_', ' ')} (e.g. {shown})")  # fmt: skip


@main.command()
@click.argument("answers", type=InputPath(dir_okay=True))
@click.option("--json", "as_json", is_flag=True, help="Print the full score JSON.")
@click.option(
    "--suite",
    type=click.Choice(["compass", "behavior2trip"]),
    default=None,
    help="Which benchmark (default: detected from the run manifest or the answers).",
)
@seed_option
@data_dir_option
def score(
    answers: Path, as_json: bool, suite: str | None, seed: int, data_dir: Path | None
) -> None:
    """Score ANSWERS (a JSONL file of answers, or a run directory) against the benchmark."""
    from travelgym.runner.integrity import tampering

    tampered = tampering(answers) if answers.is_dir() else None
    if tampered:
        click.echo(f"warning: TAMPERED run: {tampered}", err=True)
    if _chosen_suite(answers, suite) == "behavior2trip":
        _score_trips(answers, as_json, seed, data_dir, tampered)
        return
    from travelgym.db import connect_readonly
    from travelgym.suites.compass.answers import AnswerFileError, read_answers
    from travelgym.suites.compass.build import ensure_database
    from travelgym.suites.compass.ground_truth import ensure_ground_truth
    from travelgym.suites.compass.scoring import score_answers

    notes: list[str] = []  # an unfinished run directory: how many episodes are missing
    try:
        entries = read_answers(answers, notes)
    except AnswerFileError as exc:
        raise click.ClickException(str(exc)) from exc
    for note in notes:
        click.echo(f"note: {note}", err=True)
    tasks = {t.task_id: t for t in _load_task_list(None)}
    _refuse_nothing_known(answers, entries, set(tasks), "task_id")
    _, truths = ensure_ground_truth(seed=seed, data_dir=data_dir)
    conn = connect_readonly(ensure_database(seed=seed, data_dir=data_dir).path)
    result = score_answers(conn, tasks, truths, entries)
    if as_json:
        emit_json({**result, "tampered": tampered})
        return
    click.echo(format_score_table(result))
    if tampered:
        click.echo(f"TAMPERED: {tampered}")


def _score_trips(answers: Path, as_json: bool, seed: int, data_dir: Path | None,
                 tampered: str | None = None) -> None:  # fmt: skip
    """Behavior2Trip scoring: DR, C and UPC micro/macro and final pass rates by difficulty."""
    from travelgym.suites.behavior2trip.build import ensure_database
    from travelgym.suites.behavior2trip.instances import ensure_instances
    from travelgym.suites.behavior2trip.scoring import AnswerFileError, read_answers, score_answers

    notes: list[str] = []  # an unfinished run directory: how many episodes are missing
    try:
        entries = read_answers(answers, notes)
    except AnswerFileError as exc:
        raise click.ClickException(str(exc)) from exc
    for note in notes:
        click.echo(f"note: {note}", err=True)
    if not entries:
        raise click.ClickException(f"{answers}: no answers in it")
    db = ensure_database(seed=seed, data_dir=data_dir)
    instances = {}
    wanted = {e["instance_id"] for e in entries}
    for path in ensure_instances(db, data_dir).values():
        instances.update({x.instance_id: x for x in _read_instances(path, wanted)})
    _refuse_nothing_known(answers, entries, set(instances), "instance_id")
    result = score_answers(entries, instances, db.path)
    if as_json:
        emit_json({**result, "tampered": tampered})
        return
    lines = [f"{'':<10} {'n':>5} {'DR':>7} {'C-micro':>8} {'C-macro':>8} {'UPC-micro':>10} "
             f"{'UPC-macro':>10} {'final':>7}"]  # fmt: skip
    for name, agg in [("overall", result["overall"]), *result["by_difficulty"].items()]:
        lines.append(f"{name:<10} {agg['n']:>5} {agg['DR']:>7.1f} {agg['C_micro']:>8.1f} "
                     f"{agg['C_macro']:>8.1f} {agg['UPC_micro']:>10.1f} {agg['UPC_macro']:>10.1f} "
                     f"{agg['final']:>7.1f}")  # fmt: skip
    if tampered:
        lines.append(f"TAMPERED: {tampered}")
    click.echo("\n".join(lines))


def _read_instances(path: Path, wanted: set[str]):
    """The instances of an instance file whose ids are ``wanted``; a line whose leading
    ``instance_id`` is not wanted is skipped unparsed (instance files are large)."""
    import re

    from travelgym.suites.behavior2trip.instances import Instance

    leading_id = re.compile(r'\{"instance_id":"([^"\\]*)"')
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            found = leading_id.match(line)
            if (found is None or found.group(1) in wanted) and line.strip():
                instance = Instance.model_validate_json(line)
                if instance.instance_id in wanted:
                    yield instance


def format_score_table(result: dict) -> str:
    """A plain-text table of FR / OR-5 / OR-10 / OR-20 / optimal overall, by level and objective."""
    rows = [("overall", result["overall"])]
    rows += [(f"level {k}", v) for k, v in result["by_level"].items()]
    rows += [(k, v) for k, v in result["by_objective"].items()]
    lines = [f"{'':<14} {'n':>4} {'FR':>7} {'OR-5':>7} {'OR-10':>7} {'OR-20':>7} {'optimal':>8}"]
    for name, agg in rows:
        lines.append(
            f"{name:<14} {agg['n']:>4} {agg['FR']:>7.1f} {agg['OR5']:>7.1f} "
            f"{agg['OR10']:>7.1f} {agg['OR20']:>7.1f} {agg['optimal']:>8.1f}"
        )
    for error in result.get("errors", []):
        lines.append(f"warning: {error}")
    return "\n".join(lines)


COMPASS, TRIPS = ["compass"], ["behavior2trip"]
LLM_OPTIONS = ("base_url", "max_calls", "max_tokens_total", "cache_dir")  # useless without an LLM


# Options without ``suites`` apply to both suites; every rule is checked by RuledCommand.
@main.command(cls=RuledCommand)
@click.argument("suite", type=ALL_SUITES)
@click.option(
    "--agent",
    "agents",
    multiple=True,
    help="Agent spec KIND:ARG: scripted:greedy|sampled|exhaustive, llm:MODEL, code:MODEL, "
    "local:smollm2, local:PATH.gguf or hf:CHECKPOINT_DIR (repeatable; default: the three "
    "scripted baselines). behavior2trip: scripted, react:MODEL, b2t:MODEL, local:GGUF or "
    "hf:CHECKPOINT_DIR (default: scripted).",
)
@click.option(
    "--user",
    cls=RuledOption,
    suites=COMPASS,
    default="template",
    show_default=True,
    help="template, llm:MODEL, local:smollm2 / local:PATH.gguf or hf:CHECKPOINT_DIR.",
)
@click.option(
    "--tasks",
    "task_ids",
    default=None,
    callback=comma_separated,
    help="Comma-separated task ids (behavior2trip: instance ids).",
)
@click.option(
    "--level",
    cls=RuledOption,
    suites=COMPASS,
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
    suites=COMPASS,
    type=click.IntRange(1, 100),
    default=1,
    show_default=True,
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
    suites=COMPASS,
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
    suites=TRIPS,
    type=click.Choice(["train", "test"]),
    default=None,
    help="the instance split (default: test).",
)
@click.option(
    "--difficulty",
    cls=RuledOption,
    suites=TRIPS,
    conflicts=["task_ids"],
    counterpart="level",
    type=click.Choice(["easy", "medium", "hard"]),
    default=None,
    help="instances of this difficulty.",
)
@click.option(
    "--max-steps",
    cls=RuledOption,
    suites=TRIPS,
    counterpart="max_turns",
    type=click.IntRange(1, 200),
    default=None,
    help="agent steps per episode (default: 25).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the score summaries as JSON.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@data_dir_option
@unsafe_sandbox_option
def run(
    suite: str,
    agents: tuple[str, ...],
    user: str,
    task_ids: list[str] | None,
    level: int | None,
    limit: int | None,
    trials: int,
    concurrency: int,
    seed: int,
    db_seed: int,
    out: Path,
    resume: bool,
    retry_errors: bool,
    repair: bool,
    base_url: str | None,
    max_turns: int,
    max_calls: int | None,
    max_tokens_total: int | None,
    cache_dir: Path | None,
    split: str | None,
    difficulty: str | None,
    max_steps: int | None,
    as_json: bool,
    no_progress: bool,
    data_dir: Path | None,
    unsafe_sandbox: bool,
) -> None:
    """Run the benchmark: simulated user x agent conversations, scored against the ground truth
    (behavior2trip: one planning episode per instance, scored by the 32 checks)."""
    import asyncio

    _allow_unsafe_sandbox(unsafe_sandbox)

    options = {k: v for k, v in {"max_calls": max_calls, "max_tokens": max_tokens_total,
                                 "cache_dir": cache_dir}.items() if v is not None}  # fmt: skip
    if repair and not resume:
        raise click.UsageError("--repair works on a run being continued: add --resume")
    if suite == "behavior2trip":
        _run_trips(agents, out or Path("runs/behavior2trip"), split or "test", difficulty,
                   task_ids, limit, concurrency, seed, db_seed, resume, retry_errors, base_url,
                   max_steps, options, as_json, no_progress, data_dir, repair)  # fmt: skip
        return
    out = out if out is not None else Path("runs/compass")

    from travelgym.llm.protocol import LLMError
    from travelgym.runner.batch import RunConfig, run_compass
    from travelgym.runner.specs import DEFAULT_AGENTS, SpecError, parse_agent_spec, parse_user_spec
    from travelgym.runner.store import RunDirError
    from travelgym.sandbox import SandboxUnavailable

    try:
        specs = [parse_agent_spec(a) for a in (agents or DEFAULT_AGENTS)]
        user_kind, _ = parse_user_spec(user)
    except SpecError as exc:
        raise click.BadParameter(str(exc)) from exc
    _refuse_llm_options_without_llm(any(s.kind != "scripted" for s in specs)
                                    or user_kind != "template")  # fmt: skip
    ids = task_ids
    results = {}
    for spec in specs:
        cfg = RunConfig(agent=spec, out=out / spec.dirname, user=user, task_ids=ids, level=level,
                        limit=limit, trials=trials, concurrency=concurrency, seed=seed,
                        db_seed=db_seed, data_dir=data_dir, resume=resume,
                        retry_errors=retry_errors, repair=repair, base_url=base_url,
                        max_turns=max_turns, progress=not no_progress and not as_json,
                        client_options=options)  # fmt: skip
        try:
            results[spec.text] = asyncio.run(run_compass(cfg))
        except (RunDirError, ValueError, LLMError, SandboxUnavailable) as exc:
            raise click.ClickException(str(exc)) from exc
        if not as_json:
            click.echo(f"{spec.text}: {len(results[spec.text]['tasks'])} episodes in {cfg.out}")
    if as_json:
        emit_json(
            {agent: {k: v for k, v in r.items() if k != "tasks"} for agent, r in results.items()}
        )
        return
    click.echo(format_agents_table(results))


def _run_trips(agents, out, split, difficulty, task_ids, limit, concurrency, seed, db_seed,
               resume, retry_errors, base_url, max_steps, options, as_json, no_progress,
               data_dir, repair=False) -> None:  # fmt: skip
    """``run behavior2trip``: one run directory per agent, then the table by difficulty."""
    import asyncio

    from travelgym.llm.protocol import LLMError
    from travelgym.runner.specs import SpecError
    from travelgym.runner.store import RunDirError
    from travelgym.sandbox import SandboxUnavailable
    from travelgym.suites.behavior2trip.agents.base import DEFAULT_MAX_STEPS
    from travelgym.suites.behavior2trip.runner import (
        DEFAULT_TRIP_AGENT,
        TripRunConfig,
        format_trips_table,
        parse_trip_agent,
        run_behavior2trip,
    )

    try:
        specs = [parse_trip_agent(a) for a in (agents or (DEFAULT_TRIP_AGENT,))]
    except SpecError as exc:
        raise click.BadParameter(str(exc)) from exc
    _refuse_llm_options_without_llm(any(s.kind != "scripted" for s in specs))
    ids = task_ids
    results = {}
    for spec in specs:
        cfg = TripRunConfig(agent=spec, out=out / spec.dirname, split=split,
                            difficulty=difficulty, instance_ids=ids, limit=limit,
                            concurrency=concurrency, seed=seed, db_seed=db_seed,
                            data_dir=data_dir, resume=resume, retry_errors=retry_errors,
                            repair=repair, base_url=base_url, max_steps=max_steps or DEFAULT_MAX_STEPS,
                            progress=not no_progress and not as_json, client_options=options)  # fmt: skip
        try:
            results[spec.text] = asyncio.run(run_behavior2trip(cfg))
        except (RunDirError, ValueError, LLMError, SandboxUnavailable) as exc:
            raise click.ClickException(str(exc)) from exc
        if not as_json:
            click.echo(f"{spec.text}: {results[spec.text]['episodes']} episodes in {cfg.out}")
    if as_json:
        emit_json({a: {k: v for k, v in r.items() if k != "instances"} for a, r in results.items()})
        return
    click.echo(format_trips_table(results))


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


def format_agents_table(results: dict[str, dict]) -> str:
    """FR and OR-5/10/20 by agent and level: the feasible-optimal gap at a glance."""
    lines = [f"{'agent':<22} {'level':<8} {'n':>4} {'FR':>7} {'OR-5':>7} {'OR-10':>7} {'OR-20':>7}"]
    for agent, result in results.items():
        rows = [("all", result["overall"])] + [(f"L{k}", v) for k, v in result["by_level"].items()]
        for name, agg in rows:
            lines.append(
                f"{agent:<22} {name:<8} {agg['n']:>4} {agg['FR']:>7.1f} {agg['OR5']:>7.1f} "
                f"{agg['OR10']:>7.1f} {agg['OR20']:>7.1f}"
            )
    return "\n".join(lines)


@main.command()
@click.argument(
    "run_dirs",
    nargs=-1,
    required=True,
    type=click.Path(file_okay=False, exists=True, path_type=Path),
)
@click.option("--json", "as_json", is_flag=True, help="Print the whole analysis as JSON.")
@click.option(
    "--plots",
    type=OutputPath("dir"),
    default=None,
    help="Write PNG and SVG counterparts of the paper's Figures 2-4 and 7-11 into this directory.",
)
@click.option(
    "--episodes/--no-episodes",
    default=True,
    show_default=True,
    help="Include the per-episode feature rows in the JSON.",
)
@click.option(
    "--resamples",
    type=click.IntRange(min=100),
    default=2000,
    show_default=True,
    help="Bootstrap resamples for run comparisons.",
)
@click.option(
    "--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Bootstrap seed."
)
@click.option(
    "--allow-mixed",
    is_flag=True,
    help="Pool runs of one agent into its stability row even when they differ in task set, "
    "task file or database (the row then says so).",
)
def analyze(
    run_dirs: tuple[Path, ...],
    as_json: bool,
    plots: Path | None,
    episodes: bool,
    resamples: int,
    seed: int,
    allow_mixed: bool,
) -> None:
    """Compute the COMPASS analysis metrics of RUN_DIRS (one agent each) and compare them."""
    from travelgym.analysis.metrics import analyze_runs
    from travelgym.analysis.summary import format_analysis
    from travelgym.runner.store import RunDirError

    try:
        result = analyze_runs(list(run_dirs), resamples=resamples, seed=seed,
                              allow_mixed=allow_mixed)  # fmt: skip
    except (RunDirError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    if plots is not None:
        from travelgym.analysis.plots import write_plots

        result["plots"] = [str(p) for p in write_plots(result, plots)]
    if not episodes:
        for run in result["runs"].values():
            run.pop("episodes", None)
    if as_json:
        emit_json(result)
        return
    click.echo(format_analysis(result))
    for p in result.get("plots", []):
        click.echo(f"plot: {p}")


@main.command()
@click.argument(
    "run_dirs",
    nargs=-1,
    required=True,
    type=click.Path(file_okay=False, exists=True, path_type=Path),
)
@click.option(
    "--out",
    type=OutputPath("file"),
    default=Path("report.html"),
    show_default=True,
    help="HTML file to write.",
)
@click.option(
    "--max-result-chars",
    type=click.IntRange(min=100),
    default=2000,
    show_default=True,
    help="Cut tool results longer than this in the embedded data.",
)
@click.option("--no-analysis", is_flag=True, help="Leave out the analysis tables and figures.")
@click.option("--title", default=None, help="Page title (default: the runs' agents).")
@data_dir_option
def report(
    run_dirs: tuple[Path, ...],
    out: Path,
    max_result_chars: int,
    no_analysis: bool,
    title: str | None,
    data_dir: Path | None,
) -> None:
    """Write one self-contained HTML report of RUN_DIRS: score tables, analysis, figures and a
    trajectory viewer with per-turn verdicts."""
    from travelgym.analysis.report import write_report
    from travelgym.runner.store import RunDirError

    try:
        result = write_report(list(run_dirs), out, data_dir=data_dir,
                              max_result_chars=max_result_chars,
                              include_analysis=not no_analysis, title=title)  # fmt: skip
    except (RunDirError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    seconds = sum(result.timings.values())
    click.echo(f"wrote {result.path} ({result.size_bytes / 2**20:.1f} MiB): {result.runs} run(s), "
               f"{result.episodes} episode(s), {result.verdicts} plan verdict(s) in {seconds:.1f} s")  # fmt: skip


@main.group()
def annotate() -> None:
    """Human annotation of the user simulator (COMPASS Appendix H, Table 3)."""


@annotate.command("export")
@click.argument("run_dir", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option(
    "--conversations",
    type=click.IntRange(min=1),
    default=45,
    show_default=True,
    help="Conversations to sample (all their user responses after the opening become rows).",
)
@click.option(
    "--responses",
    type=click.IntRange(min=1),
    default=None,
    help="Keep a seeded sample of this many responses (default: all of them).",
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option(
    "--format", "fmt", type=click.Choice(["csv", "jsonl"]), default="csv", show_default=True
)
@click.option("--out", type=OutputPath("file"), required=True)
def annotate_export(
    run_dir: Path, conversations: int, responses: int | None, seed: int, fmt: str, out: Path
) -> None:
    """Write an annotation sheet of RUN_DIR's user responses with empty error flags and rubrics."""
    from travelgym.analysis.annotate import export_sheet
    from travelgym.runner.store import RunDirError

    try:
        result = export_sheet(run_dir, out, conversations=conversations, seed=seed, fmt=fmt,
                              responses=responses)  # fmt: skip
    except (RunDirError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"wrote {result.rows} response(s) from {result.conversations} conversation(s) "
               f"(of {result.eligible} eligible) to {result.path}")  # fmt: skip


@annotate.command("summarize")
@click.argument("sheet", type=InputPath())
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
def annotate_summarize(sheet: Path, as_json: bool) -> None:
    """Table 3 of a filled SHEET: error rates, rubric means, spreads and distributions."""
    from travelgym.analysis.annotate import AnnotationError, format_summary, summarize_sheet

    try:
        result = summarize_sheet(sheet)
    except AnnotationError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        emit_json(result)
        return
    click.echo(format_summary(result))


@main.command("generate-tasks")
@click.argument("suite", type=SUITES)
@click.option("--out", type=OutputPath("file"), required=True)
@click.option(
    "--task-seed",
    type=click.IntRange(min=0),
    default=None,
    help="Task generator seed (default: the seed of the shipped task set).",
)
@data_dir_option
def generate_tasks_cmd(suite: str, out: Path, task_seed: int | None, data_dir: Path | None) -> None:
    """Regenerate the task set (seed-0 database) into OUT, with its manifest."""
    from travelgym.suites.compass.taskgen import write_task_file

    meta = write_task_file(out, task_seed=task_seed, data_dir=data_dir)
    click.echo(f"wrote {meta['count']} tasks to {out} (sha256 {meta['sha256'][:12]})")


from travelgym.training.cli import export  # noqa: E402 - training data (SFT export)
from travelgym.training.train_cli import train  # noqa: E402 - GRPO / SFT (the train extra)

main.add_command(export)
main.add_command(train)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
