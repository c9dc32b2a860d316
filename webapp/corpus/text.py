"""The text index beside the tables: SQLite's FTS5 (DuckDB cannot load its FTS extension here;
BENCHMARKS.md tells the measurement that chose it), through apsw, whose wheels (every platform)
hold a SQLite of this year: its FTS5 inserts words a seventh faster than the SQLite Python is
built with (3.40 here), and deletes from an index that keeps no copy of the text. One row per
entry, its words and the columns a search filters on, so that a search reads the tables only for
the text of the page's hits (their snippets, `snippets.py`).

Beside it, the same words once per session (more exactly, per write of a file: a grown file adds
a row for what it gained) in `session_body`, for the index page's filter, which asks which
sessions hold the words: on the entries' table that is the distinct files of every matching
entry (0.2 s for a common word at 1,000 sessions, ten times that at 10,000); here it is a row per
session. It holds no copy of the text (FTS5 `content=''`), so its rows cannot be deleted: a
file's rows are forgotten in `session_docs`, which a match is joined with, and their ids are
never given again (AUTOINCREMENT), so what is left in the FTS5 index names no file."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from itertools import chain, groupby, repeat
from pathlib import Path

import apsw

Error = apsw.Error  # what the text index raises
Connection = apsw.Connection
BUSY_MS = 5000  # how long a statement waits for another process's lock (Python's sqlite3 waits 5 s)

# How both FTS5 tables cut text into words, and how a hit's snippet finds them (`snippets.py` asks
# SQLite for this very tokenizer): letters, digits and marks, compared without case or diacritics.
TOKENIZER = "unicode61 remove_diacritics 2"
DDL = (
    # Each file once (its path, agent and project), each entry by its file's number: at 10,000
    # sessions the path in every entry's row made `docs` and its index 2 GB of the text index's 5.
    "CREATE TABLE IF NOT EXISTS doc_files (id INTEGER PRIMARY KEY, file TEXT UNIQUE, agent TEXT, project TEXT)",
    "CREATE TABLE IF NOT EXISTS docs (id INTEGER PRIMARY KEY, file_id INTEGER, entry_id TEXT, leaf_id TEXT, "
    "line INTEGER, type TEXT, role TEXT, model TEXT, time TEXT, tool_output INTEGER)",
    # (the only index: one by entry id, for the tips a grown file moves, cost a quarter of the
    # rows' inserts; those are updated through this one, `update_doc_tips`)
    "CREATE INDEX IF NOT EXISTS docs_file ON docs(file_id, line)",
    # The words only, no copy of the text (it is the entries' `text` in the tables, where a hit's
    # snippet is cut from: `snippets.py`): a quarter less to insert, and the index on disk at 1,000
    # sessions 373 MB, not 631. A row is deleted by its id (`contentless_delete`, SQLite 3.43).
    "CREATE VIRTUAL TABLE IF NOT EXISTS body USING fts5(text, content='', contentless_delete=1, "
    f"tokenize='{TOKENIZER}')",
    "CREATE TABLE IF NOT EXISTS session_docs (id INTEGER PRIMARY KEY AUTOINCREMENT, file TEXT, line INTEGER)",
    "CREATE INDEX IF NOT EXISTS session_docs_file ON session_docs(file, line)",
    # (which sessions hold the words, not where: no positions kept, which took 40% off its
    # inserts; a phrase of two words or more is asked of `body`, `matching_files`)
    "CREATE VIRTUAL TABLE IF NOT EXISTS session_body USING fts5(text, content='', detail=none, "
    f"tokenize='{TOKENIZER}')",
)
_local = threading.local()  # (each thread's own in-memory connection holding the tokenizer)


def utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def words_of(data: bytes, query: bool = False) -> list[tuple[int, int, str]]:
    """(start, end, word folded) of each word of `data` (UTF-8) as both FTS5 tables cut it:
    SQLite's own tokenizer, with their arguments, so that a search's words and a snippet's marks
    are the index's words (a regular expression split a word written with combining accents)."""
    tokenizer = getattr(_local, "tokenizer", None)
    if tokenizer is None:
        _local.connection = apsw.Connection(":memory:")
        name, *args = TOKENIZER.split()
        tokenizer = _local.tokenizer = _local.connection.fts5_tokenizer(name, args)
    flags = apsw.FTS5_TOKENIZE_QUERY if query else apsw.FTS5_TOKENIZE_DOCUMENT
    return tokenizer(data, flags, None, include_colocated=False)


# FTS5 writes each commit's words as a new segment and merges a level's segments once it holds
# this many (its default 4): merged less often, each word's list is rewritten fewer times as the
# index grows, which took a sixth off the words' inserts at 1,000 sessions (BENCHMARKS.md). A
# search reads at most a few more segments per word.
AUTOMERGE = 16


def text_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".text.sqlite")


def connect(path: Path, read_only: bool = False) -> Connection:
    """The text index at `path`: made (its tables, its settings) when opened to be written; a
    read-only connection raises `Error` when there is none yet."""
    if read_only:
        con = apsw.Connection(f"file:{path}?mode=ro", flags=apsw.SQLITE_OPEN_URI | apsw.SQLITE_OPEN_READONLY)
        con.set_busy_timeout(BUSY_MS)
        return con
    con = apsw.Connection(str(path))
    con.set_busy_timeout(BUSY_MS)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    # A build inserts hundreds of MB of text: a bigger page cache, temporary b-trees in memory
    # and fewer checkpoints took a sixth off its CPU (BENCHMARKS.md, "Every session at once").
    con.execute("PRAGMA cache_size=-32768")
    con.execute("PRAGMA temp_store=MEMORY")
    con.execute("PRAGMA wal_autocheckpoint=10000")
    for sql in DDL:
        con.execute(sql)
    for table in ("body", "session_body"):
        if con.execute(f"SELECT v FROM {table}_config WHERE k = 'automerge'").fetchone() != (AUTOMERGE,):
            con.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', {AUTOMERGE})")
    return con


def drop_file(con: Connection, file: str, from_line: int = 0) -> None:
    """Forget the entries of `file` from line `from_line` on."""
    row = con.execute("SELECT id FROM doc_files WHERE file = ?", (file,)).fetchone()
    if row is not None:
        con.execute("DELETE FROM body WHERE rowid IN (SELECT id FROM docs WHERE file_id = ? AND line >= ?)",
                    (row[0], from_line))
        con.execute("DELETE FROM docs WHERE file_id = ? AND line >= ?", (row[0], from_line))
        if from_line <= 0:
            con.execute("DELETE FROM doc_files WHERE id = ?", row)
    con.execute("DELETE FROM session_docs WHERE file = ? AND line >= ?", (file, from_line))


def update_doc_tips(con: Connection, file: str, tips: list[tuple[str, str]]) -> None:
    """Set the tip (`leaf_id`) of each (entry, tip) of `file`: the entries a grown file kept, whose
    tip may have moved. One pass over the file's rows (by `docs_file`), each looked up by id."""
    con.execute("CREATE TEMP TABLE IF NOT EXISTS new_tips (entry_id TEXT PRIMARY KEY, leaf_id TEXT)")
    con.execute("DELETE FROM new_tips")
    con.executemany("INSERT OR REPLACE INTO new_tips VALUES (?, ?)", tips)
    con.execute("UPDATE docs SET leaf_id = new_tips.leaf_id FROM new_tips "
                "WHERE docs.file_id = (SELECT id FROM doc_files WHERE file = ?) AND docs.entry_id = new_tips.entry_id",
                (file,))


def doc_rows(rows: list[tuple], agent: str, project: str) -> list[tuple]:
    """The text index's rows (each a value of `add_docs`'s columns, in their order) of the entries
    rows (extract.COLUMNS order) of one session: those with a text."""
    return [(r[0], r[1], r[3], r[4], r[5], r[6], r[8], r[7].isoformat() if r[7] else None, agent, project,
             int(r[6] in ("toolResult", "bashExecution")), r[-1]) for r in rows if r[-1]]


def add_docs(con: Connection, columns: Sequence[Sequence]) -> None:
    """Add the rows of `columns` (one list per column, in the order they are unpacked below, each
    file's rows together: `doc_rows` zipped, or a big build's columns from DuckDB). Columns,
    not a tuple per row: a big build has each batch's as columns from DuckDB, and SQLite takes
    each table's rows zipped from them in one `executemany` (their ids given, not asked back one
    insert at a time), so that no Python tuple is made per row before that."""
    files, entry_ids, leaf_ids, lines, types, roles, models, times, agents, projects, tool_outputs, texts = columns
    if not files:
        return
    runs: list[tuple[str, int, int]] = []  # (file, first row, row after its last)
    at = 0
    for file, rows in groupby(files):
        n = len(list(rows))
        runs.append((file, at, at + n))
        at += n
    numbers = {file: con.execute(
        "INSERT INTO doc_files (file, agent, project) VALUES (?, ?, ?) ON CONFLICT (file) DO UPDATE SET "
        "agent = excluded.agent, project = excluded.project RETURNING id", (file, agents[a], projects[a])).fetchone()[0]
        for file, a, _ in runs}
    start = (con.execute("SELECT max(id) FROM docs").fetchone()[0] or 0) + 1
    ids = range(start, start + len(files))
    file_ids = chain.from_iterable(repeat(numbers[file], b - a) for file, a, b in runs)
    con.executemany("INSERT INTO docs (id, file_id, entry_id, leaf_id, line, type, role, model, time, tool_output) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?)",
                    zip(ids, file_ids, entry_ids, leaf_ids, lines, types, roles, models, times, tool_outputs))
    con.executemany("INSERT INTO body (rowid, text) VALUES (?, ?)", zip(ids, texts))
    for file, a, b in runs:
        sid = con.execute("INSERT INTO session_docs (file, line) VALUES (?, ?) RETURNING id",
                          (file, min(lines[a:b]))).fetchone()[0]
        con.execute("INSERT INTO session_body (rowid, text) VALUES (?, ?)", (sid, "\n".join(texts[a:b])))


def matching_files(con: Connection, match: str) -> list[str]:
    """The files whose text holds the FTS5 query `match`: per session, else (a phrase of two
    words or more) from every matching entry."""
    try:
        return [r[0] for r in con.execute(
            "SELECT DISTINCT session_docs.file FROM session_body JOIN session_docs "
            "ON session_docs.id = session_body.rowid WHERE session_body MATCH ?", (match,))]
    except Error as exc:  # a phrase: `session_body` keeps no positions
        if "phrase queries are not supported" not in str(exc):
            raise
    return [r[0] for r in con.execute(
        "SELECT DISTINCT doc_files.file FROM body JOIN docs ON docs.id = body.rowid "
        "JOIN doc_files ON doc_files.id = docs.file_id WHERE body MATCH ?", (match,))]


# Words (or quoted phrases) one search asks for: each one more reads every entry that holds it,
# so a paste of thousands of words, or one common word typed 5,000 times, took 40 s.
MAX_TERMS = 32


def query_terms(text: str) -> list[str]:
    """A person's words as FTS5 phrases, each once (as the tokenizer folds it: in any case, with
    or without accents): every
    word a literal (so `-`, `:` or a quote in what they typed is never FTS5 syntax); a quoted
    phrase stays a phrase."""
    parts: dict[tuple[str, ...], str] = {}
    for m in re.finditer(r'"([^"]*)"|(\S+)', text):
        data = utf8(m.group(1) if m.group(1) is not None else m.group(2))
        words = words_of(data, query=True)
        if words:  # (each word as typed, between quotes: FTS5 cuts it again as it cut the text)
            phrase = '"' + " ".join(data[a:b].decode("utf-8", "surrogatepass") for a, b, _ in words) + '"'
            parts.setdefault(tuple(w for _, _, w in words), phrase)
    return list(parts.values())


def match_query(text: str) -> str | None:
    """The FTS5 query for every term of `query_terms` (the first MAX_TERMS of them)."""
    return " AND ".join(query_terms(text)[:MAX_TERMS]) or None
