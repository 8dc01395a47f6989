"""Small helpers shared by the Behavior2Trip generator modules."""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import re
import threading
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager

import numpy as np


def rng(seed: int, *component: str) -> np.random.Generator:
    """The generator of one component (e.g. ``("hotels", "Beijing")``) under ``seed``."""
    return np.random.default_rng([seed, zlib.crc32("/".join(component).encode())])


def city_slug(name: str) -> str:
    """``"Xi'an"`` -> ``"xian"``: the ``city_id`` of a city."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def allocate(total: int, weights: list[float], minimum: int = 0) -> list[int]:
    """Split ``total`` into integers proportional to ``weights`` (largest remainder)."""
    spare = total - minimum * len(weights)
    raw = [spare * w / sum(weights) for w in weights]
    counts = [math.floor(r) for r in raw]
    order = sorted(range(len(raw)), key=lambda i: (-(raw[i] - counts[i]), i))
    for i in order[: spare - sum(counts)]:
        counts[i] += 1
    return [c + minimum for c in counts]


def offset(lat: float, lon: float, km: float, bearing: float) -> tuple[float, float]:
    """The point ``km`` away from (lat, lon) in direction ``bearing`` (radians), 5 decimals."""
    dlat = km / 111.0 * math.cos(bearing)
    dlon = km / (111.0 * math.cos(math.radians(lat))) * math.sin(bearing)
    return round(lat + dlat, 5), round(lon + dlon, 5)


MAX_WORKERS = 4  # beyond this the parent, which writes every row, is the bottleneck


def build_workers() -> int:
    """Worker processes for a database build: the cores this process may use (at most
    :data:`MAX_WORKERS`, ``TRAVELGYM_BUILD_WORKERS`` overrides); 0 (build in this process) on
    one core or inside a daemonic process, which may not have children."""
    if mp.current_process().daemon:
        return 0
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    wanted = os.environ.get("TRAVELGYM_BUILD_WORKERS", "")
    n = int(wanted) if wanted.strip() else min(cores, MAX_WORKERS)
    return n if n > 1 else 0


@contextmanager
def worker_pool(workers: int) -> Iterator[Executor | None]:
    """A process pool of ``workers`` (None for 0). Made before any progress bar starts its
    thread: workers are forked (inheriting the loaded modules) only while this is the single
    thread, else started by a fork server."""
    if workers <= 0:
        yield None
        return
    methods = mp.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        ctx = mp.get_context("fork")
    else:
        ctx = mp.get_context("forkserver" if "forkserver" in methods else "spawn")
    pool = ProcessPoolExecutor(workers, mp_context=ctx)
    try:
        if ctx.get_start_method() == "fork":  # start them all now, before other threads exist
            for f in [pool.submit(int) for _ in range(workers)]:
                f.result()
        yield pool
    finally:
        pool.shutdown(cancel_futures=True)


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
