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


# The table functions a query may call: none of them reads a file (`read_blob`, `read_text`,
# `glob`, `read_csv`, … do, and `query`/`query_table` run SQL of their own).
TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest", "duckdb_tables", "duckdb_columns",
                             "duckdb_views", "duckdb_types", "duckdb_functions", "pragma_table_info"})


class QueryError(Exception):
    """A query refused or failed: the message says why."""


class IndexUnavailable(QueryError, SessionError):
    """The index database at `path` cannot be opened: process `pid` writes it (None: another
    reason). A command asks that process when it is a server (`holder.py`)."""

    def __init__(self, message: str, path: Path, pid: int | None):
        super().__init__(message)
        self.path, self.pid = path, pid


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


def run_query(con: duckdb.DuckDBPyConnection, query: str, limit: int | None = ROW_CAP,
              seconds: float = SECONDS, params: list | None = None) -> QueryResult:
    """Run `query` (with `params`) if it is one SELECT; stop it after `seconds`; keep its first
    `limit` rows (None: all of them)."""
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
        cur.execute(query, params or None)
        columns = [d[0] for d in cur.description or ()]
        rows = cur.fetchall() if limit is None else cur.fetchmany(limit + 1)
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
    return QueryResult(columns, rows[:limit], limit is not None and len(rows) > limit)


# JSON escapes the C0 controls, not DEL and the C1 controls (U+0080-U+009F), which a terminal may
# obey as it does ESC. Written as JSON escapes, the document still reads back the same values
# (the C0 controls too, for a JSON text that came from elsewhere: a server's answer).
_JSON_CONTROLS = {c: f"\\u{c:04x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if chr(c) not in "\t\n\r"}


def json_safe(text: str) -> str:
    """A JSON text with no control character left raw (whitespace aside)."""
    return text.translate(_JSON_CONTROLS)


def format_result(result: QueryResult, how: str) -> str:
    """The rows as `session-tree sql` prints them: `json` (one object a row), `csv`, or `text`
    (tab-separated, a header line first)."""
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
            out.write("\t".join("" if v is None else str(v) for v in r) + "\n")
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
