"""``travelgym run behavior2trip``: many Behavior2Trip episodes on the shared run-directory
machinery (a manifest and an append-only, fsynced ``episodes.jsonl``; resumable)."""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from travelgym import __version__
from travelgym.db import connect_readonly
from travelgym.runner.integrity import IntegritySession, sandbox_entry
from travelgym.runner.specs import SpecError, client_kwargs
from travelgym.runner.store import EPISODES, RunStore, read_episodes, read_run
from travelgym.suites.behavior2trip.agents.base import DEFAULT_MAX_STEPS
from travelgym.suites.behavior2trip.checks import PlanDB
from travelgym.suites.behavior2trip.episode import TripEpisode, run_trip_episode

TRIP_AGENT_KINDS = ("scripted", "react", "b2t", "local", "hf")
DEFAULT_TRIP_AGENT = "scripted"
SPLITS = ("train", "test")


@dataclass(frozen=True)
class TripAgentSpec:
    """``scripted``, ``react:MODEL``, ``b2t:MODEL``, ``local:GGUF`` (the B2T agent on a
    llama.cpp server this process runs; the same as ``b2t:local:GGUF``) or ``hf:CKPT`` (the B2T
    agent on a transformers checkpoint in this process, e.g. a GRPO output; ``b2t:hf:CKPT``)."""

    kind: str
    model: str | None = None

    @property
    def text(self) -> str:
        return self.kind if self.model is None else f"{self.kind}:{self.model}"

    @property
    def dirname(self) -> str:
        return self.text.replace(":", "-").replace("/", "_")


def parse_trip_agent(text: str) -> TripAgentSpec:
    kind, sep, model = (text or "").partition(":")
    if kind == "scripted" and not model:
        return TripAgentSpec("scripted")
    if kind in TRIP_AGENT_KINDS[1:] and sep and model:
        return TripAgentSpec(kind, model)
    raise SpecError(
        f"bad agent spec {text!r}: use scripted, react:MODEL, b2t:MODEL, local:smollm2 or hf:CKPT"
    )


def trip_agent_factory(spec: TripAgentSpec, base_url: str | None = None,
                       client_options: dict | None = None, max_steps: int = DEFAULT_MAX_STEPS,
                       ) -> Callable[[], Any]:  # fmt: skip
    """A function making a fresh agent per episode (``.client`` is closed by the runner)."""
    if spec.kind == "scripted":
        from travelgym.suites.behavior2trip.agents.scripted import ScriptedTripAgent

        return ScriptedTripAgent
    from travelgym.llm.factory import make_client

    model = f"{spec.kind}:{spec.model}" if spec.kind in ("local", "hf") else spec.model
    client = make_client(model, base_url=base_url, **(client_options or {}))
    if spec.kind == "react":
        from travelgym.suites.behavior2trip.agents.react import ReactAgent as cls
    else:
        from travelgym.suites.behavior2trip.agents.b2t_agent import B2TAgent as cls

    def factory():
        return cls(client, max_steps=max_steps)

    factory.client = client  # type: ignore[attr-defined]
    return factory


@dataclass
class TripRunConfig:
    agent: TripAgentSpec
    out: Path
    split: str = "test"
    difficulty: str | None = None
    instance_ids: list[str] | None = None
    limit: int | None = None
    concurrency: int = 8
    seed: int = 0
    db_seed: int = 0
    data_dir: Path | None = None
    resume: bool = False
    retry_errors: bool = False
    repair: bool = False
    base_url: str | None = None
    max_steps: int = DEFAULT_MAX_STEPS
    progress: bool = True
    client_options: dict[str, Any] = field(default_factory=dict)


def select_instances(instances: list, ids: list[str] | None, difficulty: str | None,
                     limit: int | None) -> list:  # fmt: skip
    """Instances by explicit ids (in that order), else by difficulty; then the first ``limit``.
    With a limit and no difficulty the instances are interleaved Easy/Medium/Hard, so a small
    sample covers every level."""
    if ids:
        by_id = {x.instance_id: x for x in instances}
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            raise ValueError(f"unknown instance id(s): {', '.join(unknown)}")
        chosen = [by_id[i] for i in ids]
    elif difficulty is not None:
        chosen = [x for x in instances if x.difficulty == difficulty]
    elif limit is not None:
        levels: dict[str, list] = {}
        for x in instances:
            levels.setdefault(x.difficulty, []).append(x)
        chosen = [x for row in itertools.zip_longest(*levels.values()) for x in row if x]
    else:
        chosen = list(instances)
    return chosen[:limit] if limit is not None else chosen


def _manifest(cfg: TripRunConfig, chosen: list, db_hash: str, instances_sha: str) -> dict:
    return {
        "travelgym_version": __version__,
        "suite": "behavior2trip",
        "agent": cfg.agent.text,
        "user": None,
        "seed": cfg.seed,
        "db_seed": cfg.db_seed,
        "trials": 1,
        "split": cfg.split,
        "difficulty": cfg.difficulty,
        "task_ids": [x.instance_id for x in chosen],
        "db_content_hash": db_hash,
        "tasks_sha256": instances_sha,
        "max_turns": cfg.max_steps,
        "base_url": cfg.base_url,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


def load_split(split: str, db_seed: int = 0, data_dir: Path | None = None):
    """(database, instances of ``split``, the instance file's sha256), built when missing."""
    from travelgym.suites.behavior2trip.build import ensure_database
    from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances
    from travelgym.suites.compass.tasks import read_manifest

    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: choose train or test")
    db = ensure_database(seed=db_seed, data_dir=data_dir)
    path = ensure_instances(db, data_dir)[split]
    return db, load_instances(path, check=False), read_manifest(path).get("sha256", "")


async def run_behavior2trip(cfg: TripRunConfig) -> dict[str, Any]:
    """Run (or resume) one agent's episodes into ``cfg.out``; return the run's score summary."""
    db, instances, sha = load_split(cfg.split, cfg.db_seed, cfg.data_dir)
    chosen = select_instances(instances, cfg.instance_ids, cfg.difficulty, cfg.limit)
    with RunStore(cfg.out) as store:  # the directory's lock is held until the run ends
        manifest = _manifest(cfg, chosen, db.metadata["content_hash"], sha)
        # LLM agents can call the Python tool: refuse up front where there is no sandbox
        manifest["sandbox"] = sandbox_entry(runs_code=cfg.agent.kind != "scripted")
        done = store.open(manifest, cfg.resume, cfg.retry_errors, cfg.repair)
        for note in store.notes:
            print(f"note: {note}", file=sys.stderr)
        integrity = IntegritySession.start(cfg.out, db.path, manifest["sandbox"])
        return await _run_pending(cfg, chosen, db, store, done, integrity)


async def _run_pending(cfg: TripRunConfig, chosen: list, db: Any, store: RunStore,
                       done: set[tuple[str, int]],
                       integrity: IntegritySession) -> dict[str, Any]:  # fmt: skip
    """Run the instances not ``done`` yet into the open ``store``; return the run's summary."""
    pending = [x for x in chosen if (x.instance_id, 0) not in done]
    options = client_kwargs(cfg.client_options)
    make_agent = trip_agent_factory(cfg.agent, cfg.base_url, options, cfg.max_steps)
    conn = connect_readonly(db.path)
    score_db = PlanDB(conn)  # its look-up caches serve every episode
    progress = _Progress(len(chosen), cfg.agent.text, cfg.progress)
    if done:
        progress.add_existing(read_outcomes(cfg.out))
    gate = asyncio.Semaphore(max(1, cfg.concurrency))

    async def one(instance) -> None:
        async with gate:
            episode = await run_trip_episode(instance, make_agent(), conn, seed=cfg.seed,
                                             score_db=score_db)  # fmt: skip
            store.append(episode)
            progress.update(episode)

    started = time.perf_counter()
    try:
        await asyncio.gather(*(one(x) for x in pending))
    finally:
        wall = time.perf_counter() - started
        progress.close()
        conn.close()
        integrity.finish()
        client = getattr(make_agent, "client", None)
        if client is not None and hasattr(client, "aclose"):
            await client.aclose()
    summary = summarize_run(read_outcomes(cfg.out))
    summary["episodes_wall_s"] = round(wall, 3)  # this session's episodes only
    return summary


def read_trip_episodes(directory: Path) -> list[TripEpisode]:
    """All complete episodes of a Behavior2Trip run directory."""
    return read_episodes(directory, TripEpisode)


def read_outcomes(directory: Path) -> list[dict[str, Any]]:
    """The light part of every complete episode (score, termination, invalid actions), read
    strictly (:func:`~travelgym.runner.store.read_run`); ``[]`` before the first episode."""
    if not (Path(directory) / EPISODES).exists():
        return []
    run = read_run(directory, "behavior2trip", as_dicts=True)
    return [{k: e.get(k) for k in ("score", "termination", "p_action")} for e in run.episodes]


def summarize_run(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """The score summary of a run (overall and by difficulty) plus run-level counts."""
    from travelgym.suites.behavior2trip.scoring import summarize

    summary = summarize([o["score"] for o in outcomes if o["score"] is not None])
    summary["episodes"] = len(outcomes)
    summary["errors"] = sum(o["termination"] == "error" for o in outcomes)
    invalid = sum((o["p_action"] or 0) < 0 for o in outcomes)
    summary["invalid_action_rate"] = round(invalid / len(outcomes), 4) if outcomes else 0.0
    return summary


class _Progress:
    """A progress bar with the Delivery Rate and Final pass rate so far (stderr)."""

    def __init__(self, total: int, label: str, enabled: bool) -> None:
        self.bar = None
        self.n = self.delivered = self.passed = 0
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=label, unit="ep", file=sys.stderr, dynamic_ncols=True)

    def add_existing(self, outcomes: list[dict[str, Any]]) -> None:
        for o in outcomes:
            self._count(o["score"])
        if self.bar is not None:
            self.bar.update(len(outcomes))

    def _count(self, score: dict | None) -> None:
        score = score or {}
        self.n += 1
        self.delivered += bool(score.get("delivered"))
        self.passed += bool(score.get("final"))

    def update(self, episode: TripEpisode) -> None:
        self._count(episode.score)
        if self.bar is not None:
            self.bar.set_postfix(DR=f"{100 * self.delivered / self.n:.0f}%",
                                 Final=f"{100 * self.passed / self.n:.1f}%")  # fmt: skip
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def format_trips_table(results: dict[str, dict]) -> str:
    """DR, C and UPC micro/macro and Final pass rates by agent and difficulty (percent)."""
    cols = ("DR", "C_micro", "C_macro", "UPC_micro", "UPC_macro", "final")
    head = ("DR", "C micro", "C macro", "UPC micro", "UPC macro", "Final")
    lines = [f"{'agent':<22} {'level':<8} {'n':>5} " + " ".join(f"{h:>9}" for h in head)]
    for agent, result in results.items():
        rows = [("all", result["overall"])] + list(result.get("by_difficulty", {}).items())
        for name, agg in rows:
            values = " ".join(f"{agg.get(c, 0.0):>9.1f}" for c in cols)
            lines.append(f"{agent:<22} {name:<8} {agg.get('n', 0):>5} {values}")
    return "\n".join(lines)
