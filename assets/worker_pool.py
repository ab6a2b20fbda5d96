"""Work spread over worker processes. Configured Dagster resources do not pickle, so a job's
work function gets `resources.portable.PortableResource`s and builds its own copies; progress
lines come back through a queue to the caller's log."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import Manager, get_context
from multiprocessing.context import BaseContext
from queue import Queue
from typing import Any, TypeVar

J = TypeVar("J")
T = TypeVar("T")


# What a spawned worker would import itself before its first episode: the work function's module (the graph's
# assets, Dagster) and, building its policy, torch and transformers, ~3 CPU s each. The workers are forked
# from this process's forkserver instead, which imports them once (importing them starts no threads).
WORKER_PRELOAD = ("training.inference.local_policy",)


def _worker_context(work: Callable[..., Any]) -> BaseContext:
    context = get_context("forkserver")
    context.set_forkserver_preload([work.__module__, *WORKER_PRELOAD])  # no effect once its server runs
    return context


def _adopt_environment(environment: dict[str, str]) -> None:
    """A forked worker has its forkserver's environment, from when the server started: take the caller's."""
    os.environ.clear()
    os.environ.update(environment)


def _relay(lines: Queue, log: Callable[[str], None]) -> None:
    for line in iter(lines.get, None):
        log(line)


def run_in_workers(work: Callable[..., T], jobs: Sequence[J], workers: int, log: Callable[[str], None],
                   *shared: Any) -> list[T]:
    """`work(job, *shared, log)` for every job, results in job order: in this process when `workers`
    is 1 or there is one job, else in up to `workers` processes forked from a forkserver (`work` a
    module-level function; jobs and `shared` must pickle). A failing job raises after the others finished."""
    if workers == 1 or len(jobs) <= 1:
        return [work(job, *shared, log) for job in jobs]
    with Manager() as manager:
        lines = manager.Queue()
        relay = threading.Thread(target=_relay, args=(lines, log), daemon=True)
        relay.start()
        try:
            with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=_worker_context(work),
                                     initializer=_adopt_environment, initargs=(dict(os.environ),)) as pool:
                futures = [pool.submit(work, job, *shared, lines.put) for job in jobs]
                return [future.result() for future in futures]
        finally:
            lines.put(None)
            relay.join()
