"""The embedded index: the corpus tables in a DuckDB file in the user's cache folder, and their
text in SQLite FTS5 beside it, kept up to date file by file.

Incremental: a file whose size, mtime and hashes of its first and last bytes are those of the
last build is skipped; one that grew (the same first bytes, and the bytes where it ended are
still there) keeps its entries rows and its text up to its last entry and adds the rest (the
files are append-only); its sessions, branches and tool calls rows are made again, as a leaf's
figures read its whole path, and its summaries too unless what was added cannot change what the
earlier ones' audits read (`extract.kept_summaries`); a rewritten one is read again; a deleted
one is removed; one that fails is listed in `files` with its error and does not stop the rest.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import sqlite3
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from ..core.private import make_private, open_private, private_folder
from ..core.storage import fs_name, url_name
from .discovery import corpus_names
from .extract import Extracted
from .joins import join_conversations
from .lab_tables import refresh_lab_tables
from .schema import SCHEMA_VERSION, TABLES, duckdb_ddl
from .sql import IndexUnavailable, default_db_path, held_by, lock_down, open_failure
from .stamps import stamps
from .text import add_docs, connect as text_connect, drop_file, fill_sessions_text, text_path
from . import tuples
from .tuples import Rows, as_rows, insert_rows, update_tips

if TYPE_CHECKING:
    from .packed import Packed

EDGE = 4096  # bytes hashed at each end of a file
BATCH_FILES = 64  # files written to the database in one transaction
# Files handed to the workers ahead of the one being written: more than a batch, so that they
# go on while this process writes one (with four files each ahead, a 10,000-session build kept
# each worker a third busy), and bounded in bytes, so that the rows of big files waiting to be
# written stay small beside a server's memory.
AHEAD_FILES = 2 * BATCH_FILES
AHEAD_BYTES = 96 << 20
# A build reading more than this is extracted by worker processes, one per core, while this
# process writes what they hand back; a smaller one is read here (starting workers costs more).
POOL_BYTES = 16 << 20
STOP_POLL_SECONDS = 0.1  # how soon a build waiting for a worker sees that it was stopped
# A file whose size and mtime are those of the last build is unchanged without reading it,
# unless its mtime was this close to that build (a rewrite within the file system's clock tick
# would keep both): its first and last bytes are hashed then.
RACY_SECONDS = 2.0


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=12).hexdigest()


def edges(path: Path, size: int) -> tuple[str, str]:
    """Hashes of the first and the last EDGE bytes of the file's first `size` bytes."""
    with open(path, "rb") as f:
        head = f.read(min(EDGE, size))
        f.seek(max(0, size - EDGE))
        tail = f.read(min(EDGE, size))
    return _digest(head), _digest(tail)


@dataclass
class Progress:
    """How far a build is: the CLI prints it, the index page shows it."""

    total: int = 0
    done: int = 0
    read: int = 0  # files (re)read, the rest were unchanged
    grown: int = 0
    removed: int = 0
    failed: int = 0
    current: str = ""
    checked: int = 0  # files looked at for changes
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None

    @property
    def running(self) -> bool:
        return self.finished is None

    @property
    def seconds(self) -> float:
        return (self.finished or time.monotonic()) - self.started

    @property
    def percent(self) -> int:
        return 100 if not self.total else int(100 * self.done / self.total)


@dataclass
class _Job:
    file: str
    root: str
    size: int
    mtime: float
    head: str
    tail: str
    from_line: int  # 0: read it all
    known: bool = True  # in the index already (a new file has no rows to remove first)


def index_files(db: Path) -> list[Path]:
    """The files an index at `db` is made of: the database, the text index, and their logs."""
    text = text_path(db)
    return [db, db.with_name(db.name + ".wal"), text, text.with_name(text.name + "-wal"),
            text.with_name(text.name + "-shm")]


def built(index: Index, progress: Progress) -> dict:
    """What `index` says of a build: the figures of `progress`, and every file that failed."""
    cur = index.cursor()
    return {"path": str(index.path), "sessions": cur.execute("SELECT count(*) FROM sessions").fetchone()[0],
            "read": progress.read - progress.failed, "grown": progress.grown, "removed": progress.removed,
            "failed": progress.failed, "seconds": progress.seconds,
            "failures": cur.execute("SELECT file, error FROM files WHERE error IS NOT NULL ORDER BY file").fetchall()}


# What DuckDB and SQLite say of a file cut short or corrupted (as a full disk leaves one), as
# opposed to a file held by another process or a folder that cannot be written.
DAMAGE_SIGNS = ("Could not read enough bytes", "Corrupt database file", "does not match stored checksum",
                "Failure while replaying WAL", "database disk image is malformed", "file is not a database")


class Index:
    """The index database (`path`) and its text index beside it, opened read-write by one process.

    They hold the text of every session: the user's alone, as the sessions are. The folder made
    for them is 0700 (the app's own cache folder is made so if an earlier version left it open),
    the files 0600: those that exist are made so here, the text index is made 0600 before SQLite
    opens it (SQLite gives its log the database's mode), and what DuckDB creates later (its log)
    the commands that write an index create under a private umask (`core.private`)."""

    def __init__(self, path: Path | None = None):
        self.path = Path(path) if path else default_db_path()
        private_folder(self.path.parent, tighten=self.path.parent == default_db_path().parent)
        for part in index_files(self.path):
            make_private(part)
        try:
            self._open()
        except IndexUnavailable as exc:
            if not exc.damaged:
                raise
            # A cache cut short (a full disk, a crash mid-write): set aside, and built anew.
            aside = self._set_aside()
            print(f"session-tree: {self.path}: the index was damaged ({exc.damaged}); set aside as {aside.name}, "
                  "a new one is built", file=sys.stderr, flush=True)
            self._open()

    def _open(self) -> None:
        try:
            self.con = duckdb.connect(str(self.path))
        except duckdb.Error as exc:
            raise IndexUnavailable(open_failure(self.path, exc, "one process at a time may write an index: "
                                                "stop that one, or give this one its own with --db PATH"),
                                   self.path, held_by(exc), damaged=self._damaged(exc)) from None
        try:
            self._prepare()
        except (duckdb.Error, sqlite3.Error, OSError) as exc:  # (a full disk, a read-only folder: one line)
            self.con.close()
            said = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise IndexUnavailable(f"{self.path}: the index cannot be written here ({said})", self.path, None,
                                   damaged=self._damaged(exc)) from None

    def _damaged(self, exc: Exception) -> str | None:
        """What says the index's files are unreadable as written, not merely held or unwritable:
        an empty database file, or what DuckDB and SQLite say of a file cut short or corrupted."""
        said = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        try:
            empty = self.path.stat().st_size == 0
        except OSError:
            empty = False
        return said if empty or any(sign in said for sign in DAMAGE_SIGNS) else None

    def _set_aside(self) -> Path:
        """The damaged index's files renamed to *.damaged (a cache, but kept for whoever wants to
        look): its place is free for a new one."""
        for part in index_files(self.path):
            if part.exists():
                part.replace(part.with_name(part.name + ".damaged"))
        return self.path.with_name(self.path.name + ".damaged")

    def _prepare(self) -> None:
        """The tables made (anew when an older build made them) and the text index opened."""
        # A checkpoint when the log holds 256 MB, not 16: a build of 1,000 sessions spent a sixth
        # less CPU writing (BENCHMARKS.md), and its peak memory did not grow.
        self.con.execute("SET checkpoint_threshold = '256MB'")
        lock_down(self.con)  # the SQL box runs on this database too
        self._write = threading.Lock()
        version = self._schema_version()
        if version is not None and version != SCHEMA_VERSION:  # an older build's tables: made anew
            for t in (*TABLES, "files", "meta"):
                self.con.execute(f"DROP TABLE IF EXISTS {t}")
            text_path(self.path).unlink(missing_ok=True)
        for sql in duckdb_ddl():
            self.con.execute(sql)
        self.con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
        refresh_lab_tables(self.con)
        make_private(self.path)
        os.close(open_private(text_path(self.path), os.O_RDWR | os.O_CREAT))
        self.text = text_connect(text_path(self.path))

    def _schema_version(self) -> int | None:
        try:
            row = self.con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except duckdb.CatalogException:
            return None
        return int(row[0]) if row else None

    def refresh_lab(self) -> bool:
        """The compaction lab's tables made again from its runs' files, when these changed (they
        are not session files: `corpus/lab_tables.py`). A run file that cannot be read is left out."""
        with self._write:
            return refresh_lab_tables(self.cursor())

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A connection for one thread (DuckDB's connections are not shared between threads)."""
        return self.con.cursor()

    def close(self) -> None:
        self.text.close()
        self.con.close()

    # -- building ------------------------------------------------------------------------------

    def plan(self, roots: Iterable[Path], progress: Progress,
             files: Callable[[Path], list[Path] | list[str]] = corpus_names) -> tuple[list[_Job], list[str]]:
        """(files to read, files to remove) under `roots`; `files(root)` lists a root's session files."""
        cur = self.cursor()
        known = {r[0]: r[1:] for r in cur.execute(
            "SELECT file, size, mtime, head, tail, next_line, error, epoch(indexed_at) FROM files").fetchall()}
        jobs, seen, root_names = [], set(), []
        for root in roots:
            root = Path(root).resolve()
            root_names.append(str(root))
            paths = files(root)
            for path, stamp in zip(paths, stamps(paths)):
                file = url_name(str(path))
                if file in seen:  # under two of the roots
                    continue
                seen.add(file)
                old = known.get(file)
                try:
                    if isinstance(stamp, OSError):
                        raise stamp
                    size, mtime = stamp
                    if (old and not old[5] and (old[0], old[1]) == (size, mtime)
                            and mtime < old[6] - RACY_SECONDS):
                        continue
                    head, tail = edges(path, size)
                except OSError as exc:
                    jobs.append(_Job(file, str(root), -1, 0.0, "", f"{exc.strerror or exc}", 0))
                    continue
                if old and not old[5] and (old[0], old[1], old[2], old[3]) == (size, mtime, head, tail):
                    continue
                from_line = 0
                if old and not old[5] and size > old[0] and (old[2], old[3]) == edges(path, old[0]):
                    from_line = old[4] or 0
                    progress.grown += 1
                jobs.append(_Job(file, str(root), size, mtime, head, tail, from_line, old is not None))
        progress.checked = len(seen)
        gone = [f for f, old in known.items() if f not in seen
                and any(f.startswith(r.rstrip(os.sep) + os.sep) for r in root_names)]
        return jobs, gone

    def build(self, roots: Iterable[Path], progress: Progress | None = None,
              on_progress: Callable[[Progress], None] | None = None,
              extract_fn: Callable[[str, int], Extracted] | None = None,
              files: Callable[[Path], list[Path] | list[str]] = corpus_names,
              on_plan: Callable[[list, list], None] | None = None,
              stop: threading.Event | None = None) -> Progress:
        """Bring the index up to date with the session files under `roots`; once `stop` is set,
        end after the batch being written (each batch is one transaction: the index stays whole,
        and the files not written are read by the next build)."""
        progress = progress or Progress()
        with self._write:
            fill_sessions_text(self.text)
            jobs, gone = self.plan(roots, progress, files)
            if on_plan:
                on_plan(jobs, gone)
            progress.total = len(jobs) + len(gone)
            if gone:
                self._remove(gone)
                progress.removed = len(gone)
                progress.done += len(gone)
            batch: list[tuple[_Job, Packed | Rows | None, str | None]] = []
            for job, got, error in self._extracted(jobs, extract_fn, stop):
                if stop is not None and stop.is_set():
                    batch = []  # (read, not written: the next build reads these files again)
                    break
                batch.append((job, got, error))
                progress.current = job.file
                progress.done += 1
                progress.read += 1
                if on_progress:
                    on_progress(progress)
                if len(batch) >= BATCH_FILES:
                    self._write_each(batch, progress)
                    batch = []
            self._write_each(batch, progress)
            if jobs or gone:  # a file's conversation depends on the others: decided over the whole table
                join_conversations(self.cursor())
            refresh_lab_tables(self.cursor())
            progress.current = ""
            progress.finished = time.monotonic()
            if on_progress:
                on_progress(progress)
        return progress

    def _extracted(self, jobs: list[_Job], extract_fn: Callable[[str, int], Extracted] | None,
                   stop: threading.Event | None = None
                   ) -> Iterator[tuple[_Job, Packed | Rows | None, str | None]]:
        """(job, rows, error) of each job, in order: from worker processes when the build is big
        and the extractor is the usual one, else read here; none once `stop` is set."""
        if not jobs:
            return
        def here(job: _Job) -> tuple[Rows | None, str | None]:
            if extract_fn is None:
                return tuples.extract_rows(fs_name(job.file), job.from_line)
            try:
                return as_rows(extract_fn(fs_name(job.file), job.from_line), job.from_line), None
            except Exception as exc:  # any file's failure is its own: listed, the rest go on
                return None, f"{type(exc).__name__}: {exc}"[:500]

        readable = [job for job in jobs if job.size >= 0]
        workers = min(os.cpu_count() or 1, len(readable))
        if extract_fn is not None or workers < 2 or sum(job.size for job in readable) < POOL_BYTES:
            for job in jobs:
                yield (job, None, job.tail) if job.size < 0 else (job, *here(job))
            return
        # (imported here: pyarrow takes half a second to import, which an update read here does without)
        from .packed import extract_packed

        # forkserver: the workers are forked from a clean process, never from this one's threads
        # (nothing preloaded there: it would be imported from its working folder's sys.path)
        context = multiprocessing.get_context("forkserver")
        pool = ProcessPoolExecutor(workers, mp_context=context)
        try:
            def result(job: _Job, future) -> tuple[_Job, Packed | Rows | None, str | None]:
                if future is None:
                    return job, None, job.tail
                try:
                    return (job, *future.result())
                except BrokenProcessPool:  # the workers could not start, or one died: read here
                    return (job, *here(job))

            def submit(job: _Job):
                if job.size < 0:
                    return None
                try:
                    return pool.submit(extract_packed, fs_name(job.file), job.from_line)
                except Exception as exc:  # the pool is broken: the future says so
                    future = Future()
                    future.set_exception(exc)
                    return future

            pending: deque = deque()
            todo = iter(jobs)
            ahead = 0  # bytes of the files pending

            def fill() -> None:
                nonlocal ahead
                while len(pending) < AHEAD_FILES and (ahead < AHEAD_BYTES or not pending):
                    job = next(todo, None)
                    if job is None:
                        return
                    pending.append((job, submit(job)))
                    ahead += max(job.size, 0)

            fill()
            while pending:
                job, future = pending.popleft()
                ahead -= max(job.size, 0)
                fill()  # before the caller writes a batch: the workers go on meanwhile
                while stop is not None and future is not None and not future.done() and not stop.is_set():
                    wait([future], STOP_POLL_SECONDS)  # (a stopped build does not wait for a worker's file)
                if stop is not None and stop.is_set():
                    return
                yield result(job, future)
        finally:  # (a build stopped early: the files not begun are not read)
            pool.shutdown(wait=True, cancel_futures=True)

    def _remove(self, files: list[str]) -> None:
        cur = self.cursor()
        cur.execute("BEGIN")
        for t in (*TABLES, "files"):
            cur.execute(f"DELETE FROM {t} WHERE file IN (SELECT unnest(?::VARCHAR[]))", [files])
        cur.execute("COMMIT")
        self.text.execute("BEGIN")
        for f in files:
            drop_file(self.text, f)
        self.text.execute("COMMIT")

    def _write_each(self, batch: list[tuple[_Job, Packed | Rows | None, str | None]], progress: Progress) -> None:
        """Write a batch in one transaction; when that fails, each file alone, so that the one
        whose rows the database refuses is listed with its error and the rest are written."""
        try:
            self._write_batch(batch, progress)
        except Exception:
            for job, got, error in batch:
                # (as if indexed already: what a half-written batch left of it is removed first)
                job = replace(job, known=True)
                try:
                    self._write_batch([(job, got, error)], progress)
                except Exception as exc:
                    self._write_batch([(job, None, f"{type(exc).__name__}: {exc}"[:500])], progress)

    def _write_batch(self, batch: list[tuple[_Job, Packed | Rows | None, str | None]], progress: Progress) -> None:
        """Write the rows of a batch of files: the tables here, their text in a thread meanwhile.
        Both libraries let go of the GIL while they work, and each took about half of this
        process's CPU (a 10,000-session build spent 557 s of CPU here, on one core). The tables
        are committed once the text is written, and the text once the tables are: a failure of
        either leaves both as they were."""
        if not batch:
            return
        staged: list[BaseException] = []
        text = threading.Thread(target=self._stage_text, args=(batch, staged), name="index-text")
        text.start()

        def text_staged() -> None:
            text.join()
            if staged:
                raise staged[0]

        try:
            self._write_tables(batch, before_commit=text_staged)
        except BaseException:
            text.join()
            if self.text.in_transaction:
                self.text.execute("ROLLBACK")
            raise
        self.text.execute("COMMIT")
        progress.failed += sum(got is None for _, got, _ in batch)

    def _write_tables(self, batch: list[tuple[_Job, Packed | Rows | None, str | None]],
                      before_commit: Callable[[], None]) -> None:
        """The tables' rows of a batch: Arrow tables (from worker processes) or tuples (read here),
        committed if `before_commit` does not raise."""
        cur = self.cursor()
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        tables: dict[str, list] = {t: [] for t in TABLES}  # Arrow tables
        listed: dict[str, list[tuple]] = {t: [] for t in TABLES}
        files_rows = []
        whole = [job.file for job, _, _ in batch if job.known and not job.from_line]
        grown = [(job.file, job.from_line) for job, _, _ in batch if job.from_line]
        for job, got, error in batch:
            if got is None:
                files_rows.append((job.file, job.root, job.size, job.mtime, job.head, job.tail, 0, error, now))
                continue
            for t, table in got.tables.items():
                if isinstance(table, list):
                    listed[t].extend(table)
                else:
                    tables[t].append(table)
            files_rows.append((job.file, job.root, job.size, job.mtime, job.head, job.tail, got.next_line, None, now))
        cur.execute("BEGIN")
        try:
            all_files = [job.file for job, _, _ in batch if job.known]
            kept = {job.file: job.from_line for job, got, _ in batch if got is not None and got.kept_summaries}
            for file, line in kept.items():  # (a grown file's summaries indexed before hold: those read again go)
                cur.execute("DELETE FROM summaries WHERE file = ? AND entry_id IN "
                            "(SELECT entry_id FROM entries WHERE file = ? AND line >= ?)", [file, file, line])
            for t in ("sessions", "branches", "tool_calls", "files"):
                cur.execute(f"DELETE FROM {t} WHERE file IN (SELECT unnest(?::VARCHAR[]))", [all_files])
            cur.execute("DELETE FROM summaries WHERE file IN (SELECT unnest(?::VARCHAR[]))",
                        [[f for f in all_files if f not in kept]])
            cur.execute("DELETE FROM entries WHERE file IN (SELECT unnest(?::VARCHAR[]))", [whole])
            for file, line in grown:
                cur.execute("DELETE FROM entries WHERE file = ? AND line >= ?", [file, line])
            for t in TABLES:
                if tables[t]:
                    import pyarrow as pa

                    cur.register("batch", pa.concat_tables(tables[t]))
                    cur.execute(f"INSERT INTO {t} SELECT * FROM batch")
                    cur.unregister("batch")
                insert_rows(cur, t, listed[t])
            for job, got, _ in batch:
                if got is not None and got.tips:  # a grown file: the entries kept may lead to a new tip
                    update_tips(cur, job.file, got.tips)
            cur.executemany("INSERT INTO files VALUES (?,?,?,?,?,?,?,?,?)", files_rows)
            before_commit()
            cur.execute("COMMIT")
        except Exception:
            cur.execute("ROLLBACK")
            raise

    def _stage_text(self, batch: list[tuple[_Job, Packed | Rows | None, str | None]],
                    failed: list[BaseException]) -> None:
        """The text index's rows of a batch, in a transaction left open for `_write_batch` to
        commit; what goes wrong is rolled back and put in `failed` (this runs in a thread)."""
        try:
            self.text.execute("BEGIN")
            for job, got, _ in batch:
                if job.known:
                    drop_file(self.text, job.file, job.from_line)
                if got is not None and got.tips:
                    self.text.executemany("UPDATE docs SET leaf_id = ? WHERE file = ? AND entry_id = ?",
                                          [(leaf, job.file, entry) for entry, leaf in got.tips])
                if got is not None:
                    add_docs(self.text, got.docs)
        except BaseException as exc:
            if self.text.in_transaction:
                self.text.execute("ROLLBACK")
            failed.append(exc)
