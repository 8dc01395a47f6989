"""The async batch layer: many episodes concurrently, checkpointed after each one."""

from __future__ import annotations

import asyncio
import datetime as dt
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from travelgym import __version__
from travelgym.db import connect_readonly
from travelgym.runner.integrity import IntegritySession, sandbox_entry
from travelgym.runner.specs import AgentSpec, agent_factory, client_kwargs, user_backend
from travelgym.runner.store import RunStore, read_episodes
from travelgym.suites.compass.build import ensure_database
from travelgym.suites.compass.episode import DEFAULT_MAX_TURNS, run_episode
from travelgym.suites.compass.ground_truth import ensure_ground_truth, tasks_sha256
from travelgym.suites.compass.scoring import PlanScore, summarize
from travelgym.suites.compass.tasks import PACKAGE_TASKS, Task, load_tasks


@dataclass
class RunConfig:
    agent: AgentSpec
    out: Path
    user: str = "template"
    task_ids: list[str] | None = None
    level: int | None = None
    limit: int | None = None
    trials: int = 1
    concurrency: int = 4
    seed: int = 0
    db_seed: int = 0
    data_dir: Path | None = None
    resume: bool = False
    retry_errors: bool = False
    repair: bool = False
    base_url: str | None = None
    max_turns: int = DEFAULT_MAX_TURNS
    progress: bool = True
    client_options: dict[str, Any] = field(default_factory=dict)


def select_tasks(
    tasks: list[Task], ids: list[str] | None, level: int | None, limit: int | None
) -> list[Task]:
    """Tasks by explicit ids (in the given order), else by level, then the first ``limit``."""
    if ids:
        by_id = {t.task_id: t for t in tasks}
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            raise ValueError(f"unknown task id(s): {', '.join(unknown)}")
        chosen = [by_id[i] for i in ids]
    else:
        chosen = [t for t in tasks if level is None or t.level == level]
    return chosen[:limit] if limit is not None else chosen


def _manifest(cfg: RunConfig, tasks: list[Task], db_hash: str) -> dict[str, Any]:
    return {
        "travelgym_version": __version__,
        "suite": "compass",
        "agent": cfg.agent.text,
        "user": cfg.user,
        "seed": cfg.seed,
        "db_seed": cfg.db_seed,
        "trials": cfg.trials,
        "task_ids": [t.task_id for t in tasks],
        "db_content_hash": db_hash,
        "tasks_sha256": tasks_sha256(PACKAGE_TASKS),
        "max_turns": cfg.max_turns,
        "base_url": cfg.base_url,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


async def run_compass(cfg: RunConfig) -> dict[str, Any]:
    """Run (or resume) one agent's episodes into ``cfg.out``; return the run's score summary."""
    db = ensure_database(seed=cfg.db_seed, data_dir=cfg.data_dir)
    _, truths = ensure_ground_truth(seed=cfg.db_seed, data_dir=cfg.data_dir)
    tasks = select_tasks(load_tasks(), cfg.task_ids, cfg.level, cfg.limit)
    with RunStore(cfg.out) as store:  # the directory's lock is held until the run ends
        manifest = _manifest(cfg, tasks, db.metadata["content_hash"])
        # a code agent runs model-written code: refuse up front where there is no sandbox
        manifest["sandbox"] = sandbox_entry(runs_code=cfg.agent.kind == "code")
        done = store.open(manifest, cfg.resume, cfg.retry_errors, cfg.repair)
        for note in store.notes:
            print(f"note: {note}", file=sys.stderr)
        integrity = IntegritySession.start(cfg.out, db.path, manifest["sandbox"])
        return await _run_pending(cfg, tasks, truths, db, store, done, integrity)


async def _run_pending(cfg: RunConfig, tasks: list[Task], truths: dict, db: Any, store: RunStore,
                       done: set[tuple[str, int]],
                       integrity: IntegritySession) -> dict[str, Any]:  # fmt: skip
    """Run the episodes not ``done`` yet into the open ``store``; return the run's summary."""
    pending = [(t, k) for t in tasks for k in range(cfg.trials) if (t.task_id, k) not in done]
    options = client_kwargs(cfg.client_options)
    make_agent = agent_factory(cfg.agent, cfg.seed, cfg.base_url, options)
    backend = user_backend(cfg.user, cfg.base_url, options)
    conn = connect_readonly(db.path)
    progress = _Progress(len(tasks) * cfg.trials, len(done), cfg.agent.text, cfg.progress)
    progress.add_existing(read_episodes(cfg.out) if done else [])
    gate = asyncio.Semaphore(max(1, cfg.concurrency))

    async def one(task: Task, trial: int) -> None:
        async with gate:
            episode = await run_episode(task, make_agent(), backend, conn, truths[task.task_id],
                                        seed=cfg.seed, trial=trial, max_turns=cfg.max_turns,
                                        user_name=cfg.user)  # fmt: skip
            episode.agent = cfg.agent.text
            store.append(episode)
            progress.update(episode)

    started = time.perf_counter()
    try:
        await asyncio.gather(*(one(t, k) for t, k in pending))
    finally:
        episodes_s = time.perf_counter() - started
        progress.close()
        conn.close()
        integrity.finish()
        for client in (getattr(make_agent, "client", None), getattr(backend, "client", None)):
            if client is not None and hasattr(client, "aclose"):
                await client.aclose()
    episodes = read_episodes(cfg.out)
    summary = summarize([PlanScore.model_validate(e.score) for e in episodes if e.score])
    summary["episodes_wall_s"] = round(episodes_s, 3)  # this session's episodes only
    return summary


class _Progress:
    """A progress bar with FR / OR-5 so far and tokens used (stderr; silent when disabled)."""

    def __init__(self, total: int, done: int, label: str, enabled: bool) -> None:
        self.bar = None
        self.n = self.feasible = self.top5 = self.tokens = 0
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=done, desc=label, unit="ep", file=sys.stderr,
                            dynamic_ncols=True)  # fmt: skip

    def add_existing(self, episodes) -> None:
        for e in episodes:
            self._count(e)

    def _count(self, episode) -> None:
        self.n += 1
        score = episode.score or {}
        self.feasible += bool(score.get("feasible"))
        self.top5 += bool(score.get("top", {}).get("5"))
        self.tokens += episode.usage.total_tokens

    def update(self, episode) -> None:
        self._count(episode)
        if self.bar is not None:
            self.bar.set_postfix(FR=f"{100 * self.feasible / self.n:.0f}%",
                                 OR5=f"{100 * self.top5 / self.n:.0f}%", tokens=self.tokens)  # fmt: skip
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
