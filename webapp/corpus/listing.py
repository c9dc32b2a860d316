"""The index page's list read from the index: filtered and paged in the database, never by
opening the files."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..core.agents import order_sql
from ..core.agents.pi import version_of
from ..core.catalog import SessionSummary
from .text import match_query, matching_files

PAGE = 200  # sessions on one page of the index


def _created_sql(column: str) -> str:
    """The column as the agents write a time (JavaScript's `toISOString`: milliseconds and `Z`),
    which is what `ls` shows from a session's header, made by DuckDB."""
    return f"strftime({column}, '%Y-%m-%dT%H:%M:%S.%g') || 'Z'"


def _modified_sql(column: str) -> str:
    """The column to the second with its UTC offset, as `ls` shows a file's mtime."""
    return f"strftime({column}, '%Y-%m-%dT%H:%M:%S') || '+00:00'"


# (DuckDB's strftime of NULL is NULL: a session without a time has none)
_COLUMNS = (f"file, session_id, name, first_message, cwd, {_created_sql('created')}, {_modified_sql('modified')}, "
            "size, entries, leaves, compactions, bad_lines, problems, format, warnings")


@dataclass
class Listing:
    rows: list[tuple[str, SessionSummary | None, str | None]]  # (file, summary, error)
    total: int
    page: int
    pages: int

    def dicts(self) -> list[dict]:
        """The rows as `ls --json` prints them, each `path` the file as the index names it."""
        return [{**s.as_dict(), "path": f} if s else {"path": f, "error": e} for f, s, e in self.rows]


def _summary(r: tuple) -> SessionSummary:
    file, sid, name, first, cwd, created, modified, size, entries, leaves, comp, bad, problems, fmt, warnings = r
    return SessionSummary(path=file, id=sid, name=name, first_message=first, cwd=cwd, created=created,
                          modified=modified, size=size, entries=entries, leaves=leaves, compactions=comp,
                          bad_lines=bad, problems=problems, version=version_of(fmt), format=fmt, warnings=warnings)


def content_matches(text_db: Path, query: str) -> list[str]:
    """The files whose text holds every word of `query` (the last one as a prefix: a word being typed)."""
    match = match_query(query)
    if match is None:
        return []
    if match.endswith('"'):
        match += "*"
    con = sqlite3.connect(f"file:{text_db}?mode=ro", uri=True)
    try:
        return matching_files(con, match)
    except sqlite3.OperationalError:  # an index not built yet
        return []
    finally:
        con.close()


def list_sessions(cur: duckdb.DuckDBPyConnection, text_db: Path, root: Path, query: str = "",
                  page: int = 1, per_page: int = PAGE) -> Listing:
    """The sessions under `root` (and the files that failed), those matching `query` only: in
    their name, first message, folder, id or file name, or anywhere in their text."""
    prefix = str(root).rstrip("/") + "/"
    where, params = ["starts_with(file, ?)"], [prefix]
    if query:
        like = "%" + query.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        fields = ("name", "first_message", "cwd", "session_id", "substr(file, ?)")
        cond = " OR ".join(f"lower({f}) LIKE ? ESCAPE '\\'" for f in fields)
        params += [like] * 4 + [len(prefix) + 1, like]
        found = content_matches(text_db, query)
        where.append(f"({cond} OR file IN (SELECT unnest(?::VARCHAR[])))")
        params.append(found)
    sql_where = " AND ".join(where)
    total = cur.execute(f"SELECT count(*) FROM sessions WHERE {sql_where}", params).fetchone()[0]
    failed_where = "starts_with(file, ?) AND error IS NOT NULL" + (
        " AND lower(substr(file, ?)) LIKE ? ESCAPE '\\'" if query else "")
    failed_params = [prefix] + ([len(prefix) + 1, like] if query else [])
    failed = cur.execute(f"SELECT file, error FROM files WHERE {failed_where} ORDER BY file", failed_params).fetchall()
    pages = max(1, -(-(total + len(failed)) // per_page))
    page = min(max(page, 1), pages)
    rows = cur.execute(
        f"SELECT {_COLUMNS} FROM sessions WHERE {sql_where} "
        f"ORDER BY {order_sql('agent')}, coalesce(cwd, ''), file LIMIT ? OFFSET ?",
        params + [per_page, (page - 1) * per_page]).fetchall()
    out = [(r[0], _summary(r), None) for r in rows]
    if page == pages:
        out += [(f, None, e) for f, e in failed]
    return Listing(out, total + len(failed), page, pages)
