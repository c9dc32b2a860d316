"""Questions a person asks the corpus in SQL: one SELECT, in a read-only transaction (the server's
SQL box shares the connection its index is written through: DuckDB opens one file once per
process, so the transaction is what keeps it read-only), reading no other file, its settings
locked, stopped after a time limit, its rows capped.

No other file: `enable_external_access = false` stops every reader of another file, but DuckDB
keeps the database's own files (itself, its WAL) in `allowed_paths` whatever is set, so
`read_blob` would still hand out the database file's bytes; a query may therefore call only
the table functions of `TABLE_FUNCTIONS` (its syntax tree, `json_serialize_sql`, tells which)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..core.errors import SessionError

ROW_CAP = 1000  # rows the SQL box shows
SECONDS = 5.0  # before the SQL box stops a query
MAX_SECONDS = 86_400.0  # the longest time limit a query is given (`sql --timeout`)
BYTE_CAP = 64 * 1024 * 1024  # of the values an answer holds (`session-tree sql`, here or through a server)
PAGE_BYTE_CAP = 4 * 1024 * 1024  # of the values the SQL box's page holds (each cut first: `cell_chars`)
FETCH_ROWS = 256  # rows read at a time, counted against the byte cap as they come
# Types whose values have a small fixed size: every other (text, blobs, lists, structs, maps...) is
# cut inside the query when a caller asks for `cell_chars` (DuckDB hands rows over 2,048 at a
# time: 0.5 MB values would be a gigabyte before the first row is counted).
FIXED_SIZE = frozenset({"boolean", "tinyint", "smallint", "integer", "bigint", "hugeint", "utinyint", "usmallint",
                        "uinteger", "ubigint", "uhugeint", "float", "double", "decimal", "date", "time",
                        "timestamp", "timestamp with time zone", "timestamp_s", "timestamp_ms", "timestamp_ns",
                        "time with time zone", "interval", "uuid"})


# The table functions a query may call: none of them reads a file (`read_blob`, `read_text`,
# `glob`, `read_csv`, … do, and `query`/`query_table` run SQL of their own).
TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest", "duckdb_tables", "duckdb_columns",
                             "duckdb_views", "duckdb_types", "duckdb_functions", "pragma_table_info"})


class QueryError(Exception):
    """A query refused or failed: the message says why."""


class IndexUnavailable(QueryError, SessionError):
    """The index database at `path` cannot be opened: process `pid` writes it (None: another
    reason). A command asks that process when it is a server (`holder.py`)."""

    def __init__(self, message: str, path: Path, pid: int | None, damaged: str | None = None):
        super().__init__(message)
        self.path, self.pid = path, pid
        self.damaged = damaged  # what the database said of its files being unreadable, if that is why


# DuckDB lets one process write a database, or several read it, never both: opening one that
# another process writes fails with this (the process's program and PID).
_HELD = re.compile(r"Conflicting lock is held in .*? \(PID (\d+)\)")


def held_by(exc: Exception) -> int | None:
    """The PID of the process that holds the database DuckDB could not open, if that is why."""
    held = _HELD.search(str(exc))
    return int(held.group(1)) if held else None


def open_failure(path: Path, exc: Exception, remedy: str) -> str:
    """Why the database at `path` could not be opened, said plainly: another process that holds
    it (then `remedy`, what to do about it), else DuckDB's own first line."""
    pid = held_by(exc)
    if pid is not None:
        return f"{path}: in use by another process (PID {pid}); {remedy}"
    return f"{path}: cannot be opened ({str(exc).splitlines()[0]})"


@dataclass
class QueryResult:
    columns: list[str]
    rows: list[tuple]
    truncated: bool
    over_bytes: bool = False  # stopped at the byte cap (`truncated` too): fewer rows than the row cap


class CutText(str):
    """A value cut inside the query to the characters asked for; `full_length` says how long it was."""

    full_length: int = 0

    @classmethod
    def of(cls, text: str, full_length: int) -> "CutText":
        cut = cls(text)
        cut.full_length = full_length
        return cut


def default_db_path() -> Path:
    """`$XDG_CACHE_HOME/session-tree/corpus.duckdb`, else under ~/.cache."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "session-tree" / "corpus.duckdb"


def read_only_connection(path: Path | None) -> duckdb.DuckDBPyConnection:
    """The index database opened read-only, reading no other file."""
    path = Path(path) if path else default_db_path()
    if not path.is_file():
        raise QueryError(f"{path}: no index there (run `session-tree index` first)")
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        said = open_failure(path, exc, "it writes the index, so nothing else may read it meanwhile: "
                                       "wait for it to end, or stop it")
        raise IndexUnavailable(said, path, held_by(exc)) from None
    lock_down(con)
    return con


def lock_down(con: duckdb.DuckDBPyConnection) -> None:
    """No query on `con` reads or writes another file, and no setting changes any more."""
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def run_query(con: duckdb.DuckDBPyConnection, query: str, limit: int | None = ROW_CAP, seconds: float = SECONDS,
              max_bytes: int = BYTE_CAP, cell_chars: int | None = None, params: list | None = None) -> QueryResult:
    """Run `query` (with `params`) if it is one SELECT; stop it after `seconds`; keep its first
    `limit` rows (None: all of them), and no more rows than hold `max_bytes` of values. With
    `cell_chars`, each value that is not of a small fixed size is cut to that many characters
    inside the query (a `CutText` that says its full length), so that no long value reaches this
    process at all."""
    if not 0 < seconds <= MAX_SECONDS:  # (NaN too)
        raise QueryError(f"the time limit must be above 0 and at most {MAX_SECONDS:,.0f} seconds, not {seconds:g}")
    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as exc:
        raise QueryError(str(exc).splitlines()[0]) from None
    if len(statements) != 1:
        raise QueryError("one statement at a time, please")
    if statements[0].type != duckdb.StatementType.SELECT:
        raise QueryError(f"only SELECT queries are run here (this is a {statements[0].type.name})")
    _refuse_file_readers(con, query)
    cur = con.cursor()
    timer = threading.Timer(seconds, cur.interrupt)
    timer.start()
    try:
        cur.execute("BEGIN TRANSACTION READ ONLY")
        cut: list[int] = []
        if cell_chars is not None:
            cur.execute(f"SELECT * FROM (\n{query}\n) LIMIT 0", params or None)
            columns = [d[0] for d in cur.description or ()]
            wrapped, cut = _cutting(query, cur.description or (), cell_chars)
            cur.execute(wrapped, params or None)
        else:
            cur.execute(query, params or None)
            columns = [d[0] for d in cur.description or ()]
        rows, over = _fetch(cur, limit, max_bytes, cut, cell_chars)
    except duckdb.InterruptException:
        raise QueryError(f"the query was stopped after {seconds:g} s") from None
    except duckdb.Error as exc:
        raise QueryError(str(exc).splitlines()[0]) from None
    finally:
        timer.cancel()
        try:
            cur.execute("ROLLBACK")
        except duckdb.Error:  # the transaction had not begun (interrupted first)
            pass
        cur.close()
    return QueryResult(columns, rows[:limit], (limit is not None and len(rows) > limit) or over, over)


def _cutting(query: str, description, chars: int) -> tuple[str, list[int]]:
    """`query` wrapped so that each column not of a fixed size comes cut to `chars` + 1 characters,
    its full length in a column added at the end; and the positions of the cut columns. (The query
    is on lines of its own: a `--` comment at its end cannot reach the wrapper.)"""
    names = [f"c{i}" for i in range(len(description))]
    shown, lengths, cut = [], [], []
    for i, (name, kind, *_) in enumerate(description):
        label = '"' + str(name).replace('"', '""') + '"'
        if getattr(kind, "id", "") in FIXED_SIZE:
            shown.append(f"__q.{names[i]} AS {label}")
            continue
        text = f"CAST(__q.{names[i]} AS VARCHAR)"
        shown.append(f"left({text}, {chars + 1}) AS {label}")
        lengths.append(f"length({text})")
        cut.append(i)
    select = ", ".join(shown + lengths) or "*"
    return f"SELECT {select} FROM (\n{query}\n) AS __q({', '.join(names)})", cut


def _fetch(cur, limit: int | None, max_bytes: int, cut: list[int], chars: int | None) -> tuple[list[tuple], bool]:
    """Up to `limit` + 1 rows (None: every row), read a few at a time, stopping before the values pass `max_bytes`;
    (rows, stopped at the byte cap). Cut columns become CutText where they were cut."""
    rows: list[tuple] = []
    size = 0
    width = None
    while limit is None or len(rows) <= limit:
        batch = cur.fetchmany(FETCH_ROWS if limit is None else min(FETCH_ROWS, limit + 1 - len(rows)))
        if not batch:
            return rows, False
        for row in batch:
            if cut:
                width = width or len(row) - len(cut)
                row = _with_cuts(row[:width], row[width:], cut, chars)
            size += sum(len(v) if isinstance(v, (str, bytes)) else 16 for v in row)
            if size > max_bytes:
                return rows, True
            rows.append(row)
    return rows, False


def _with_cuts(row: tuple, lengths: tuple, cut: list[int], chars: int) -> tuple:
    values = list(row)
    for i, n in zip(cut, lengths):
        if n is not None and n > chars:
            values[i] = CutText.of(values[i][:chars], n)
    return tuple(values)


# JSON escapes the C0 controls, not DEL and the C1 controls (U+0080-U+009F), which a terminal may
# obey as it does ESC. Written as JSON escapes, the document still reads back the same values
# (the C0 controls too, for a JSON text that came from elsewhere: a server's answer).
_JSON_CONTROLS = {c: f"\\u{c:04x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if chr(c) not in "\t\n\r"}


def json_safe(text: str) -> str:
    """A JSON text with no control character left raw (whitespace aside)."""
    return text.translate(_JSON_CONTROLS)


# In `text`, a value's tab, newline or backslash is written as `\t`, `\n`, `\\` (as PostgreSQL's
# COPY text format does): a message's newline would otherwise start a row of its own.
_TEXT_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def format_result(result: QueryResult, how: str) -> str:
    """The rows as `session-tree sql` prints them: `json` (one object a row), `csv`, or `text`
    (tab-separated, a header line first, each row on one line)."""
    if how == "json":
        import orjson

        rows = [dict(zip(result.columns, r)) for r in result.rows]
        text = orjson.dumps(rows, default=str, option=orjson.OPT_INDENT_2).decode() + "\n"
        return json_safe(text)
    out = io.StringIO()
    if how == "csv":
        w = csv.writer(out, lineterminator="\n")
        w.writerow(result.columns)
        w.writerows(result.rows)
    else:
        for r in (result.columns, *result.rows):
            out.write("\t".join("" if v is None else str(v).translate(_TEXT_ESCAPES) for v in r) + "\n")
    return out.getvalue()


def _refuse_file_readers(con: duckdb.DuckDBPyConnection, query: str) -> None:
    """Refuse `query` if it calls a table function outside TABLE_FUNCTIONS, or names a file as a table."""
    try:
        tree = json.loads(con.execute("SELECT json_serialize_sql(?)", [query]).fetchone()[0])
    except duckdb.Error as exc:
        raise QueryError(str(exc).splitlines()[0]) from None
    if tree.get("error"):
        raise QueryError(tree.get("error_message") or "the query could not be read")
    nodes = [tree]
    while nodes:
        node = nodes.pop()
        if isinstance(node, list):
            nodes.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        kind = node.get("type")
        if kind == "TABLE_FUNCTION":
            name = str((node.get("function") or {}).get("function_name", "")).lower()
            if name not in TABLE_FUNCTIONS:
                raise QueryError(f"{name}() is not allowed here: the SQL box reads the corpus tables only")
        elif kind == "BASE_TABLE" and any(c in str(node.get("table_name", "")) for c in "./\\"):
            raise QueryError(f"{node['table_name']!r} is a file name: the SQL box reads the corpus tables only")
        nodes.extend(node.values())
