"""Worker processes for data builds: how many, the pool, results in order.

Shared by every suite's generators (a database's rows, instances, task files); each build
decides what a job is, and its jobs are pure, so the bytes do not depend on the number of
workers.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing.context import BaseContext

from travelgym.core.errors import UserError
from travelgym.envvars import number_from_env

WORKERS_ENV = "TRAVELGYM_BUILD_WORKERS"


def build_workers(limit: int | None = None) -> int:
    """Worker processes for a build: the cores this process may use (at most ``limit``;
    ``TRAVELGYM_BUILD_WORKERS`` overrides); 0 (build in this process) on one core or inside a
    daemonic process, which may not have children."""
    if mp.current_process().daemon:
        return 0
    cores = usable_cores() if limit is None else min(usable_cores(), limit)
    n = number_from_env(WORKERS_ENV, cores, int, lambda n: n >= 0,
                        "a number of worker processes, 0 or more", UserError)  # fmt: skip
    return n if n > 1 else 0


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@contextmanager
def worker_pool(workers: int) -> Iterator[Executor | None]:
    """A process pool of ``workers`` (None for 0). Made before any progress bar starts its
    thread: workers are forked (inheriting the loaded modules) only while this is the single
    thread, else started by a fork server."""
    if workers <= 0:
        yield None
        return
    ctx = pool_context()
    pool = ProcessPoolExecutor(workers, mp_context=ctx)
    try:
        if ctx.get_start_method() == "fork":  # start them all now, before other threads exist
            for f in [pool.submit(int) for _ in range(workers)]:
                f.result()
        yield pool
    finally:
        pool.shutdown(cancel_futures=True)


def pool_context() -> BaseContext:
    """``fork`` when no other thread runs (workers inherit the loaded modules), else
    ``forkserver`` (a fork with threads running could copy their locks mid-use)."""
    methods = mp.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return mp.get_context("fork")
    return mp.get_context("forkserver" if "forkserver" in methods else "spawn")


def ordered_map(fn: Callable, jobs: Iterable, pool: Executor | None, window: int = 6) -> Iterator:
    """``map(fn, jobs)`` in order, over ``pool`` when given with at most ``window`` jobs
    running or done ahead of the one awaited (bounded memory)."""
    if pool is None:
        yield from map(fn, jobs)
        return
    it = iter(jobs)
    pending = deque(pool.submit(fn, job) for job in _take(it, window))
    while pending:
        result = pending.popleft().result()
        pending.extend(pool.submit(fn, job) for job in _take(it, 1))
        yield result


def _take(it: Iterator, n: int) -> list:
    out = []
    for _ in range(n):
        try:
            out.append(next(it))
        except StopIteration:
            break
    return out
