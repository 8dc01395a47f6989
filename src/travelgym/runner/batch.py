"""The one batch runner: many episodes of one agent on one suite, concurrently, checkpointed
after each episode into a run directory (resumable; see :mod:`~travelgym.runner.store`)."""

from __future__ import annotations

import asyncio
import datetime as dt
import gc
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError
from travelgym.core.outcomes import is_infra_error
from travelgym.core.registry import get_suite
from travelgym.core.suite import FIRST_SCORER_VERSION, Suite, SuiteRun
from travelgym.core.summary import COUNT_ERRORS_KEY
from travelgym.llm.endpoints import base_url_record, base_url_value
from travelgym.runner.integrity import IntegritySession, sandbox_entry
from travelgym.runner.provenance import provenance
from travelgym.runner.run_summary import summarize_run
from travelgym.runner.specs import AgentSpec, client_kwargs, parse_agent_spec
from travelgym.runner.stopping import RunStopped, StopSignals, grace_s
from travelgym.runner.store import RunStore, read_run
from travelgym.version import __version__


@dataclass
class RunConfig:
    """One agent's run on one suite: ``agent`` is a spec text of the suite's forms; ``options``
    the suite's own options (validated by its ``Options`` model)."""

    suite: str
    agent: str
    out: Path
    options: dict[str, Any] = field(default_factory=dict)
    task_ids: list[str] | None = None
    limit: int | None = None
    concurrency: int = 4
    seed: int = 0
    db_seed: int = 0
    data_dir: Path | None = None
    resume: bool = False
    retry_errors: bool = False
    repair: bool = False
    # one OpenAI-compatible endpoint, or several serving the same model (a list: balanced)
    base_url: str | list[str] | tuple[str, ...] | None = None
    progress: bool = True
    client_options: dict[str, Any] = field(default_factory=dict)
    # the agent's generation options (runner.generation.resolve_generation): sent with each call
    generation: dict[str, Any] = field(default_factory=dict)
    finished: int = 0  # episodes in the run directory when the run ended (set by the runner)
    # checks the opened run's tasks against where they were read from (``run --tasks-from``)
    # and returns what the manifest records of it; raises a UserError to refuse the run
    tasks_check: Callable[[SuiteRun], dict[str, Any]] | None = None
    # where episodes run: ``asyncio`` (this process) or ``ray`` (runner.ray_backend: a Ray
    # cluster at ``ray_address``, a local one by default; each episode holds one CPU and
    # ``gpus_per_episode`` GPUs); this process writes the run directory either way
    backend: str = "asyncio"
    ray_address: str | None = None
    gpus_per_episode: float = 0.0
    backend_stats: dict[str, Any] | None = None  # what the Ray backend did (set by the runner)
    # infra errors scored as failures instead of left out (recorded in the manifest)
    count_errors_as_failures: bool = False
    # a price table (travelgym.core.pricing.read_pricing): the run's cost and ``max_cost``
    pricing: dict[str, dict[str, float]] | None = None
    max_cost: float | None = None  # dollars: the run's model calls stop there (infra errors)
    # the run's response cache (``--cache-dir``), set when its clients start here: what it
    # hit, missed, read and wrote goes into the manifest and the summary (``llm_cache``)
    response_cache: Any = None
    # ``out`` is the parent of a run directory the runner names once the run's identity is
    # known (runner.run_dirs: ``<UTC start>-<agent>-<identity hash>``; with ``resume`` the
    # latest there of the same identity); ``out`` is that directory afterwards
    name_run: bool = False
    started: dt.datetime | None = None  # the UTC start a named run's directory carries


def run_models(spec: AgentSpec, options: Any) -> dict[str, str | None]:
    """The models a run calls, by role: the agent's (``llm:MODEL`` and the like) and a simulated
    user's (a suite option ``user`` of the form ``llm:MODEL``)."""
    user = getattr(options, "user", None)
    user_model = (
        user.partition(":")[2] if isinstance(user, str) and user.startswith("llm:") else None
    )
    return {"agent": spec.model if spec.calls_llm else None, "user": user_model or None}


def run_prices(spec: AgentSpec, options: Any, cfg: RunConfig) -> dict[str, dict[str, Any]]:
    """The prices the run records (role -> model and price) from ``cfg.pricing`` or litellm's
    map; a :class:`UserError` before anything runs when ``cfg.max_cost`` is set and a model of
    the run has no price."""
    from travelgym.core.pricing import run_pricing

    models = run_models(spec, options)
    prices = run_pricing(models, cfg.pricing)
    unpriced = [m for role, m in models.items() if m and role not in prices]
    if cfg.max_cost is not None and (unpriced or not prices):
        what = f"the model {unpriced[0]!r}" if unpriced else "a run that calls no priced model"
        raise UserError(f"--max-cost needs a price for {what}: give one with --pricing FILE")
    return prices


def manifest_of(suite: Suite, spec: AgentSpec, cfg: RunConfig, run: SuiteRun,
                prices: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:  # fmt: skip
    """The run's ``manifest.json``: what identifies it (resume checks it) and how it was made."""
    return {
        "travelgym_version": __version__,
        "suite": suite.name,
        "agent": spec.text,
        "seed": cfg.seed,
        "db_seed": cfg.db_seed,
        "trials": run.trials,
        "task_ids": [t.task_id for t in run.tasks],
        "db_content_hash": run.db_hash,
        "tasks_sha256": run.tasks_sha256,
        # what scored its episodes: ``score`` re-derives them with it (runner.recheck)
        suite.scorer_version_key: suite.scorer_version,
        **run.manifest(),
        # an agent without a model sends none: its runs do not differ by them
        "generation": dict(cfg.generation) if spec.calls_llm else {},
        # several servers are recorded sorted: the order they were given in changes nothing
        "base_url": base_url_record(cfg.base_url),
        COUNT_ERRORS_KEY: cfg.count_errors_as_failures,
        "pricing": prices,
        # the commit, Python and package versions it ran on (never part of its identity)
        "provenance": provenance(),
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


async def run_suite(cfg: RunConfig) -> dict[str, Any]:
    """Run (or resume) one agent's episodes into ``cfg.out``; return the run's score summary."""
    suite = get_suite(cfg.suite)
    spec = parse_agent_spec(suite, cfg.agent)
    cfg.base_url = base_url_value(cfg.base_url)  # ValueError: an empty or non-http(s) URL
    options = suite.options(**cfg.options)
    prices = run_prices(spec, options, cfg)
    if cfg.max_cost is not None:
        cfg.client_options = {**cfg.client_options, "max_cost": cfg.max_cost,
                              "prices": {p["model"]: p for p in prices.values()}}  # fmt: skip
    grace = grace_s()  # a bad setting refuses the run before anything starts
    run = suite.open_run(options, cfg.task_ids, cfg.limit, cfg.db_seed, cfg.data_dir)
    try:
        # opening the run may build its data without yielding: a SIGINT meanwhile ends the run
        # here, before its directory exists (it left an empty one)
        await asyncio.sleep(0)
        manifest = _checked_manifest(suite, spec, cfg, run, prices)
        if cfg.name_run:
            _name_run(cfg, spec, manifest, _identity(suite, run))
        # a spec that cannot start (a missing extra, a bad checkpoint, no API key) is refused
        # before the run directory exists; the Ray backend starts its agents on its workers
        factory = _start_agents(spec, cfg, run) if cfg.backend != "ray" else None
        with StopSignals(grace, enabled=cfg.backend != "ray") as stop:
            try:
                wall = await _run_into_store(suite, spec, cfg, run, manifest, factory, stop)
            finally:
                await _close_clients(factory)
    finally:
        await run.aclose()
    if stop.requested:
        assert stop.signum is not None
        raise RunStopped(stop.signum, cfg.finished, len(run.tasks) * run.trials, cfg.out)
    summary = summarize_run(suite, cfg.out)
    summary["episodes_wall_s"] = round(wall, 3)  # this session's episodes only
    if cfg.response_cache is not None:
        summary["llm_cache"] = cfg.response_cache.stats()  # this session's calls only
    if cfg.backend_stats is not None:
        summary["ray"] = cfg.backend_stats
    return summary


def _checked_manifest(suite: Suite, spec: AgentSpec, cfg: RunConfig, run: SuiteRun,
                      prices: dict[str, dict[str, Any]]) -> dict[str, Any]:  # fmt: skip
    """The run's manifest, with the checks that may refuse the run (where the tasks came from,
    the sandbox) done before its directory is touched."""
    source = cfg.tasks_check(run) if cfg.tasks_check is not None else {}
    manifest = manifest_of(suite, spec, cfg, run, prices)
    if source:  # where the tasks came from: resuming from elsewhere is refused
        directory = source.pop("directory", None)
        manifest.update({"tasks_from": source, "tasks_from_directory": directory})
    # model-written code needs the sandbox: refuse up front where there is none
    manifest["sandbox"] = sandbox_entry(runs_code=spec.runs_code)
    return manifest


def _identity(suite: Suite, run: SuiteRun) -> dict[str, Any]:
    """The suite's own keys of a run's identity (key -> the value a manifest without it stands
    for), beside :data:`~travelgym.runner.store.IDENTITY_KEYS`."""
    return {suite.scorer_version_key: FIRST_SCORER_VERSION, **run.identity_keys,
            "tasks_from": None}  # fmt: skip


def _name_run(cfg: RunConfig, spec: AgentSpec, manifest: dict[str, Any],
              identity: dict[str, Any]) -> None:  # fmt: skip
    """Set ``cfg.out`` (the parent) to the run's own directory (see ``RunConfig.name_run``),
    saying on stderr which run a resume continues."""
    from travelgym.runner.run_dirs import place_run

    cfg.out, note = place_run(cfg.out, spec.text, manifest, identity, cfg.resume, cfg.started)
    cfg.name_run = False
    if note:
        print(note, file=sys.stderr)


def _start_agents(spec: AgentSpec, cfg: RunConfig, run: SuiteRun) -> Any:
    """The run's agent factory, its clients built (a local server started, a model loaded)."""
    generation = cfg.generation if spec.calls_llm else None
    client_options = client_kwargs(cfg.client_options, generation)
    cfg.response_cache = client_options.get("cache")
    return run.agent_factory(spec, cfg.base_url, client_options, cfg.seed)


async def _close_clients(factory: Any) -> None:
    """Close the clients of ``factory`` (``None``: nothing was started here)."""
    for client in getattr(factory, "clients", ()):
        close = getattr(client, "aclose", None)
        if close is not None:
            await close()


async def _run_into_store(suite: Suite, spec: AgentSpec, cfg: RunConfig, run: SuiteRun,
                          manifest: dict[str, Any], factory: Any,
                          stop: StopSignals) -> float:  # fmt: skip
    """Open the run directory (its lock held until the run ends), run the episodes not done
    yet into it and return their wall time; ``cfg.finished``: the episodes it then holds."""
    with RunStore(cfg.out) as store:
        done = store.open(
            manifest, cfg.resume, cfg.retry_errors, cfg.repair, identity=_identity(suite, run)
        )
        for note in store.notes:
            print(f"note: {note}", file=sys.stderr)
        integrity = IntegritySession.start(cfg.out, run.db_path, manifest["sandbox"])
        try:
            wall = await _run_pending(suite, spec, cfg, run, store, done, integrity, factory,
                                      stop)  # fmt: skip
        finally:
            cfg.finished = store.saved
        if cfg.response_cache is not None:
            store.amend_manifest({"llm_cache": cfg.response_cache.stats()})
        return wall


async def _run_pending(suite: Suite, spec: AgentSpec, cfg: RunConfig, run: SuiteRun,
                       store: RunStore, done: set[tuple[str, int]], integrity: IntegritySession,
                       factory: Any, stop: StopSignals) -> float:  # fmt: skip
    """Run the episodes not ``done`` yet into the open ``store``; return the wall time."""
    pending = [(t, k) for t in run.tasks for k in range(run.trials) if (t.task_id, k) not in done]
    progress = _Progress(suite, len(run.tasks) * run.trials, spec.text, cfg.progress)
    if done:
        for e in read_run(cfg.out, suite.name, as_dicts=True).episodes:
            usage = e.get("usage") or {}
            tokens = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
            progress.tally.add(e.get("score"), tokens, is_infra_error(e))
        progress.advance(len(done))

    def save(episode: Any) -> None:  # the one writer, whichever backend ran the episode
        store.append(episode)
        progress.tally.add(episode.score, episode.usage.total_tokens, is_infra_error(episode))
        progress.advance(1)

    started = time.perf_counter()
    failed = True
    # the tasks, ground truth and caches loaded so far live as long as the run: the cyclic
    # collector need not walk them again at every full collection of the episodes' objects
    # (unfrozen after, so a process running many runs still collects what they leave)
    gc.freeze()
    try:
        if cfg.backend == "ray":
            from travelgym.runner.ray_backend import run_on_ray

            cfg.backend_stats = vars(run_on_ray(cfg, run, pending, save))
        else:
            await _run_here(cfg, run, pending, save, factory, stop)
        failed = False
    finally:
        wall = time.perf_counter() - started
        gc.unfreeze()
        progress.close()
        try:
            integrity.finish()
        except OSError:
            # the run's own failure (e.g. the episode file on a disk gone read-only) is what the
            # user must see; the integrity log failing on the same disk must not replace it
            if not failed:
                raise
    return wall


async def _run_here(cfg: RunConfig, run: SuiteRun, pending: list[tuple[Any, int]],
                    save: Callable[[Any], None], factory: Any,
                    stop: StopSignals) -> None:  # fmt: skip
    """The asyncio backend: ``pending`` episodes in this process, ``cfg.concurrency`` at once;
    once a stop is requested none starts, and an abandoned one is not saved."""
    gate = asyncio.Semaphore(max(1, cfg.concurrency))

    async def one(task: Any, trial: int) -> None:
        try:
            async with gate:
                # a pass through the event loop before each episode: episodes that never wait
                # (the scripted agents) would otherwise all run in one step of the loop, and a
                # signal would be handled only after the last of them
                await asyncio.sleep(0)
                if stop.requested:
                    return
                episode = await run.episode(task, factory.make(), trial, cfg.seed)
        except asyncio.CancelledError:
            if stop.abandoned:
                return
            raise
        save(episode)

    tasks = [asyncio.ensure_future(one(t, k)) for t, k in pending]
    for task in tasks:
        stop.track(task)
    await asyncio.gather(*tasks)


class _Progress:
    """A progress bar with the suite's running figures (stderr; silent when disabled)."""

    def __init__(self, suite: Suite, total: int, label: str, enabled: bool) -> None:
        self.tally = suite.tally()
        self.bar = None
        if enabled:
            from tqdm import tqdm

            from travelgym.progress import Display, bar_layout

            # the run's figures follow as the postfix: the layout with the rate, not the compact
            self.bar = tqdm(total=total, desc=label, unit="ep", file=Display(),
                            dynamic_ncols=bar_layout(None)["dynamic_ncols"])  # fmt: skip

    def advance(self, n: int) -> None:
        if self.bar is not None and n:
            self.bar.set_postfix(self.tally.postfix())
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
