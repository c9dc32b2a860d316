"""The writer's side of the text stage (`later.py` makes the text in the workers): each batch of
files' text written into the entries' `text` (DuckDB) and into the text index (SQLite FTS5).

The two are written side by side, and each batch overlaps the next: while the text index takes a
batch's words (in a thread of its own: SQLite lets go of the GIL while it tokenizes, which is
most of the stage), this process reads the next batch's rows out of the tables and sets and
commits their `text` in DuckDB. Written one after the other, the writer waited for the words
half the stage, and search, which waits for the stage, came that much later (BENCHMARKS.md).
A batch's text is committed before its words, so that a search made during a build never finds
an entry whose text (its snippet's) is not there yet.

What a crash or a failure leaves is what the next build mends: a batch's `later` rows are removed
only once its words are committed (its `text` in DuckDB is committed before); a batch whose
`later` rows stayed is written again, its words dropped first (`drop_file`), its text set again.
A batch that fails is written again file by file, and a file whose text cannot be written is
listed as failed (its rows stay; the next build reads it again whole)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import TYPE_CHECKING

from .text import add_docs, drop_file

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

    from .text import Connection

Made = dict[str, str] | str  # a file's entry id -> text, or why it could not be read


def _quoted(text: str) -> str:
    """`text` inside an SQL string literal (the batch's range of files in the SELECT that reads it:
    written as constants there, as they were measured; the UPDATE's, as parameters, costs the same)."""
    return text.replace("'", "''")


def _shared(column) -> list:
    """An Arrow column as a list whose equal strings are one object (a file's path, a branch's tip,
    a role, on every row of a batch: made once each, they took the writer past 1 GB)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_string(column.type):
        return column.to_pylist()
    coded = pc.dictionary_encode(column).combine_chunks()
    values = coded.dictionary.to_pylist()
    return [None if i is None else values[i] for i in coded.indices.to_pylist()]


@dataclass
class _Batch:
    files: list[tuple[str, int]]  # (file, line its entries lack their text from), as handed over
    made: list[Made]
    ok: list[tuple[str, int, dict[str, str]]]  # the files that could be read, with their text
    texts: pa.Table | None = None  # (file, entry_id, from_line, text) of each text the workers made
    rowids: tuple[int, int] | None = None  # the first and last of the table's rows they are in
    updated: int = 0  # how many of those rows `texts` gives a text
    docs: list[list] = field(default_factory=list)  # the text index's columns (`add_docs`)
    words: threading.Thread | None = None  # writing them to the text index
    failed: list[BaseException] = field(default_factory=list)


class TextWriter:
    """Writes the text stage's batches, each `put` overlapping the batch before (see above);
    `close` finishes the last. One per build, used by one thread."""

    def __init__(self, cur: duckdb.DuckDBPyConnection, text: Connection, progress):
        """`cur`: a connection of its own to the tables; `text`: the text index; `progress`: the
        build's `db.Progress`, whose `later_done` (and `failed`) it counts."""
        self.cur, self.text, self.progress = cur, text, progress
        self.pending: _Batch | None = None  # its words being written
        self.places: dict[str, tuple[int, int, int]] | None = None  # (`_places`, with the first batch)

    def _places(self) -> dict[str, tuple[int, int, int]]:
        """file -> (its first and last rowid, how many rows) of the entries whose text is to come,
        in one read of the table with the stage's first batch: each batch then reads and updates
        only the row groups its rows are in. Found by name, every batch read all of them twice (at
        10,000 sessions 53, where a batch's rows are in one or two: a path's first 8 bytes, all
        DuckDB's statistics of a string keep, are the same in every row group). The stage deletes no
        entry, and DuckDB kept every row's rowid through deletes and checkpoints where it was
        tried (2.0.1: a tenth of the rows of several row groups deleted, whole row groups
        deleted); should rows move anyway, a batch that finds fewer than counted here is found by
        name alone."""
        return {file: (first, last, n) for file, first, last, n in self.cur.execute(
            "SELECT e.file, min(e.rowid), max(e.rowid), count(*) FROM entries e "
            "JOIN later l ON l.file = e.file AND e.line >= l.from_line GROUP BY e.file").fetchall()}

    def put(self, files: list[tuple[str, int]], made: list[Made]) -> None:
        """A batch's text ((file, from line) of each file, and what the workers made of it) read
        out of the tables and committed in DuckDB while the batch before's words are written,
        then its words handed over in their place."""
        try:
            batch = self._ready(files, made)  # (while the batch before's words are written)
            if batch.ok:
                self._set_text(batch)  # (this too)
        except Exception:
            batch = None
        self._finish()
        if batch is None:
            self._each(files, made)
        elif not batch.ok:
            self._count(batch)
        else:
            self._start_words(batch)
            self.pending = batch

    def close(self) -> None:
        self._finish()

    # -- one batch -------------------------------------------------------------------------------

    def _ready(self, files: list[tuple[str, int]], made: list[Made]) -> _Batch:
        """The batch's rows read out of the tables with its text beside them (joined there, not
        looked up row by row here), as the text index takes them: nothing is written."""
        import pyarrow as pa  # (here: a small update never imports it, `tests/corpus/test_update.py`)
        import pyarrow.compute as pc

        ok = [(file, line, texts) for (file, line), texts in zip(files, made) if not isinstance(texts, str)]
        batch = _Batch(files, made, ok)
        if not ok:
            return batch
        names = [f for f, _, _ in ok]
        # (the workers' text as a table: each file's ids and texts as its dict holds them, each
        # row numbered, so that the text index is handed the workers' strings, not copies)
        texts = list(chain.from_iterable(t.values() for _, _, t in ok))
        made_rows = pa.table({
            "file": pa.array(list(chain.from_iterable(repeat(f, len(t)) for f, _, t in ok)), pa.string()),
            "entry_id": pa.array(list(chain.from_iterable(t.keys() for _, _, t in ok)), pa.string()),
            "from_line": pa.array(list(chain.from_iterable(repeat(line, len(t)) for _, line, t in ok)), pa.int32()),
            "text": pa.array(texts, pa.string()), "n": pa.array(range(len(texts)), pa.int32())})
        wanted = pa.table({"file": names, "from_line": pa.array([line for _, line, _ in ok], pa.int32())})
        if self.places is None:  # (not before: a build without text to write reads nothing more)
            self.places = self._places()
        places = [self.places.get(f) for f in names]
        known = [p for p in places if p is not None]
        rows = sum(p[2] for p in known)
        meta = self._meta(wanted, made_rows, min(names), max(names),
                          (min(p[0] for p in known), max(p[1] for p in known)) if known else None)
        if meta.num_rows != rows:  # (rows moved in the table since the stage began: found by name alone)
            meta = self._meta(wanted, made_rows, min(names), max(names), None)
        rid = meta.column("rid")
        batch.rowids = (pc.min(rid).as_py(), pc.max(rid).as_py()) if meta.num_rows else None
        batch.texts = made_rows.drop_columns(["n"])
        batch.updated = pc.count(meta.column("n")).as_py()
        # (the rows with a text, a column each: `text.add_docs`)
        with_text = meta.filter(meta.column("has_text"))
        batch.docs = [column.to_pylist() if name in ("entry_id", "time") else _shared(column)  # (those differ)
                      for name, column in zip(with_text.column_names, with_text.columns)
                      if name not in ("has_text", "n", "rid")]
        batch.docs.append([texts[n] for n in with_text.column("n").to_pylist()])
        return batch

    def _meta(self, wanted: pa.Table, made_rows: pa.Table, low: str, high: str, rowids: tuple[int, int] | None
              ) -> pa.Table:
        """The text index's columns of each entry of the batch (`text.doc_rows`), whether it has a
        text, the row of `made_rows` that holds it (None where the workers made none) and its
        rowid, in the order of the files and their lines.
        `rowids`: the range of the table's rows they are in (where the stage found them), else
        every row group is read."""
        cur = self.cur
        cur.register("wanted", wanted)
        cur.register("made", made_rows)
        try:
            # (the rowids' range, as constants: the database skips the row groups outside it; the
            # names' range alone skips none, a path's first 8 bytes being the same in all of them)
            return cur.sql(
                "SELECT e.file, e.entry_id, e.leaf_id, e.line, e.type, e.role, e.model, "
                "CASE WHEN epoch_us(e.time) % 1000000 = 0 THEN strftime(e.time, '%Y-%m-%dT%H:%M:%S') "
                "     ELSE strftime(e.time, '%Y-%m-%dT%H:%M:%S.%f') END AS time, s.agent, s.project, "
                "coalesce(e.role IN ('toolResult', 'bashExecution'), false)::INTEGER AS tool_output, "
                "coalesce(m.text <> '', false) AS has_text, m.n, e.rowid AS rid "
                "FROM entries e JOIN wanted w ON e.file = w.file AND e.line >= w.from_line "
                "JOIN sessions s ON s.file = e.file "
                "LEFT JOIN made m ON m.file = e.file AND m.entry_id = e.entry_id "
                f"WHERE e.file BETWEEN '{_quoted(low)}' AND '{_quoted(high)}' "
                + (f"AND e.rowid BETWEEN {int(rowids[0])} AND {int(rowids[1])} " if rowids else "")
                + "ORDER BY e.file, e.line").to_arrow_table()
        finally:
            cur.unregister("wanted")
            cur.unregister("made")

    def _set_text(self, batch: _Batch) -> None:
        """The batch's `text` set in DuckDB and committed (its `later` rows stay until its words
        are: `_done`)."""
        names = [f for f, _, _ in batch.ok]
        cur = self.cur
        cur.execute("BEGIN")
        cur.register("texts", batch.texts)
        try:
            update = ("UPDATE entries SET text = t.text FROM texts t WHERE entries.file = t.file "
                      "AND entries.entry_id = t.entry_id AND entries.line >= t.from_line "
                      "AND entries.file BETWEEN ? AND ?")
            bounds = [min(names), max(names)]
            if batch.rowids is None or cur.execute(update + " AND entries.rowid BETWEEN ? AND ?",
                                                   [*bounds, *batch.rowids]).fetchone()[0] != batch.updated:
                cur.execute(update, bounds)  # (rows moved since they were read: found by name alone)
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        finally:
            cur.unregister("texts")
            batch.texts = None  # (its Arrow copy of the text is no longer needed)

    def _start_words(self, batch: _Batch) -> None:
        """The batch's words handed to the text index's thread, which commits them."""
        text = self.text

        def words() -> None:  # (its own thread: SQLite and DuckDB both let go of the GIL)
            try:
                text.execute("BEGIN")
                try:
                    for file, line, _ in batch.ok:
                        drop_file(text, file, line)
                    add_docs(text, batch.docs)
                except BaseException:
                    text.execute("ROLLBACK")
                    raise
                text.execute("COMMIT")
            except BaseException as exc:
                batch.failed.append(exc)

        batch.words = threading.Thread(target=words, name="index-text")
        batch.words.start()

    def _finish(self) -> None:
        """The pending batch done once its words are; written again file by file if they failed."""
        batch, self.pending = self.pending, None
        if batch is None:
            return
        try:
            self._done(batch)
        except Exception:
            self._each(batch.files, batch.made)
            return
        self._count(batch)

    def _done(self, batch: _Batch) -> None:
        """Once the batch's words are committed, its `later` rows removed; raises what failed."""
        batch.words.join()
        if batch.failed:
            raise batch.failed[0]
        self.cur.execute("DELETE FROM later WHERE file IN (SELECT unnest(?::VARCHAR[]))", [[f for f, _, _ in batch.ok]])

    def _each(self, files: list[tuple[str, int]], made: list[Made]) -> None:
        """Each file of a batch that failed written alone; one that fails again is listed as failed."""
        for one, got in zip(files, made):
            try:
                batch = self._ready([one], [got])
                if batch.ok:
                    self._set_text(batch)
                    self._start_words(batch)
                    self._done(batch)
                self._count(batch)
            except Exception as exc:
                self.cur.execute("UPDATE files SET error = ? WHERE file = ?",
                                 [f"its text could not be written: {type(exc).__name__}: {exc}"[:500], one[0]])
                self.progress.failed += 1
                self.progress.later_done += 1

    def _count(self, batch: _Batch) -> None:
        self.progress.later_done += len(batch.files)
        self.progress.current = batch.files[-1][0]
