"""The Ray backend of the batch runner (``travelgym run ... --backend ray``): a run's episodes
distributed over a Ray cluster, one writer.

The driver (the ``travelgym run`` process) opens the run, takes the run directory's lock and
writes the manifest exactly as the asyncio backend does (:func:`~travelgym.runner.batch.run_suite`).
It then starts up to ``--concurrency`` :class:`~travelgym.runner.ray_worker.EpisodeWorker`
actors, each holding the resources of one episode (one CPU, and ``--gpus-per-episode`` GPUs),
each opening the suite's run itself from a :class:`~travelgym.runner.ray_worker.WorkerSpec`.
Episodes go out one at a time to idle workers and stream back to the driver, which appends each
to ``episodes.jsonl`` as it arrives: the store's lock, durable appends and resume work as
with the asyncio backend, and a run can be resumed with either backend.

A worker that dies (killed, out of memory, its node lost) loses nothing: the episode it held is
sent again to a fresh worker (up to :data:`MAX_ATTEMPTS` times per episode), and the model
calls it made stay counted in the run's one budget, which an actor the driver owns keeps
(:class:`~travelgym.runner.ray_worker.BudgetKeeper`).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from travelgym.core.errors import UserError
from travelgym.runner.ray_worker import BudgetKeeper, EpisodeWorker, RemoteBudget, WorkerSpec

MAX_ATTEMPTS = 3  # times one episode is sent to a worker before the run stops
CAPS = ("max_calls", "max_tokens", "max_cost", "prices")


class RayBackendError(UserError):
    """The Ray backend cannot run (Ray missing, no cluster, too few resources, an episode that
    keeps killing its workers); the saved episodes are intact."""


@dataclass
class RayStats:
    """What the Ray backend did in one session (the summary's ``ray`` entry)."""

    workers: int = 0
    workers_lost: int = 0
    episodes_retried: int = 0
    budget: dict[str, Any] | None = None


def import_ray() -> Any:
    """The ``ray`` module, or a :class:`RayBackendError` saying which extra to install."""
    try:
        import ray
    except ImportError:
        raise RayBackendError("--backend ray needs Ray: pip install 'travelgym[ray]'") from None
    return ray


LOOPBACK = "127.0.0.1"  # the only interface a local cluster listens on
AUTH_MODE = ("RAY_AUTH_MODE", "token")  # Ray's token authentication (Ray >= 2.52)


def local_cluster_kwargs(num_cpus: int | None) -> dict[str, Any]:
    """The :func:`ray.init` arguments of the local cluster :func:`connect` starts, beyond the
    common ones: its CPUs and its node bound to the loopback interface."""
    return {"num_cpus": num_cpus or os.cpu_count() or 1, "_node_ip_address": LOOPBACK}


@contextlib.contextmanager
def _loopback_only(ray: Any) -> Iterator[None]:
    """While a local cluster starts: on Linux Ray replaces a loopback node address by the
    machine's routable one unless it runs as a single-machine (non-cluster) node, so that mode
    is on for the start (where this Ray has it), and the cluster listens on 127.0.0.1 only."""
    constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
    if constants is None or not hasattr(constants, "ENABLE_RAY_CLUSTER"):
        yield
        return
    saved = constants.ENABLE_RAY_CLUSTER
    constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        constants.ENABLE_RAY_CLUSTER = saved


def _require_token_auth() -> None:
    """Turn on Ray's token authentication for the cluster this process starts and for this
    driver (Ray reads ``RAY_AUTH_MODE`` from the environment its processes inherit; it makes
    and stores the token itself)."""
    name, mode = AUTH_MODE
    os.environ[name] = mode
    refresh_ray_config()


def refresh_ray_config() -> None:
    """Have Ray read its settings from the environment again (it caches them), as Ray does
    itself when it turns token authentication on."""
    with contextlib.suppress(ImportError, AttributeError):
        from ray._raylet import Config

        Config.initialize("")


def connect(address: str | None, num_cpus: int | None = None) -> bool:
    """Connect to the Ray cluster at ``address``, or start a local one (``num_cpus``: its CPUs,
    default all) listening on 127.0.0.1 only, with Ray's token authentication on; nothing when
    this process is already connected. Returns whether this call connected (then
    :func:`disconnect` undoes it)."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING,
                              "log_to_driver": False}  # fmt: skip
    try:
        if address:
            ray.init(address=address, **kwargs)
        else:
            _require_token_auth()
            with _loopback_only(ray):
                ray.init(**local_cluster_kwargs(num_cpus), **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray cluster"
        raise RayBackendError(f"cannot start or reach {where}: {exc}") from None
    return True


def disconnect(connected: bool) -> None:
    """Leave the cluster when :func:`connect` joined it (a local one is stopped)."""
    if connected:
        import_ray().shutdown()


def slots(resources: dict[str, float], gpus_per_episode: float) -> int:
    """How many episodes the cluster's ``resources`` hold at once (one CPU each, and
    ``gpus_per_episode`` GPUs); a :class:`RayBackendError` when not even one."""
    cpus = int(resources.get("CPU", 0))
    if gpus_per_episode > 0:
        gpus = resources.get("GPU", 0)
        if gpus < gpus_per_episode:
            raise RayBackendError(f"the Ray cluster has {gpus:g} GPU(s); --gpus-per-episode "
                                  f"{gpus_per_episode:g} needs at least that many")  # fmt: skip
        cpus = min(cpus, int(gpus // gpus_per_episode))
    if cpus < 1:
        raise RayBackendError("the Ray cluster has no CPU free for an episode")
    return cpus


def worker_spec(cfg: Any, run: Any) -> WorkerSpec:
    """The :class:`WorkerSpec` of a run (``cfg``: the :class:`~travelgym.runner.batch.RunConfig`,
    ``run``: the driver's open :class:`~travelgym.core.suite.SuiteRun`)."""
    client = {k: v for k, v in cfg.client_options.items() if k not in CAPS}
    return WorkerSpec(suite=cfg.suite, agent=cfg.agent, options=dict(cfg.options),
                      task_ids=[t.task_id for t in run.tasks], seed=cfg.seed,
                      db_seed=cfg.db_seed, data_dir=cfg.data_dir, db_hash=run.db_hash,
                      tasks_sha256=run.tasks_sha256, base_url=cfg.base_url,
                      client_options=client, generation=dict(cfg.generation))  # fmt: skip


class EpisodePool:
    """The run's workers on the cluster and the one budget keeper; :meth:`run` streams the
    episodes back."""

    def __init__(self, spec: WorkerSpec, size: int, gpus_per_episode: float,
                 caps: dict[str, Any]) -> None:  # fmt: skip
        ray = import_ray()
        self.ray = ray
        self.spec = spec
        self.stats = RayStats()
        self.keeper = None
        if any(caps.get(k) is not None for k in CAPS):
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            here = ray.get_runtime_context().get_node_id()
            keeper = ray.remote(BudgetKeeper).options(
                num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)
            )
            self.keeper = keeper.remote(caps.get("max_calls"), caps.get("max_tokens"),
                                        caps.get("max_cost"), caps.get("prices"))  # fmt: skip
        self.actor_class = ray.remote(EpisodeWorker).options(
            num_cpus=1, num_gpus=gpus_per_episode, max_restarts=0, max_task_retries=0
        )
        self.workers = [self._new_worker() for _ in range(size)]

    def _new_worker(self) -> Any:
        self.stats.workers += 1
        budget = RemoteBudget(self.keeper) if self.keeper is not None else None
        return self.actor_class.remote(self.spec, budget)

    def run(self, pending: list[tuple[str, int]], on_episode: Callable[[Any], None]) -> None:
        """Run the ``(task_id, trial)`` episodes of ``pending`` on the workers, calling
        ``on_episode`` (the one writer) with each as it comes back, in the driver."""
        ray = self.ray
        from ray.exceptions import ObjectLostError, RayActorError, RayTaskError, WorkerCrashedError

        lost_kinds = (RayActorError, WorkerCrashedError, ObjectLostError)
        queue = deque(pending)
        attempts: dict[tuple[str, int], int] = {}
        idle = list(self.workers)
        flight: dict[Any, tuple[Any, tuple[str, int]]] = {}
        while queue or flight:
            while queue and idle:
                worker, key = idle.pop(), queue.popleft()
                attempts[key] = attempts.get(key, 0) + 1
                flight[worker.episode.remote(*key)] = (worker, key)
            (ref,), _ = ray.wait(list(flight), num_returns=1)
            worker, key = flight.pop(ref)
            try:
                episode = ray.get(ref)
            except lost_kinds as exc:
                why = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                idle.append(self._replace(worker, key, attempts[key], why))
                queue.appendleft(key)
                continue
            except RayTaskError as exc:  # the episode raised: a bug or a setup error
                cause = exc.cause
                raise (cause if isinstance(cause, BaseException) else exc) from None
            if (episode.task_id, episode.trial) != key:
                raise RuntimeError(f"a Ray worker returned {episode.task_id} trial "
                                   f"{episode.trial} for {key[0]} trial {key[1]}")  # fmt: skip
            on_episode(episode)
            idle.append(worker)

    def _replace(self, dead: Any, key: tuple[str, int], attempts: int, why: str) -> Any:
        """A fresh worker for one that died holding episode ``key`` (sent ``attempts`` times;
        ``why``: Ray's first line about it)."""
        self.stats.workers_lost += 1
        self.ray.kill(dead, no_restart=True)
        self.workers.remove(dead)
        if attempts >= MAX_ATTEMPTS:
            raise RayBackendError(f"episode {key[0]} trial {key[1]} lost its Ray worker "
                                  f"{attempts} times (last: {why}); the saved episodes are "
                                  "intact: fix the cause (memory? travelgym missing on a node? "
                                  "see the Ray logs) and run again with --resume")  # fmt: skip
        self.stats.episodes_retried += 1
        worker = self._new_worker()
        self.workers.append(worker)
        return worker

    def close(self) -> None:
        """Close the workers' runs, then end the workers and the keeper (best effort)."""
        ray = self.ray
        closing = [w.close.remote() for w in self.workers]
        # a dead worker must not hide the run's own outcome
        with contextlib.suppress(Exception):
            ray.wait(closing, num_returns=len(closing), timeout=30)
        if self.keeper is not None:
            with contextlib.suppress(Exception):
                self.stats.budget = ray.get(self.keeper.snapshot.remote(), timeout=30)
        for actor in [*self.workers, *([self.keeper] if self.keeper is not None else [])]:
            ray.kill(actor, no_restart=True)


def run_on_ray(cfg: Any, run: Any, pending: list[tuple[Any, int]],
               on_episode: Callable[[Any], None]) -> RayStats:  # fmt: skip
    """Run ``pending`` (``(task, trial)`` pairs of the driver's open ``run``) on Ray for the
    :class:`~travelgym.runner.batch.RunConfig` ``cfg``, handing each episode to ``on_episode``
    in this process; return what the backend did."""
    if not pending:
        return RayStats()
    connected = connect(cfg.ray_address)
    try:
        ray = import_ray()
        size = min(max(1, cfg.concurrency), max(1, len(pending)),
                   slots(ray.cluster_resources(), cfg.gpus_per_episode))  # fmt: skip
        pool = EpisodePool(worker_spec(cfg, run), size, cfg.gpus_per_episode, cfg.client_options)
        try:
            pool.run([(t.task_id, k) for t, k in pending], on_episode)
        finally:
            pool.close()
        return pool.stats
    finally:
        disconnect(connected)
