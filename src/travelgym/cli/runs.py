"""``travelgym runs``: the run directories under ``runs/`` (or another root), newest first."""

from __future__ import annotations

from pathlib import Path

import click

from travelgym.cli.common import emit_json, json_option
from travelgym.clikit import InputPath
from travelgym.core.columns import Column, text_column
from travelgym.core.registry import suite_names

# the listing's columns (their keys are those of ``--json``'s rows)
RUN_COLUMNS = (
    text_column("directory"),
    text_column("suite"),
    text_column("agent"),
    Column("episodes", "n", unit="", decimals=0, legend="episodes in the run directory"),
    Column(
        "success_pct",
        "success %",
        legend="the suite's success criterion (as pass^k counts it) over the counted episodes",
    ),  # fmt: skip
    Column("infra_errors", "infra errors", unit="", decimals=0),
    text_column("cost_usd", "cost"),
    text_column("created", "created (UTC)"),
)


@click.command("runs")
@click.argument("suite", required=False, type=click.Choice(suite_names()))
@click.option(
    "--root",
    type=InputPath(dir_okay=True, file_okay=False, exists=False),
    default=Path("runs"),
    show_default=True,
    help="Where to look: runs/, one suite's directory or an --out directory (runs two levels "
    "down at most).",
)
@json_option("Print the runs as a JSON list (with each run's headline figures).")
def runs(suite: str | None, root: Path, as_json: bool) -> None:
    """List the run directories under --root (of SUITE if given), newest first: agent,
    episodes, success (the suite's success criterion over the counted episodes, as pass^k
    counts it), infra errors, cost and date. Directories that are not readable runs are
    skipped with a note on stderr."""
    from travelgym.core.columns import table
    from travelgym.runner.run_dirs import list_runs

    rows, notes = list_runs(root, suite)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    if as_json:
        emit_json([row.as_json() for row in rows])
        return
    if not rows:
        click.echo(f"no runs under {root}" + (f" of {suite}" if suite else ""), err=True)
        return
    table_rows = [[r.directory, r.suite, r.agent, r.episodes, r.success_pct, r.infra_errors,
                   "-" if r.cost_usd is None else f"${r.cost_usd:,.4f}", _date(r.created)]
                  for r in rows]  # fmt: skip
    click.echo(table(RUN_COLUMNS, table_rows))


def _date(created: str | None) -> str:
    """A manifest's ISO creation time as ``YYYY-MM-DD HH:MM`` (UTC), ``-`` when unknown."""
    if not created:
        return "-"
    return created[:16].replace("T", " ")
