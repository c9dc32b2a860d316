"""The index page's list read from the index: filtered and paged in the database, never by
opening the files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..core.agents import order_sql
from ..core.agents.pi import version_of
from ..core.catalog import Member, SessionSummary
from ..core.conversations import relation
from .text import Error, connect, match_query, matching_files

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
            "size, entries, leaves, compactions, bad_lines, problems, format, warnings, link_kind, link_field, "
            "link_names, root_id, parent_file")


@dataclass
class Listing:
    # One row per conversation across files: (file, summary, error, its other files, what its
    # first file names that is not here); a file alone is a conversation of one.
    rows: list[tuple[str, SessionSummary | None, str | None, list[Member], str | None]]
    total: int  # session files in the conversations listed
    page: int
    pages: int
    conversations: int = 0

    def dicts(self) -> list[dict]:
        """Every file as `ls --json` prints it (a conversation's first file, then its others),
        each `path` the file as the index names it."""
        out = []
        for f, s, e, members, _ in self.rows:
            out.append({**s.as_dict(), "path": f} if s else {"path": f, "error": e})
            out.extend({**m.summary.as_dict(), "path": m.rel} for m in members)
        return out


def _summary(r: tuple) -> SessionSummary:
    (file, sid, name, first, cwd, created, modified, size, entries, leaves, comp, bad, problems, fmt, warnings,
     link_kind, link_field, link_names, root, _parent) = r
    return SessionSummary(path=file, id=sid, name=name, first_message=first, cwd=cwd, created=created,
                          modified=modified, size=size, entries=entries, leaves=leaves, compactions=comp,
                          bad_lines=bad, problems=problems, version=version_of(fmt), format=fmt, warnings=warnings,
                          link_kind=link_kind, link_field=link_field, link_names=link_names, root_id=root)


def _missing(r: tuple) -> str | None:
    """What a row's link names when the file it names is not indexed."""
    link_kind, link_field, link_names, _root, parent = r[15:20]
    if link_names is None or parent is not None:
        return None
    return f"{link_field} {link_names}" if link_field else link_names


def content_matches(text_db: Path, query: str) -> list[str]:
    """The files whose text holds every word of `query` (the last one as a prefix: a word being typed)."""
    match = match_query(query)
    if match is None:
        return []
    if match.endswith('"'):
        match += "*"
    try:
        con = connect(text_db, read_only=True)
    except Error:  # an index not built yet
        return []
    try:
        return matching_files(con, match)
    except Error:  # (its tables not made yet)
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
    if query:  # the conversations one of whose files matches, each listed by its first file
        heads = f"file IN (SELECT DISTINCT coalesce(conversation, file) FROM sessions WHERE {sql_where})"
        head_params = params
        conversations, total = cur.execute(
            f"SELECT count(DISTINCT coalesce(conversation, file)), count(*) FROM sessions "
            f"WHERE coalesce(conversation, file) IN (SELECT DISTINCT coalesce(conversation, file) "
            f"FROM sessions WHERE {sql_where})", params).fetchone()
    else:  # every conversation: each first file under the root (one whose first file is not: itself)
        heads = "starts_with(file, ?) AND (conversation IS NULL OR conversation = file OR NOT starts_with(conversation, ?))"
        head_params = [prefix, prefix]
        conversations, total = cur.execute(
            f"SELECT count(*) FILTER (WHERE {heads}), count(*) FROM sessions WHERE {sql_where}",
            head_params + params).fetchone()
    failed_where = "starts_with(file, ?) AND error IS NOT NULL" + (
        " AND lower(substr(file, ?)) LIKE ? ESCAPE '\\'" if query else "")
    failed_params = [prefix] + ([len(prefix) + 1, like] if query else [])
    failed = cur.execute(f"SELECT file, error FROM files WHERE {failed_where} ORDER BY file", failed_params).fetchall()
    pages = max(1, -(-(conversations + len(failed)) // per_page))
    page = min(max(page, 1), pages)
    rows = cur.execute(
        f"SELECT {_COLUMNS} FROM sessions WHERE {heads} "
        f"ORDER BY {order_sql('agent')}, coalesce(cwd, ''), file LIMIT ? OFFSET ?",
        head_params + [per_page, (page - 1) * per_page]).fetchall()
    members = _members(cur, [r[0] for r in rows])
    out = [(r[0], _summary(r), None, members.get(r[0], []), _missing(r)) for r in rows]
    if page == pages:
        out += [(f, None, e, [], None) for f, e in failed]
    return Listing(out, total + len(failed), page, pages, conversations)


def _members(cur: duckdb.DuckDBPyConnection, heads: list[str]) -> dict[str, list[Member]]:
    """The other files of the conversations whose first files are `heads`, each conversation's in
    the order they were made."""
    if not heads:
        return {}
    out: dict[str, list[Member]] = {}
    # (list_contains: half the time of `IN (SELECT unnest(...))` at 10,000 sessions)
    for r in cur.execute(f"SELECT {_COLUMNS}, conversation FROM sessions WHERE file <> conversation "
                         f"AND list_contains(?::VARCHAR[], conversation) ORDER BY created, file", [heads]).fetchall():
        s = _summary(r[:-1])
        out.setdefault(r[-1], []).append(Member(r[0], s, relation(s.link_kind, True), r[19], _missing(r)))
    return out
