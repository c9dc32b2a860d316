"""Search across every session: the text index's ranked hits (SQLite FTS5's bm25), filtered by
agent, project, model, date, role and whether the text is a tool's output, each with its
session, the branch it is on and a highlighted snippet.

An entry is one hit however many files of its conversation hold it: a fork (pi's `/fork`, Claude
Code's `/branch` and `--fork-session`) copies the entries it goes on from into its own file with
their ids, so that a word said once before a fork would be listed once per file. The hit is the
copy found first (best ranked, the earliest written among equals; or the latest), and names the
conversation's other files that hold the entry (`Hit.also_in`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from itertools import islice
from pathlib import Path

import duckdb
import orjson
from markupsafe import Markup, escape

from .snippets import phrases_of, snippet
from .text import MAX_TERMS, Error, connect, match_query, query_terms

HITS = 30  # on one page of results
# Past this many matching entries, bm25 (which scores every match before it can sort) costs more
# than a page may wait (0.5 s for 37,000 common-word matches on this machine): the hits are then
# the latest indexed ones, and the page says so.
RANKED = 5_000
_OPEN, _CLOSE = "\x02", "\x03"  # around a match in a snippet, before it is escaped
_UNMARKED = str.maketrans("", "", _OPEN + _CLOSE)


@dataclass
class Filters:
    agent: str = ""
    project: str = ""  # a part of the project's folder
    model: str = ""
    role: str = ""
    since: date | None = None
    until: date | None = None
    tool_output: str = ""  # "", "only" or "none"

    def clauses(self) -> tuple[list[str], list]:
        where, params = [], []
        for column in ("agent", "model", "role"):
            if getattr(self, column):
                where.append(f"{'doc_files' if column == 'agent' else 'docs'}.{column} = ?")
                params.append(getattr(self, column))
        if self.project:
            where.append("instr(lower(doc_files.project), ?) > 0")
            params.append(self.project.lower())
        if self.since:
            where.append("docs.time >= ?")
            params.append(self.since.isoformat())
        if self.until:
            where.append("docs.time < date(?, '+1 day')")
            params.append(self.until.isoformat())
        if self.tool_output in ("only", "none"):
            where.append("docs.tool_output = ?")
            params.append(1 if self.tool_output == "only" else 0)
        return where, params

    @property
    def active(self) -> bool:
        return any((self.agent, self.project, self.model, self.role, self.since, self.until, self.tool_output))


@dataclass
class Hit:
    file: str
    entry_id: str
    leaf_id: str | None
    role: str | None
    type: str | None
    model: str | None
    time: str | None
    agent: str
    project: str
    snippet: Markup
    title: str = ""  # the session's name or first message
    branch: str = ""  # the branch's label or last prompt
    text: str = ""  # the snippet as plain text (what a terminal shows)
    also_in: list[str] = field(default_factory=list)  # the conversation's other files holding the entry

    def as_dict(self) -> dict:
        """The hit as `session-tree search --json` prints it (`path`, `alsoIn`: files as the index
        names them)."""
        return {"path": self.file, "entryId": self.entry_id, "leafId": self.leaf_id, "role": self.role,
                "type": self.type, "model": self.model, "time": self.time, "agent": self.agent,
                "project": self.project, "title": self.title, "branch": self.branch, "snippet": self.text,
                "alsoIn": self.also_in}


@dataclass
class Results:
    query: str
    hits: list[Hit] = field(default_factory=list)
    more: bool = False  # another page of hits follows
    problem: str | None = None
    matches: int = 0  # entries holding every word, before the filters
    ranked: bool = True  # best first (else the latest first: too many to rank)
    words_left: int = 0  # words past the first `max_terms`, not searched
    max_terms: int = MAX_TERMS


def highlight(cut: str) -> Markup:
    """A snippet (`snippets.snippet`), escaped, with its matches marked."""
    return Markup(str(escape(cut)).replace(_OPEN, "<mark>").replace(_CLOSE, "</mark>"))


def search(text_db: Path, cur: duckdb.DuckDBPyConnection, query: str, filters: Filters | None = None,
           offset: int = 0, limit: int = HITS, prefix: str = "") -> Results:
    """The best hits for `query` (every word in an entry), best first, from `offset` on; only
    under `prefix` (a root's path) when given."""
    out = Results(query)
    out.words_left = max(0, len(query_terms(query)) - MAX_TERMS)
    match = match_query(query)
    if match is None:
        return out
    where, params = (filters or Filters()).clauses()
    if prefix:
        where.append("substr(doc_files.file, 1, ?) = ?")
        params += [len(prefix), prefix]
    con = connect(text_db, read_only=True)
    try:
        out.matches = con.execute("SELECT count(*) FROM body WHERE body MATCH ?", (match,)).fetchone()[0]
        out.ranked = out.matches <= RANKED
        # (copies of an entry rank as equals: the one written first, indexed first, comes first)
        order = "bm25(body), body.rowid" if out.ranked else "body.rowid DESC"
        sql = (f"SELECT doc_files.file, docs.entry_id, docs.leaf_id, docs.role, docs.type, docs.model, docs.time, "
               f"doc_files.agent, doc_files.project, docs.line "
               f"FROM body JOIN docs ON docs.id = body.rowid JOIN doc_files ON doc_files.id = docs.file_id "
               f"WHERE body MATCH ? "
               f"{''.join(' AND ' + w for w in where)} ORDER BY {order}")
        # (from the first hit on, whatever the page: which copies an earlier page showed is known so)
        found = con.execute(sql, [match, *params])
        conversations: dict[str, str] = {}  # file -> its conversation (its first file)
        rows = _each_once(cur, found, offset + limit + 1, conversations)[offset:]
        found.close()  # (the rows after those are never read)
        out.more = len(rows) > limit
        rows = rows[:limit]
        also_in = _also_in(con, cur, [(r[0], r[1], r[6]) for r in rows], conversations, prefix)
    except Error as exc:
        out.problem = f"the search could not run ({exc})"
        return out
    finally:
        con.close()
    texts = _texts(cur, [(r[0], r[1], r[9]) for r in rows])
    phrases = phrases_of(query_terms(query)[:MAX_TERMS])
    cut = [snippet(texts.get((r[0], r[1], r[9]), ""), phrases, (_OPEN, _CLOSE), "…") for r in rows]
    out.hits = [Hit(*r[:9], snippet=highlight(s), text=" ".join(s.translate(_UNMARKED).split()), also_in=also)
                for r, s, also in zip(rows, cut, also_in)]
    _name_them(cur, out.hits)
    return out


def _each_once(cur: duckdb.DuckDBPyConnection, rows: Iterable[tuple], wanted: int,
               conversations: dict[str, str]) -> list[tuple]:
    """The first `wanted` of `rows` (the text index's hits in order: file, entry id, …, time at
    6), each entry of a conversation once: a row whose conversation (its first file, in the
    tables) already had a row with the same id and time is a copy of it. The rows are read a
    little at a time (a page asks for 31, most of a common word's are never read), and each
    file's conversation is asked of the tables once (kept in `conversations`). A file the tables
    do not know yet (its build under way) is a conversation of its own."""
    seen: set[tuple] = set()
    out: list[tuple] = []
    rows = iter(rows)
    step = wanted
    while len(out) < wanted:
        chunk = list(islice(rows, step))
        if not chunk:
            break
        step *= 2
        new = sorted({r[0] for r in chunk} - conversations.keys())
        if new:
            conversations.update({f: f for f in new})
            conversations.update((f, c) for f, c in cur.execute(
                "SELECT file, conversation FROM sessions WHERE file IN (SELECT unnest(?::VARCHAR[])) "
                "AND conversation IS NOT NULL", [new]).fetchall())
        for r in chunk:
            key = (conversations[r[0]], r[1], r[6])
            if key not in seen:
                seen.add(key)
                out.append(r)
                if len(out) == wanted:
                    break
    return out


def _also_in(con, cur: duckdb.DuckDBPyConnection, hits: list[tuple[str, str, str | None]],
             conversations: dict[str, str], prefix: str) -> list[list[str]]:
    """For each (file, entry id, time) of `hits`: the other files of its conversation (under
    `prefix`) whose text holds the same entry, in the order the conversation's files were made.
    Asked of the text index by file (its `docs_file` index), for the hits' conversations alone
    (`conversations`: each hit's file's, as `_each_once` found them)."""
    out: list[list[str]] = [[] for _ in hits]
    if not hits:
        return out
    members = cur.execute(
        "SELECT conversation, file FROM sessions WHERE conversation IN (SELECT unnest(?::VARCHAR[])) "
        "ORDER BY created NULLS LAST, file", [sorted({conversations[h[0]] for h in hits})]).fetchall()
    files_of: dict[str, list[str]] = {}
    conversation_of: dict[str, str] = {}
    for conversation, file in members:
        if file.startswith(prefix):
            files_of.setdefault(conversation, []).append(file)
            conversation_of[file] = conversation
    wanted = {h for h in hits if len(files_of.get(conversation_of.get(h[0], ""), ())) > 1}
    if not wanted:
        return out
    others = sorted({f for h in wanted for f in files_of[conversation_of[h[0]]]})
    ids = sorted({h[1] for h in wanted})
    held: set[tuple[str, str, str | None]] = set()
    for start in range(0, len(others), 400):  # (SQLite takes at most 32,766 parameters)
        part = others[start:start + 400]
        held.update(con.execute(
            f"SELECT doc_files.file, docs.entry_id, docs.time FROM doc_files JOIN docs ON docs.file_id = doc_files.id "
            f"WHERE doc_files.file IN ({', '.join('?' * len(part))}) "
            f"AND docs.entry_id IN (SELECT value FROM json_each(?))", [*part, orjson.dumps(ids).decode()]))
    for i, h in enumerate(hits):
        if h in wanted:
            out[i] = [f for f in files_of[conversation_of[h[0]]] if f != h[0] and (f, h[1], h[2]) in held]
    return out


def _texts(cur: duckdb.DuckDBPyConnection, where: list[tuple[str, str, int]]) -> dict[tuple[str, str, int], str]:
    """The text of the entries (file, entry id, line) of `where`, from the tables (the text index
    keeps none: `snippets.py`). A line alone does not name an entry: a Claude Code session's
    sub-agents are read with it, their lines numbered in their own files. A build commits an
    entry's text before the text index takes its words (`text_writes.py`), so that every hit has
    its text. The rows are found first without their text, then their text read by rowid:
    filtered in one pass, the database read the text of every row it looked at (0.32 s for a page
    of 30 hits in as many files at 10,000 sessions, 10 ms so)."""
    if not where:
        return {}
    wanted = set(where)
    files = sorted({f for f, _, _ in wanted})
    lines = sorted({n for _, _, n in wanted})
    # (found by file and line, the entry picked here: its id in the filter took the page of 30
    # hits for a word a thousand entries hold from 0.18 to 0.31 s)
    return {(f, e, n): t or "" for f, e, n, t in cur.execute(
        "WITH r AS MATERIALIZED (SELECT rowid AS rid FROM entries WHERE file IN (SELECT unnest(?::VARCHAR[])) "
        "AND line IN (SELECT unnest(?::INTEGER[]))) "
        "SELECT file, entry_id, line, text FROM entries WHERE rowid IN (SELECT rid FROM r)", [files, lines]).fetchall()
        if (f, e, n) in wanted}


def _name_them(cur: duckdb.DuckDBPyConnection, hits: list[Hit]) -> None:
    """Each hit's session title and branch name, from the tables."""
    if not hits:
        return
    files = sorted({h.file for h in hits})
    titles = dict(cur.execute("SELECT file, coalesce(name, first_message, '') FROM sessions "
                              "WHERE file IN (SELECT unnest(?::VARCHAR[]))", [files]).fetchall())
    leaves = {(f, leaf): (label or last or "") for f, leaf, label, last in cur.execute(
        "SELECT file, leaf_id, label, last_user FROM branches WHERE file IN (SELECT unnest(?::VARCHAR[]))",
        [files]).fetchall()}
    for h in hits:
        h.title = titles.get(h.file) or h.file.rsplit("/", 1)[-1]
        h.branch = leaves.get((h.file, h.leaf_id), "")


def choices(cur: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """What the filters offer: the agents, models and roles the index holds."""
    def values(sql: str) -> list[str]:
        return [r[0] for r in cur.execute(sql).fetchall() if r[0]]
    return {
        "agents": values("SELECT DISTINCT agent FROM sessions ORDER BY 1"),
        "models": values("SELECT DISTINCT model FROM entries WHERE model IS NOT NULL ORDER BY 1"),
        "roles": values("SELECT DISTINCT role FROM entries WHERE role IS NOT NULL ORDER BY 1"),
    }
