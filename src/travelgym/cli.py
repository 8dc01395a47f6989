"""The ``travelgym`` command line: one entry point, one subcommand per job."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from travelgym import __version__

SUITES = click.Choice(["compass"])


def data_dir_option(func):
    """The ``--data-dir`` option every data-touching subcommand shares."""
    return click.option(
        "--data-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Data directory (default: $TRAVELGYM_DATA_DIR or the per-user data directory).",
    )(func)


def seed_option(func):
    return click.option(
        "--seed",
        type=click.IntRange(min=0),
        default=0,
        show_default=True,
        help="Seed of the generated database.",
    )(func)


def emit_json(obj) -> None:
    click.echo(json.dumps(obj, indent=2, sort_keys=False))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="travelgym")
def main() -> None:
    """travelgym: benchmarks and training environments for travel-planning LLM agents."""


@main.command()
@click.argument("suite", type=SUITES)
@seed_option
@click.option("--force", is_flag=True, help="Rebuild even when the database is current.")
@click.option("--json", "as_json", is_flag=True, help="Print metadata as JSON.")
@data_dir_option
def build(suite: str, seed: int, force: bool, as_json: bool, data_dir: Path | None) -> None:
    """Build SUITE's database where it is missing or stale, and print where it is."""
    from travelgym.parks.build import ensure_database

    result = ensure_database(seed=seed, data_dir=data_dir, force=force)
    if as_json:
        emit_json({"path": str(result.path), "built": result.built, **result.metadata})
        return
    state = "built" if result.built else "up to date"
    click.echo(f"{suite} database {state}: {result.path}")
    click.echo(f"content hash: {result.metadata['content_hash']}")


@main.command()
@click.argument("suite", type=SUITES)
@seed_option
@click.option(
    "--db",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="Describe this database file instead of the generated one.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
@click.option(
    "--plots",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write PNG analogues of the paper's Figures 15-17 into this directory.",
)
@data_dir_option
def stats(
    suite: str, seed: int, db: Path | None, as_json: bool, plots: Path | None, data_dir: Path | None
) -> None:
    """Print table counts and calibration figures of SUITE's database."""
    from travelgym.parks.build import ensure_database
    from travelgym.parks.stats import compute_stats

    path = db if db is not None else ensure_database(seed=seed, data_dir=data_dir).path
    result = compute_stats(path)
    result["path"] = str(path)
    if plots is not None:
        from travelgym.parks.plots import write_plots

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


@main.command()
@click.argument("suite", type=SUITES)
@click.argument("raw_dir", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="SQLite file to write.",
)
@click.option("--json", "as_json", is_flag=True, help="Print metadata as JSON.")
def ingest(suite: str, raw_dir: Path, out: Path, as_json: bool) -> None:
    """Normalise raw Booking.com-API-shaped JSON responses in RAW_DIR into a database."""
    from travelgym.parks.ingest import IngestError, ingest_raw

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
@click.argument("suite", type=SUITES)
@click.option("--markdown", is_flag=True, help="Print the Markdown tool reference instead of JSON.")
def tools(suite: str, markdown: bool) -> None:
    """Print SUITE's tool schemas (OpenAI function-calling JSON) or their Markdown reference."""
    from travelgym.parks.tools import TOOLS_INTRO, compass_registry

    registry = compass_registry()
    if markdown:
        from travelgym.toolkit.docs import render_markdown

        click.echo(render_markdown(registry, "COMPASS tool reference", TOOLS_INTRO), nl=False)
    else:
        emit_json(registry.openai_schemas())


@main.command("serve-mcp")
@click.argument("suite", type=SUITES)
@seed_option
@click.option(
    "--db",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="Serve this database file instead of the generated one.",
)
@data_dir_option
def serve_mcp(suite: str, seed: int, db: Path | None, data_dir: Path | None) -> None:
    """Serve SUITE's tools as an MCP server over stdin/stdout (one episode per connection)."""
    from travelgym.parks.build import ensure_database
    from travelgym.parks.tools import TOOLS_INTRO, CompassContext, compass_registry
    from travelgym.toolkit.mcp_server import run_stdio

    path = db if db is not None else ensure_database(seed=seed, data_dir=data_dir).path
    run_stdio(
        compass_registry(),
        lambda: CompassContext.from_path(path),
        name=f"travelgym-{suite}",
        instructions=TOOLS_INTRO,
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
