"""``travelgym play``: a person plays one episode in the terminal, as the agent (driving the
suite's model agent, :attr:`~travelgym.core.Suite.model_agent`, with a
:class:`~travelgym.llm.human_client.HumanChatClient` as its model) or as the simulated user
(the suite's :attr:`~travelgym.core.Suite.user_option` set to ``human``) against an agent.

The episode runs through the one runner, so it is stored as a normal run directory (manifest,
``episodes.jsonl``) and scored like any other; the score printed at the end is what
``travelgym score RUN_DIR`` prints.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from travelgym.cli.common import (
    allow_unsafe_sandbox,
    base_url_option,
    data_dir_option,
    int_option,
    parse_settings,
    settings_option,
    suite_argument,
    suite_flags,
    suite_options,
    unsafe_sandbox_option,
)
from travelgym.clikit import OutputPath, RuledCommand, is_used
from travelgym.core.registry import all_suites, get_suite
from travelgym.terminal import printable

if TYPE_CHECKING:
    from travelgym.llm.endpoints import BaseURL

HUMAN_MODEL = "human:player"  # the agent's model when a person plays it (llm.factory)
# the value of a suite's user_option that puts a person at the terminal in the user's place:
# a suite with a user in the loop accepts it (docs/play.md)
HUMAN_USER = "human"


def _owners(attribute: str) -> str:
    return ", ".join(s.name for s in all_suites() if getattr(s, attribute)) or "none"


def choose_agent(suite: Any, role: str, agent: str | None, options: dict[str, Any]) -> str:
    """The agent spec of the episode (and, ``--as user``, the person put in the user's place in
    ``options``); a usage error where the suite has no such role."""
    if role == "agent":
        if agent is not None:
            raise click.UsageError("--agent applies to --as user (with --as agent you are the "
                                   "agent)")  # fmt: skip
        if suite.model_agent is None:
            raise click.UsageError(f"{suite.name} has no model-driven agent to play (suites "
                                   f"with one: {_owners('model_agent')})")  # fmt: skip
        return f"{suite.model_agent}:{HUMAN_MODEL}"
    if suite.user_option is None:
        raise click.UsageError(f"{suite.name} has no simulated user to play (suites with one: "
                               f"{_owners('user_option')})")  # fmt: skip
    if suite.user_option in options:
        raise click.UsageError(f"--set {suite.user_option}: with --as user you are the user")
    options[suite.user_option] = HUMAN_USER
    return agent if agent is not None else suite.default_agents[0]


def default_out(suite: str, role: str) -> Path:
    """``runs/SUITE/play-ROLE-YYYYmmdd-HHMMSS`` (UTC)."""
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    return Path("runs") / suite / f"play-{role}-{stamp}"


@click.command(cls=RuledCommand)
@suite_flags("play")
@suite_argument()
@click.option("--as", "role", type=click.Choice(["agent", "user"]), default="agent",
              show_default=True, help="Play the agent (you call the tools and answer; the "
              "suite's user is simulated) or the simulated user (against --agent).")  # fmt: skip
@click.option("--task", "task_id", default=None, metavar="ID",
              help="The task (or instance) to play (default: the first the options select).")  # fmt: skip
@click.option("--agent", default=None, metavar="SPEC",
              help="With --as user: the agent you talk to, KIND[:ARG] as `run` takes it "
              "(default: the suite's first default agent).")  # fmt: skip
@base_url_option("OpenAI-compatible endpoint of a model the episode uses (an LLM agent or "
                 "user; default: env).")  # fmt: skip
@settings_option
@int_option("--seed", at_least=0, default=0, help="Run seed.")
@int_option("--db-seed", at_least=0, default=0, help="Seed of the generated database.")
@click.option("--out", type=OutputPath("dir"), default=None,
              help="The run directory to write (new or empty; default: "
              "runs/SUITE/play-ROLE-TIMESTAMP).")  # fmt: skip
@data_dir_option
@unsafe_sandbox_option
def play(suite: str, role: str, task_id: str | None, agent: str | None, base_url: BaseURL,
         settings: tuple[str, ...], seed: int, db_seed: int, out: Path | None,
         data_dir: Path | None, unsafe_sandbox: bool, **flags: Any) -> None:  # fmt: skip
    """Play one episode of SUITE in the terminal, as the agent or as the simulated user; the
    episode is stored as a run directory and scored like any other."""
    import asyncio

    from travelgym.runner.batch import RunConfig, run_suite
    from travelgym.runner.specs import SpecError, parse_agent_spec

    allow_unsafe_sandbox(unsafe_sandbox)
    chosen = get_suite(suite)
    given = parse_settings(chosen, settings, flags)
    spec_text = choose_agent(chosen, role, agent, given)
    try:
        spec = parse_agent_spec(chosen, spec_text)
    except SpecError as exc:
        raise click.BadParameter(str(exc), param_hint="--agent") from None
    _, options = suite_options(suite, **given)
    out = out if out is not None else default_out(suite, role)
    if (out / "episodes.jsonl").is_file() and (out / "episodes.jsonl").stat().st_size:
        raise click.UsageError(f"{out} already holds episodes: choose a new --out")
    ctx = click.get_current_context()
    calls_llm = (spec.calls_llm and role == "user") or chosen.options_call_llm(options)
    if is_used(ctx, "base_url") and not calls_llm:
        raise click.UsageError("--base-url applies to LLM agents and users only; no agent or "
                               "user of this episode calls an LLM")  # fmt: skip
    cfg = RunConfig(suite, spec.text, out, options=given,
                    task_ids=[task_id] if task_id else None, limit=1, concurrency=1, seed=seed,
                    db_seed=db_seed, data_dir=data_dir, base_url=base_url,
                    progress=False)  # fmt: skip
    click.echo(f"playing {suite} as the {role} (agent {spec.text}); the run directory is {out}")
    try:
        asyncio.run(run_suite(cfg))
    except ValueError as exc:  # e.g. an unknown task id
        raise click.ClickException(str(exc)) from exc
    report(chosen, out, db_seed, data_dir, base_url)


def report(suite: Any, out: Path, db_seed: int, data_dir: Path | None,
           base_url: str | None) -> None:  # fmt: skip
    """How the stored episode ended, then its score as ``travelgym score RUN_DIR`` prints it."""
    from travelgym.runner.run_summary import score_answers
    from travelgym.runner.store import read_run

    run = read_run(out, suite.name, as_dicts=True)
    for episode in run.episodes:
        error = f" ({episode['error']})" if episode.get("error") else ""
        click.echo(printable(f"episode {episode['episode_id']}: {episode['termination']}{error}"))
    click.echo(f"stored in {out}")
    notes: list[str] = []
    result = score_answers(suite, out, db_seed, data_dir, notes, suite.options_of_run(run.manifest),
                           base_url)  # fmt: skip
    for note in notes:
        click.echo(f"note: {note}", err=True)
    click.echo(suite.format_score(result))
