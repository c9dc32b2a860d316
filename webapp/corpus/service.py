"""The index a server keeps: built and refreshed in a background thread, never blocking a page.

A page asks `fresh()` before it reads: that starts a refresh when none is running and waits a
little for it. A small refresh (a few files changed, or a small corpus) is waited for to the end,
so a page never shows a session list older than the files; a big one (a first index of
thousands of sessions) is not: the page answers at once from what is indexed so far and says how
far the build is. Learning what changed costs a stat of every file (0.15 s of CPU for 10,000
files on this machine, seconds when it is loaded): on a corpus of more than SMALL_FILES files
the page does not wait for it, and the next refresh starts no sooner than REST times that
check's time after the last one ended, so that a big corpus is not checked for every page a
person opens (a small one is, and its page waits for it)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from .db import Index, Progress

# A page waits at most this long to learn how much a refresh has to read: with the wait below and
# the page itself, the first page of a first index of 10,000 sessions answers within a second.
PLAN_SECONDS = 0.5
WAIT_SECONDS = 0.1  # and this long for a big refresh before answering without it
SMALL_BYTES = 8 << 20  # a refresh reading less than this is waited for to the end
SMALL_FILES = 2_000  # a corpus of more files is not checked for each page (see above)
REST = 2  # a big corpus is checked again after this many times its last check's time


class CorpusService:
    def __init__(self, index: Index, root: Path, files: Callable[[], list[Path]]):
        self.index = index
        self.root = root
        self._files = files
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()  # set by stop(): no build goes on or starts
        self._planned = threading.Event()
        self._small = False
        self.progress = Progress()
        self.builds = 0  # finished builds
        self.error: str | None = None  # why the last build stopped, if it did
        self.plan_seconds = 0.0  # how long the last refresh took to learn what changed
        self.checked = 0  # how many files it looked at
        self._rest_until = 0.0  # (monotonic) no refresh starts on its own before this
        self._memo: dict[str, tuple] = {}

    @property
    def building(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> threading.Thread:
        """Start a refresh unless one is running; the running one's thread."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._planned = threading.Event()
                self.progress = Progress()
                # Not a daemon: the interpreter must never end this thread itself, inside DuckDB's
                # C++ code (that aborts the process); stop() ends it first, between two batches.
                self._thread = threading.Thread(target=self._run, name="corpus-index")
                self._thread.start()
            return self._thread

    def _run(self) -> None:
        progress = self.progress
        if self._stopping.is_set():  # (stopped: a page asking for a refresh now gets none)
            progress.finished = progress.finished or time.monotonic()
            self._planned.set()
            return

        def planned(jobs, gone) -> None:
            self.plan_seconds = time.monotonic() - progress.started
            self.checked = progress.checked
            self._small = sum(max(j.size, 0) for j in jobs) <= SMALL_BYTES
            self._planned.set()

        try:
            self.index.build([self.root], progress, files=lambda _root: self._files(), on_plan=planned,
                             stop=self._stopping)
            self.error = None
        except Exception as exc:  # the index is a cache: a failed build leaves the last one readable
            self.error = f"{type(exc).__name__}: {exc}"
            progress.finished = progress.finished or 0.0
        finally:
            self._rest_until = time.monotonic() + REST * self.plan_seconds if self.checked > SMALL_FILES else 0.0
            self._planned.set()
            self.builds += 1

    def fresh(self, wait: float = WAIT_SECONDS) -> Progress:
        """Start a refresh and wait for it as said above; the build's progress."""
        if self.building:
            if self._planned.is_set() and not self._small:
                return self.progress  # a big build under way: what is indexed so far, at once
        elif self.builds and time.monotonic() < self._rest_until:
            return self.progress
        thread = self.start()
        plan_wait = PLAN_SECONDS if self.checked <= SMALL_FILES else 0.0
        if self._planned.wait(plan_wait) and self._small:
            thread.join()
        else:
            thread.join(wait)
        return self.progress

    def memo(self, name: str, make: Callable[[], object]) -> object:
        """`make()`, made again only after a build ended (what the filters offer is a scan of
        every entry: 0.05 s at 1,000 sessions, ten times that at 10,000)."""
        key = (name, self.builds, self.building)
        got = self._memo.get(name)
        if got is None or got[0] != key:
            got = self._memo[name] = (key, make())
        return got[1]

    def query(self, query: str, limit: int, seconds: float, max_bytes: int, cell_chars: int | None = None):
        """The SQL box's `query` on this index (`sql.run_query`)."""
        from .sql import run_query

        return run_query(self.index.cursor(), query, limit, seconds, max_bytes, cell_chars)

    def refreshed(self) -> Progress:
        """Wait for a refresh that starts now, after the one running if any, to end: what a
        command asking for the index up to date waits for."""
        self.join()
        self.start().join()
        return self.progress

    def join(self) -> None:
        """Wait for the running build, if any, to end."""
        if self._thread is not None:
            self._thread.join()

    def stop(self) -> None:
        """End the running build after the batch it is writing (what it wrote stays; the rest is
        read by the next build) and start no other: what a server does before it exits."""
        self._stopping.set()
        self.join()

    def close(self) -> None:
        self.join()
        self.index.close()
