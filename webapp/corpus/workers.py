"""The worker processes of a big build: one per core, each handed batches of files (their rows
are made where the files are read; the one process writing the database only inserts them),
a few batches ahead of the one being written so that they go on meanwhile, bounded in bytes so
that the rows waiting to be written stay small beside a server's memory."""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from typing import Any, TypeVar

BATCH_FILES = 64  # files of one batch (written to the database in one transaction)
BATCH_BYTES = 32 << 20  # and at most this many bytes of them (a bigger file is a batch of its own)
# Batches handed to the workers ahead of the one being written: one for each worker (so that
# each goes on meanwhile), and at most BATCH_BYTES of files each. Four batches and 160 MB kept
# more rows and text waiting in the writer: with two workers, at 10,000 sessions, its peak was
# 1,042 MB, with one each 976 MB, in the same time (BENCHMARKS.md, "Every session at once").
AHEAD_PER_WORKER = 1
STOP_POLL_SECONDS = 0.1  # how soon a build waiting for a worker sees that it was stopped
# A worker's cyclic garbage collector runs once after each batch (`_batch`), never during one:
# the trees a batch builds form no cycles (reference counting frees each as it is dropped; a
# test holds the light tree to it), and the collector only walked them again and again. Every
# 700 new objects that took a fifth of the tables' CPU; every 50,000, with a collection of the
# young generations before each file's read (`reader.gc_paused`), still a twentieth. The
# collection after a batch frees any cycle that is left: when the trees held one, without it
# a worker grew to 1.2 GB (BENCHMARKS.md, "Every session at once"). What outlives a batch (the
# modules, their caches) is frozen out of the collector's sight before the next, so that each
# collection walks only what that batch left.
MALLOC_ARENAS = 2  # the writing process's malloc arenas (`fewer_malloc_arenas`)

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
                              initializer=_worker_start, initargs=(nice,))
    try:
        yield got
    finally:  # (a build stopped early: the batches not begun are not made)
        got.shutdown(wait=True, cancel_futures=True)


def _worker_start(nice: int) -> None:
    """A worker's settings, once, as it starts: its priority, and no collection but `_batch`'s.
    (Not SCHED_IDLE for the audits' worker: search came 6 s sooner at 10,000 sessions, but on a
    machine kept busy by other work its last batch, which the build waits for, would get almost
    no CPU: BENCHMARKS.md.)"""
    if nice:
        os.nice(nice)
    gc.disable()


def _batch(fn: Callable[[Any], Any], arg: Any) -> Any:
    """`fn(arg)` in a worker, then the garbage of the batch collected (see above). What the worker
    holds before it (the last batch's rows are sent and dropped by then) is frozen first."""
    gc.freeze()
    try:
        return fn(arg)
    finally:
        gc.collect()


def fewer_malloc_arenas() -> None:
    """Let glibc's malloc keep MALLOC_ARENAS arenas in this process, not eight per core: the
    writer's threads (the text index's, the audits', the pool's) each took an arena of their own,
    and what each kept after a batch was freed raised the build's peak memory (measured at 1,000
    sessions: 914–1,007 → 890–904 MB, in the same time). Anywhere else (another libc, another
    system) it does nothing."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(-8, MALLOC_ARENAS)  # (M_ARENA_MAX; musl has no mallopt: AttributeError)
    except (OSError, AttributeError):
        pass


def batches(jobs: Iterable[J], size: Callable[[J], int], most_bytes: int | None = None) -> list[list[J]]:
    """`jobs` in order, cut into batches of at most BATCH_FILES files and `most_bytes` bytes
    (BATCH_BYTES unless told)."""
    most_bytes = most_bytes or BATCH_BYTES
    out: list[list[J]] = []
    group: list[J] = []
    held = 0
    for job in jobs:
        n = max(size(job), 0)
        if group and (len(group) >= BATCH_FILES or held + n > most_bytes):
            out.append(group)
            group, held = [], 0
        group.append(job)
        held += n
    if group:
        out.append(group)
    return out


def in_workers(workers: ProcessPoolExecutor, groups: Iterable[list[J]], fn: Callable[[Any], Any],
               args: Callable[[list[J]], Any], size: Callable[[J], int],
               stop: threading.Event | None = None, at_once: int | None = None) -> Iterator[tuple[list[J], Any]]:
    """(group, `fn(args(group))` as a worker made it, or the exception that stopped it) for each
    group, in order; none once `stop` is set (a stopped build does not wait for a worker's batch).
    `at_once`: how many batches are handed out at once (AHEAD_PER_WORKER per worker unless told)."""
    def submit(group: list[J]) -> Future:
        try:
            return workers.submit(_batch, fn, args(group))
        except Exception as exc:  # the pool is broken: the future says so
            future: Future = Future()
            future.set_exception(exc)
            return future

    pending: deque = deque()
    todo = iter(groups)
    ahead = 0  # bytes of the files pending
    # (the pool's processes: an executor's `_max_workers`, set since Python 3.2)
    most = at_once or AHEAD_PER_WORKER * max(getattr(workers, "_max_workers", 1), 1)

    def fill() -> None:
        nonlocal ahead
        while len(pending) < most and (ahead < most * BATCH_BYTES or not pending):
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
