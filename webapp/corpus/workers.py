"""The worker processes of a big build: one per core, each handed batches of files (their rows
are made where the files are read; the one process writing the database only inserts them),
a few batches ahead of the one being written so that they go on meanwhile, bounded in bytes so
that the rows waiting to be written stay small beside a server's memory."""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from typing import Any, TypeVar

BATCH_FILES = 64  # files of one batch (written to the database in one transaction)
BATCH_BYTES = 32 << 20  # and at most this many bytes of them (a bigger file is a batch of its own)
AHEAD_BATCHES = 4  # batches handed to the workers ahead of the one being written...
AHEAD_BYTES = 160 << 20  # ...and at most this many bytes of files
STOP_POLL_SECONDS = 0.1  # how soon a build waiting for a worker sees that it was stopped

J = TypeVar("J")


@contextmanager
def pool(workers: int, least: int = 2, nice: int = 0) -> Iterator[ProcessPoolExecutor | None]:
    """`workers` processes (None for fewer than `least`: the work is done here). forkserver: they
    are forked from a clean process, never from this one's threads (nothing preloaded there: it
    would be imported from its working folder's sys.path). `nice`: they run at that much lower a
    priority (work that should take only the CPU the rest leaves)."""
    if workers < least:
        yield None
        return
    got = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver"),
                              initializer=os.nice if nice else None, initargs=(nice,) if nice else ())
    try:
        yield got
    finally:  # (a build stopped early: the batches not begun are not made)
        got.shutdown(wait=True, cancel_futures=True)


def batches(jobs: Iterable[J], size: Callable[[J], int]) -> list[list[J]]:
    """`jobs` in order, cut into batches of at most BATCH_FILES files and BATCH_BYTES bytes."""
    out: list[list[J]] = []
    group: list[J] = []
    held = 0
    for job in jobs:
        n = max(size(job), 0)
        if group and (len(group) >= BATCH_FILES or held + n > BATCH_BYTES):
            out.append(group)
            group, held = [], 0
        group.append(job)
        held += n
    if group:
        out.append(group)
    return out


def in_workers(workers: ProcessPoolExecutor, groups: list[list[J]], fn: Callable[[Any], Any],
               args: Callable[[list[J]], Any], size: Callable[[J], int],
               stop: threading.Event | None = None) -> Iterator[tuple[list[J], Any]]:
    """(group, `fn(args(group))` as a worker made it, or the exception that stopped it) for each
    group, in order; none once `stop` is set (a stopped build does not wait for a worker's batch)."""
    def submit(group: list[J]) -> Future:
        try:
            return workers.submit(fn, args(group))
        except Exception as exc:  # the pool is broken: the future says so
            future: Future = Future()
            future.set_exception(exc)
            return future

    pending: deque = deque()
    todo = iter(groups)
    ahead = 0  # bytes of the files pending

    def fill() -> None:
        nonlocal ahead
        while len(pending) < AHEAD_BATCHES and (ahead < AHEAD_BYTES or not pending):
            group = next(todo, None)
            if group is None:
                return
            pending.append((group, submit(group)))
            ahead += sum(max(size(j), 0) for j in group)

    fill()
    while pending:
        group, future = pending.popleft()
        ahead -= sum(max(size(j), 0) for j in group)
        fill()  # before the caller writes this one: the workers go on meanwhile
        while stop is not None and not future.done() and not stop.is_set():
            wait([future], STOP_POLL_SECONDS)
        if stop is not None and stop.is_set():
            return
        try:
            got = future.result()
        except Exception as exc:  # (BrokenProcessPool: the workers could not start, or one died)
            got = exc
        yield group, got
