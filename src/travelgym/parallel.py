"""Worker processes for data builds: how many, the pool, results in order.

Shared by every suite's generators (a database's rows, instances, task files); each build
decides what a job is, and its jobs are pure, so the bytes do not depend on the number of
workers.

A build never waits forever on its workers: one that dies (killed, out of memory) stops the
build with :class:`WorkerDied` (CPython's pool can deadlock then, joining a worker blocked on
sending its result), a build that stops for any reason kills its workers instead of waiting for
them, and workers die with the process that started them (never orphaned, holding the data
files open).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing.context import BaseContext

from travelgym.core.errors import UserError
from travelgym.envvars import number_from_env

WORKERS_ENV = "TRAVELGYM_BUILD_WORKERS"
POLL_S = 1.0  # how often a build waiting on its workers checks that they are alive
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent exits


class WorkerDied(UserError):
    """A worker process of a build died; the build stops (what it stored is kept)."""

    def __init__(self, code: int | None = None) -> None:
        status = f" (exit status {code})" if code is not None else ""
        super().__init__(f"a worker process of the build died{status}: the build stopped, what "
                         "was built is kept; run the command again")  # fmt: skip


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
    pool = ProcessPoolExecutor(workers, mp_context=ctx, initializer=_die_with_parent)
    try:
        if ctx.get_start_method() == "fork":  # start them all now, before other threads exist
            for f in [pool.submit(int) for _ in range(workers)]:
                result_of(f, pool)
        yield pool
    except BaseException:
        # an error, SIGINT or SIGTERM: the workers' jobs are abandoned, not waited for
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            process.kill()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(cancel_futures=True)


def _die_with_parent() -> None:
    """In a worker: be killed when the process that started it exits (Linux), and by SIGTERM
    (a forked worker inherits the command's handler, which would turn the pool's SIGTERM into
    a job's exception and leave the worker running); ignore SIGINT and SIGHUP (a terminal's
    Ctrl-C, or its closing, reaches the whole process group: the command stops its workers
    itself, and each worker's own ``KeyboardInterrupt`` printed a traceback)."""
    import ctypes
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGHUP"):  # a closed terminal: as Ctrl-C, the command stops them
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
    except (OSError, AttributeError):  # not Linux: workers end when their queue closes
        return
    if os.getppid() == 1:  # the parent was gone before the request took effect
        os._exit(1)


def _check_workers(pool: Executor) -> None:
    """Raise :class:`WorkerDied` when a worker of ``pool`` has died."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        if process.exitcode is not None and process.exitcode != 0:
            raise WorkerDied(process.exitcode)


def first_done(futures: set[Future], pool: Executor) -> tuple[set[Future], set[Future]]:
    """``wait(futures, return_when=FIRST_COMPLETED)`` that raises :class:`WorkerDied` when a
    worker died instead of waiting forever."""
    while True:
        done, pending = wait(futures, timeout=POLL_S, return_when=FIRST_COMPLETED)
        if done:
            return done, pending
        _check_workers(pool)


def result_of(future: Future, pool: Executor):
    """``future.result()``, a dead worker raising :class:`WorkerDied`."""
    first_done({future}, pool)
    try:
        return future.result()
    except BrokenProcessPool:
        raise WorkerDied() from None


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
        result = result_of(pending.popleft(), pool)
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
