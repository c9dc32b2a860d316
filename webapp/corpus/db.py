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
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from ..core.private import make_private, open_private, private_folder
from ..core.storage import fs_name, sidecar_files, url_name
from .discovery import corpus_names
from .extract import Extracted
from .joins import join_conversations
from .lab_tables import refresh_lab_tables
from .schema import SCHEMA_VERSION, TABLES, duckdb_ddl, why_refused
from .sql import IndexUnavailable, default_db_path, held_by, lock_down, open_failure
from .stamps import stamps
from .text import Error as TextError, add_docs, connect as text_connect, drop_file, text_path, update_doc_tips
from .text_writes import TextWriter
from . import tuples
from .tuples import FILES_TYPES, Rows, as_rows, insert_rows, update_tips
from .workers import batches, fewer_malloc_arenas, in_workers, pool as _pool

if TYPE_CHECKING:
    from .batch import Batch

EDGE = 4096  # bytes hashed at each end of a file
BATCH_FILES = 64  # files written to the database in one transaction (a build read here)
# A build reading more than this is read by worker processes, one per core, while this process
# writes what they hand back (`workers.py`); a smaller one is read here (starting workers costs more).
POOL_BYTES = 16 << 20
# The text stage's batches are half the tables' (in bytes of files): the writer holds two of them
# at once, their text in Python, and with 32 MB each it peaked at 1,000 MB at 10,000 sessions.
TEXT_BATCH_BYTES = 16 << 20
AUDIT_NICE = 10  # how much lower the audits' worker runs than the build (`_build_later`)
MEMORY_MB = 512  # the most memory the index's DuckDB keeps (`Index.__init__`)
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
    # A big build writes the tables first (the list and the figures), then each file's text and
    # its summaries' audits (`later.py`): when the tables were ready, and how far that is.
    tables_ready: float | None = None
    text_ready: float | None = None  # (and when the text was: search reads every session from then)
    later_total: int = 0  # files whose text is to be made
    later_done: int = 0
    audits_total: int = 0  # files whose summaries' audits are to be made
    audits_done: int = 0

    @property
    def running(self) -> bool:
        return self.finished is None

    @property
    def seconds(self) -> float:
        return (self.finished or time.monotonic()) - self.started

    @property
    def percent(self) -> int:
        return 100 if not self.total else int(100 * self.done / self.total)

    @property
    def later(self) -> bool:
        """Whether the tables are written and the text or the audits are being made."""
        return self.running and self.tables_ready is not None and bool(self.later_total or self.audits_total)


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
        fewer_malloc_arenas()  # (before DuckDB's threads start: an arena is taken when first needed)
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
        except (duckdb.Error, TextError, OSError) as exc:  # (a full disk, a read-only folder: one line)
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
        self.con.execute("SET enable_progress_bar = false")  # (DuckDB draws one on a terminal for a long query)
        # DuckDB keeps the blocks it read or wrote while it may, up to 80% of the machine's memory by
        # default: a build of 10,000 sessions held 2.1 GB so. Beyond this it writes them out first.
        self.con.execute(f"SET memory_limit = '{MEMORY_MB}MB'")
        lock_down(self.con)  # the SQL box runs on this database too
        self._write = threading.Lock()
        version = self._schema_version()
        if version is not None and version != SCHEMA_VERSION:  # an older build's tables: made anew
            for t in (*TABLES, "files", "meta"):
                self.con.execute(f"DROP TABLE IF EXISTS {t}")
        if version != SCHEMA_VERSION:  # (new tables: a text index left beside them is not theirs)
            for part in index_files(self.path)[2:]:  # (the text index and its logs)
                part.unlink(missing_ok=True)
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
                # (a session read with its sub-agents' files is read whole again: their lines are
                # numbered in their own files, so no line of the session's says what is new)
                if (old and not old[5] and size > old[0] and (old[2], old[3]) == edges(path, old[0])
                        and not sidecar_files(Path(path))):
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
            jobs, gone = self.plan(roots, progress, files)
            if on_plan:
                on_plan(jobs, gone)
            progress.total = len(jobs) + len(gone)
            if gone:
                self._remove(gone)
                progress.removed = len(gone)
                progress.done += len(gone)
            readable = [job for job in jobs if job.size >= 0]
            workers = min(os.cpu_count() or 1, len(readable))
            pooled = extract_fn is None and workers >= 2 and sum(job.size for job in readable) >= POOL_BYTES
            with _pool(workers if pooled else 0) as pool:
                if pool is not None:
                    self._build_tables(jobs, pool, progress, on_progress, stop)
                else:
                    self._build_here(jobs, extract_fn, progress, on_progress, stop)
                progress.current = ""
                if jobs or gone:  # a file's conversation depends on the others: decided over the whole table
                    join_conversations(self.cursor())
                refresh_lab_tables(self.cursor())
                progress.tables_ready = time.monotonic()
                if stop is None or not stop.is_set():  # (else the `later` rows say what the next build makes)
                    self._build_later(pool, progress, on_progress, stop)
            progress.current = ""
            progress.finished = time.monotonic()
            if on_progress:
                on_progress(progress)
        return progress

    def _build_here(self, jobs: list[_Job], extract_fn, progress: Progress, on_progress,
                    stop: threading.Event | None = None) -> None:
        """Read each file here, its rows whole (text and audits included), written a batch at a time;
        once `stop` is set, the batch being made is dropped (the next build reads its files)."""
        batch: list[tuple[_Job, Rows | None, str | None]] = []
        for job, got, error in self._extracted(jobs, extract_fn):
            if stop is not None and stop.is_set():
                return
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

    def _build_tables(self, jobs: list[_Job], pool: ProcessPoolExecutor, progress: Progress, on_progress,
                      stop: threading.Event | None = None) -> None:
        """The tables of every file, read by worker processes a batch at a time (`batch.tables_of`:
        the SQL projection for pi's files), each batch written as it comes back; the text and the
        audits are left for `_build_later`. Once `stop` is set no batch is waited for or written
        (the pool's exit cancels what was not begun)."""
        from .batch import tables_of

        def args(group: list[_Job]) -> list[tuple[str, int]]:
            return [(fs_name(j.file), j.from_line) for j in group]

        unreadable = [job for job in jobs if job.size < 0]
        if unreadable:
            self._write_each([(job, None, job.tail) for job in unreadable], progress)
            progress.done += len(unreadable)
        # (in the order of their names: the text is written in that order later, and a batch's
        # rows found by a range of names are then in a few of the database's row groups)
        readable = sorted((job for job in jobs if job.size >= 0), key=lambda job: job.file)
        size = lambda job: job.size  # noqa: E731
        for group, got in in_workers(pool, batches(readable, size), tables_of, args, size, stop):
            if stop is not None and stop.is_set():
                return
            if isinstance(got, BaseException):  # the workers could not start, or one died: read here
                got = tables_of(args(group))
            self._write_tables_batch(group, got, progress)
            progress.current = group[-1].file
            progress.done += len(group)
            progress.read += len(group)
            if on_progress:
                on_progress(progress)

    def _extracted(self, jobs: list[_Job], extract_fn: Callable[[str, int], Extracted] | None
                   ) -> Iterator[tuple[_Job, Rows | None, str | None]]:
        """(job, rows, error) of each job, in order, read here (`extract_fn`: instead of the usual
        extractor)."""
        for job in jobs:
            if job.size < 0:
                yield job, None, job.tail
            elif extract_fn is None:
                yield (job, *tuples.extract_rows(fs_name(job.file), job.from_line))
            else:
                try:
                    yield job, as_rows(extract_fn(fs_name(job.file), job.from_line), job.from_line), None
                except Exception as exc:  # any file's failure is its own: listed, the rest go on
                    yield job, None, f"{type(exc).__name__}: {exc}"[:500]

    def _remove(self, files: list[str]) -> None:
        cur = self.cursor()
        cur.execute("BEGIN")
        for t in (*TABLES, "files", "later"):
            cur.execute(f"DELETE FROM {t} WHERE file IN (SELECT unnest(?::VARCHAR[]))", [files])
        cur.execute("COMMIT")
        self.text.execute("BEGIN")
        for f in files:
            drop_file(self.text, f)
        self.text.execute("COMMIT")

    def _write_tables_batch(self, group: list[_Job], got: Batch, progress: Progress) -> None:
        """Write a batch of files' tables (Arrow, from `batch.tables_of`) in one transaction, with
        a row in `later` for each file whose text and audits are to come; when the database refuses
        the batch, each file alone, so that the one it refuses is listed with its error."""
        try:
            self._write_arrow(group, got)
        except Exception:
            import pyarrow.compute as pc

            for job, done in zip(group, got.done):
                alone = type(got)({t: table.filter(pc.equal(table.column("file"), job.file))
                                   for t, table in got.tables.items()}, [done])
                try:
                    self._write_arrow([replace(job, known=True)], alone)
                except Exception as exc:
                    done.error = f"{type(exc).__name__}: {exc}"[:500]
                    self._write_each([(replace(job, known=True), None, done.error)], progress)
                    progress.failed -= 1  # (counted below, with the others that failed)
        progress.failed += sum(done.error is not None for done in got.done)

    def _write_arrow(self, group: list[_Job], got: Batch) -> None:
        cur = self.cursor()
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        read = [(job, done) for job, done in zip(group, got.done) if done.error is None]
        whole = [job.file for job, _ in read if job.known and not job.from_line] + \
            [job.file for job, done in zip(group, got.done) if done.error is not None and job.known]
        grown = [(job.file, job.from_line) for job, _ in read if job.from_line]
        kept = {job.file: job.from_line for job, done in read if done.kept_summaries}
        with self._both(cur):
            self._clear(cur, [job.file for job in group if job.known], whole, grown, kept)
            for t, table in got.tables.items():
                if table.num_rows:
                    cur.register("batch", table)
                    cur.execute(f"INSERT INTO {t} SELECT * FROM batch")
                    cur.unregister("batch")
            for job, done in read:
                if done.tips:  # a grown file: the entries kept may lead to a new tip
                    update_tips(cur, job.file, done.tips)
            insert_rows(cur, "files", [(job.file, job.root, job.size, job.mtime, job.head, job.tail, done.next_line or 0,
                                        done.error, now) for job, done in zip(group, got.done)], FILES_TYPES)
            insert_rows(cur, "later", [(job.file, job.from_line, done.projected) for job, done in read],
                        ("VARCHAR", "INTEGER", "BOOLEAN"), "ON CONFLICT (file) DO UPDATE SET "
                        "from_line = least(later.from_line, excluded.from_line), "
                        "projected = later.projected AND excluded.projected")
            for job in group:
                if job.known:  # the entries read again lose their text (it comes again later)
                    drop_file(self.text, job.file, job.from_line)
            for job, done in read:
                if done.tips:
                    update_doc_tips(self.text, job.file, done.tips)

    @contextmanager
    def _both(self, cur):
        """A transaction of the tables (`cur`) and of the text index together: the tables are
        committed once what the block wrote to both was written, then the text; a failure of
        either leaves both as they were."""
        self.text.execute("BEGIN")
        cur.execute("BEGIN")
        try:
            yield
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            self.text.execute("ROLLBACK")
            raise
        self.text.execute("COMMIT")

    @staticmethod
    def _clear(cur, known: list[str], whole: list[str], grown: list[tuple[str, int]], kept: dict[str, int]) -> None:
        """Remove the rows that files read again replace: all but the entries of a grown file
        before the line it is read from, and the summaries whose audits still hold (`kept`)."""
        for file, line in kept.items():  # (a grown file's summaries indexed before hold: those read again go)
            cur.execute("DELETE FROM summaries WHERE file = ? AND entry_id IN "
                        "(SELECT entry_id FROM entries WHERE file = ? AND line >= ?)", [file, file, line])
        for t in ("sessions", "branches", "tool_calls", "files"):
            cur.execute(f"DELETE FROM {t} WHERE file IN (SELECT unnest(?::VARCHAR[]))", [known])
        cur.execute("DELETE FROM summaries WHERE file IN (SELECT unnest(?::VARCHAR[]))",
                    [[f for f in known if f not in kept]])
        cur.execute("DELETE FROM entries WHERE file IN (SELECT unnest(?::VARCHAR[]))", [whole])
        for file, line in grown:
            cur.execute("DELETE FROM entries WHERE file = ? AND line >= ?", [file, line])

    # -- the text and the audits, once the tables are written ------------------------------------

    def _build_later(self, pool: ProcessPoolExecutor | None, progress: Progress, on_progress,
                     stop: threading.Event | None = None) -> None:
        """Make the text of every file listed in `later` and the audit of every summary without one,
        each written a batch at a time (until `stop` is set: the rest is still listed, for the next
        build). On a big build both are made at once: the audits (a
        worker's work) by a worker of their own, in a thread, while this one writes the text (the
        writer's work: the text index tokenizes every word), which search waits for. That worker
        runs at a lower priority (AUDIT_NICE): the text's stage is bound by this process, so the
        audits take the CPU it leaves, not the CPU of the workers making the text (made after the
        text, on both cores, the audits made the whole build a third longer). Once the text is
        written, the text's workers take the audits still to come from the same list: alone, the
        audits' worker left a core idle for the build's last 40 s at 10,000 sessions."""
        from .later import AuditJob, TextJob, audits_of, texts_of

        cur = self.cursor()
        texts = cur.execute("SELECT l.file, l.from_line, l.projected, f.size FROM later l JOIN files f ON f.file = l.file "
                            "ORDER BY l.file").fetchall()
        audits = cur.execute("SELECT s.file, list(s.entry_id ORDER BY s.entry_id), any_value(f.size) FROM summaries s "
                             "JOIN files f ON f.file = s.file WHERE s.facts IS NULL GROUP BY s.file ORDER BY s.file"
                             ).fetchall()
        progress.later_total, progress.audits_total = len(texts), len(audits)
        text_jobs = [(file, size, (from_line,), TextJob(fs_name(file), from_line, projected))
                     for file, from_line, projected, size in texts]
        size = lambda job: job[1]  # noqa: E731
        audit_groups = iter(batches([(file, size, (), AuditJob(fs_name(file), tuple(ids)))
                                     for file, ids, size in audits], size))
        counting = threading.Lock()  # (the audits are counted by two threads at the end)

        def stage(groups, make, write, counter: str | None, workers=pool, at_once: int | None = None) -> None:
            """The batches of `groups` (an iterator: two stages may take from one) made and
            written one by one (`counter` counted here, or by the writer when None)."""
            args = lambda group: [job[3] for job in group]  # noqa: E731
            done = in_workers(workers, groups, make, args, size, stop, at_once) if workers is not None \
                else ((group, make(args(group))) for group in groups)
            for group, made in done:
                if stop is not None and stop.is_set():
                    return
                if isinstance(made, BaseException):  # the workers could not go on: made here
                    made = make(args(group))
                write([(job[0], *job[2]) for job in group], made)
                if counter is not None:
                    with counting:
                        setattr(progress, counter, getattr(progress, counter) + len(group))
                    progress.current = group[-1][0]
                if on_progress:
                    on_progress(progress)

        failed: list[BaseException] = []

        def audit() -> None:
            try:
                if pool is None or not audits:
                    stage(audit_groups, audits_of, self._write_audits, "audits_done")
                    return
                # one worker of its own: the text's batches (which the writer waits for) are never
                # queued behind an audit, and the audits use what the text leaves of the cores
                with _pool(1, least=1, nice=AUDIT_NICE) as own:
                    stage(audit_groups, audits_of, self._write_audits, "audits_done", own)
            except BaseException as exc:  # (raised in this thread once the text is written)
                failed.append(exc)

        meanwhile = threading.Thread(target=audit, name="index-audits") if pool is not None else None
        if meanwhile:
            meanwhile.start()
        try:
            writer = TextWriter(self.cursor(), self.text, progress)
            try:
                # (one batch made ahead: the writer holds two already, one being written while it
                # reads the next out of the tables, and a worker makes a batch's text in a fraction
                # of the time the writer takes to write it; a second held the writer past 1 GB)
                stage(iter(batches(text_jobs, size, TEXT_BATCH_BYTES)), texts_of, writer.put, None, at_once=1)
            finally:
                writer.close()  # (the last batch, or the one in flight when `stop` was set)
            progress.text_ready = time.monotonic()
            if on_progress:
                on_progress(progress)
            if meanwhile and not (stop is not None and stop.is_set()):
                stage(audit_groups, audits_of, self._write_audits, "audits_done")  # (beside the audits' worker)
        finally:
            if meanwhile:
                meanwhile.join()
        if meanwhile is None:
            audit()
        if failed:
            raise failed[0]

    def _write_audits(self, files: list[tuple[str]], made: list[list[tuple] | str]) -> None:
        """The audits of a batch of files' summaries (`summaries.score`, `facts`, `missing`)."""
        import pyarrow as pa

        audits = [(file, *a) for (file,), got in zip(files, made) if not isinstance(got, str) for a in got]
        if not audits:
            return
        cur = self.cursor()
        cur.register("audits", pa.table({k: pa.array([a[i] for a in audits], t) for i, (k, t) in enumerate(
            (("file", pa.string()), ("entry_id", pa.string()), ("score", pa.int32()), ("facts", pa.int32()),
             ("missing", pa.int32())))}))
        try:
            cur.execute("UPDATE summaries SET score = a.score, facts = a.facts, missing = a.missing FROM audits a "
                        "WHERE summaries.file = a.file AND summaries.entry_id = a.entry_id")
        finally:
            cur.unregister("audits")

    def _write_each(self, batch: list[tuple[_Job, Rows | None, str | None]], progress: Progress) -> None:
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
                    self._write_batch([(job, None, why_refused(exc))], progress)

    def _write_batch(self, batch: list[tuple[_Job, Rows | None, str | None]], progress: Progress) -> None:
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

    def _write_tables(self, batch: list[tuple[_Job, Rows | None, str | None]],
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
            kept = {job.file: job.from_line for job, got, _ in batch if got is not None and got.kept_summaries}
            self._clear(cur, [job.file for job, _, _ in batch if job.known], whole, grown, kept)
            # (read whole here, text included: nothing of it is left for later)
            cur.execute("DELETE FROM later WHERE file IN (SELECT unnest(?::VARCHAR[]))",
                        [[job.file for job, got, _ in batch if not job.from_line or got is None]])
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
            insert_rows(cur, "files", files_rows, FILES_TYPES)
            before_commit()
            cur.execute("COMMIT")
        except Exception:
            cur.execute("ROLLBACK")
            raise

    def _stage_text(self, batch: list[tuple[_Job, Rows | None, str | None]],
                    failed: list[BaseException]) -> None:
        """The text index's rows of a batch, in a transaction left open for `_write_batch` to
        commit; what goes wrong is rolled back and put in `failed` (this runs in a thread)."""
        try:
            self.text.execute("BEGIN")
            for job, got, _ in batch:
                if job.known:
                    drop_file(self.text, job.file, job.from_line)
                if got is not None and got.tips:
                    update_doc_tips(self.text, job.file, got.tips)
                if got is not None and got.docs:
                    add_docs(self.text, list(zip(*got.docs)))
        except BaseException as exc:
            if self.text.in_transaction:
                self.text.execute("ROLLBACK")
            failed.append(exc)
