"""The MCP tools' answers across sessions: the list of sessions, a search of their text, the
corpus figures. Each reads the corpus index when there is one (fast on thousands of sessions)
and the files otherwise (`sources.Corpus`), and says which it read."""

from __future__ import annotations

import html
from dataclasses import replace
from pathlib import Path, PurePosixPath

from ..core.catalog import SessionSummary, fold_listing
from ..core.conversations import group
from ..core.storage import fs_name, url_name
from ..web.search import file_matches, search_session
from .reading import MAX_ANSWER, cut
from .sources import Opened, Sources

PER_PAGE = 100  # sessions in one answer of list_sessions
HITS = 20  # hits in one answer of search


def _rel(sources: Sources, file: str) -> str | None:
    """A file the index names, as the tools name it (its path under the root); None when it is
    not among the sessions served (outside `within`)."""
    store = sources.store
    prefix = url_name(str(store.root)).rstrip("/") + "/"
    rel = file[len(prefix):] if file.startswith(prefix) else store.rel(Path(fs_name(file)))
    if store.within and not any(PurePosixPath(fs_name(rel)).is_relative_to(w) for w in store.within):
        return None
    return rel


def _row(rel: str, s: SessionSummary | None, error: str | None) -> str:
    if s is None:
        return f"{rel}  (unreadable: {error})"
    title = " ".join((s.name or s.first_message or "").split())
    return (f"{rel}  {s.source}  {s.entries} entries, {s.leaves} branches  modified {s.modified[:16]}  "
            f"{cut(title, 120)}")


def _source_line(got: Opened | str) -> str:
    if isinstance(got, Opened):
        return "(from the corpus index" + (f"; {got.note}" if got.note else "") + ")"
    return f"(from the files: {got})"


def sessions_text(sources: Sources, query: str = "", page: int = 1) -> str:
    """The sessions under the root (those matching `query` in their name, first message, folder,
    id, file name or text), PER_PAGE at a time."""
    query = query.strip()
    with sources.corpus.opened() as got:
        if isinstance(got, Opened):
            from ..corpus.listing import list_sessions

            listing = list_sessions(got.cursor, got.text_db, sources.store.root, query, page, PER_PAGE)
            rows = [(rel, s, e, [replace(m, rel=_rel(sources, m.rel) or m.rel) for m in members], missing)
                    for f, s, e, members, missing in listing.rows if (rel := _rel(sources, f)) is not None]
            total, page, pages = listing.total, listing.page, listing.pages
        else:
            rows, total, page, pages = _listed_files(sources, query, page)
    head = [f"{total:,} sessions" + (f" matching {query!r}" if query else "") + f", page {page} of {pages} "
            f"{_source_line(got)}; name a session by its path (the first column); the other files of a "
            "conversation across files are listed under its first:"]
    more = [f"[page {page} of {pages}: call list_sessions with page={page + 1} for more]"] if page < pages else []
    return cut("\n".join(head + [line for r in rows for line in _conversation(*r)] + more), MAX_ANSWER)


def _conversation(rel: str, s: SessionSummary | None, error: str | None, members: list, missing: str | None) -> list[str]:
    """A conversation's lines: its first file's row, then each other file's, saying how it goes on."""
    lines = [_row(rel, s, error)]
    if missing:
        lines.append(f"  continues a file that is not here: {cut(missing, 200)}")
    for m in members:
        parent = f" of {PurePosixPath(m.parent).name}" if m.parent else ""
        lines.append(f"  ↳ {m.relation}{parent}: " + _row(m.rel, m.summary, None))
    return lines


def _listed_files(sources: Sources, query: str, page: int) -> tuple[list, int, int, int]:
    rows = sources.store.list()
    total = len(rows)
    if query:
        needle = query.lower()

        def meta(rel: str, s: SessionSummary | None) -> str:
            return " ".join(filter(None, (rel, *(s and (s.name, s.first_message, s.cwd, s.id) or ())))).lower()

        matched = {r[0] for r in rows if needle in meta(r[0], r[1])
                   or (r[1] is not None and file_matches(sources.store.resolve(r[0]), query))}
    rows = fold_listing(rows)
    if query:
        rows = [r for r in rows if r[0] in matched or any(m.rel in matched for m in r[3])]
        total = sum(1 + len(r[3]) for r in rows)
    pages = max(1, -(-len(rows) // PER_PAGE))
    page = min(max(page, 1), pages)
    return rows[(page - 1) * PER_PAGE: page * PER_PAGE], total, page, pages


def search_text(sources: Sources, query: str, offset: int = 0) -> str:
    """The entries holding every word of `query` across the sessions, HITS at a time: each with
    its session, its id, the branch it is on and a snippet."""
    query = query.strip()
    if not query:
        return "give some words to search for"
    with sources.corpus.opened() as got:
        if isinstance(got, Opened):
            lines, more = _indexed_hits(sources, got, query, offset)
        else:
            lines, more = _file_hits(sources, query, offset)
    head = f"hits for {query!r} from {offset + 1} {_source_line(got)}:" if lines else f"no hits for {query!r} {_source_line(got)}"
    tail = [f"[more: call search with offset={offset + HITS}]"] if more else []
    return cut("\n".join([head, *lines, *tail]), MAX_ANSWER)


def _plain(snippet: str) -> str:
    """An index snippet (HTML, matches in <mark>) as text, matches in «»."""
    return " ".join(html.unescape(snippet.replace("<mark>", "«").replace("</mark>", "»")).split())


def _indexed_hits(sources: Sources, got: Opened, query: str, offset: int) -> tuple[list[str], bool]:
    from ..corpus.search import search

    found = search(got.text_db, got.cursor, query, offset=offset, limit=HITS,
                   prefix=url_name(str(sources.store.root)).rstrip("/") + "/")
    if found.problem:
        return [found.problem], False
    lines = []
    for h in found.hits:
        rel = _rel(sources, h.file)
        if rel is not None:
            also = [r for r in (_rel(sources, f) for f in h.also_in) if r is not None]
            lines.append(f"{rel} [{h.entry_id}] {h.role or h.type} (branch {h.leaf_id}: {cut(h.branch, 60)}): "
                         f"{_plain(str(h.snippet))}" + (f" [also in {', '.join(also)}]" if also else ""))
    return lines, found.more


def _file_hits(sources: Sources, query: str, offset: int) -> tuple[list[str], bool]:
    """Hits read from the files, in the listing's order: only the files that mention the words
    are opened. An entry a fork copied is one hit, as the index's search gives it (`corpus.search`):
    its copies in the conversation's later files are named on its line when this page holds it."""
    rows = sources.store.list()
    grouping = group(s.facts(rel) for rel, s, _ in rows if s is not None)
    lines: list[str] = []
    copies: dict[tuple, list[str]] = {}  # (conversation, entry id, time) -> the files holding it
    at: dict[tuple, int] = {}  # (the same) -> its line on this page
    seen = 0
    for rel, summary, _ in rows:
        if summary is None or not file_matches(path := sources.store.resolve(rel), query):
            continue
        tree = sources.store.session(rel).tree
        for hit in search_session(path, tree, query)[0]:
            key = (grouping.first.get(rel, rel), hit.entry.id, hit.entry.instant)
            if key in copies:
                copies[key].append(rel)
                continue
            copies[key] = [rel]
            seen += 1
            if seen <= offset:
                continue
            if len(lines) == HITS:
                return _also_in_lines(lines, copies, at), True
            s = hit.snippet
            text = f"{s.before}«{s.match}»{s.after}" if s else ""
            kind = hit.entry.role if hit.entry.type == "message" else hit.entry.type
            at[key] = len(lines)
            lines.append(f"{rel} [{hit.entry.id}] {kind} (branch {hit.leaf}: {cut(hit.branch, 60)}): {text}")
    return _also_in_lines(lines, copies, at), False


def _also_in_lines(lines: list[str], copies: dict[tuple, list[str]], at: dict[tuple, int]) -> list[str]:
    """`lines` with the other files holding each one's entry named on it."""
    for key, n in at.items():
        if len(copies[key]) > 1:
            lines[n] += f" [also in {', '.join(copies[key][1:])}]"
    return lines


def figures_text(sources: Sources) -> str:
    """The corpus figures (the corpus page's): totals; cost and tokens by model, project, agent
    and week; the sessions with most branches; compaction scores; tool error rates; branch
    outcomes by model."""
    from ..corpus.figures import corpus_figures

    with sources.corpus.opened() as got:
        if not isinstance(got, Opened):
            return f"the corpus figures are read from the corpus index, and there is none: {got}"
        fig = corpus_figures(got.cursor, url_name(str(sources.store.root)).rstrip("/") + "/")
    sessions, entries, cost, tokens_in, tokens_out = fig.totals
    lines = [f"{sessions:,} sessions, {entries:,} entries, cost ${cost or 0:.2f}, "
             f"{tokens_in or 0:,} input and {tokens_out or 0:,} output tokens" + (f" ({got.note})" if got.note else "")]
    if fig.costs:  # (what the page says of it: recorded by the sessions, or computed from a named table)
        c = fig.costs
        lines.append(f"cost: ${c.recorded:.2f} recorded by the sessions, ${c.computed:.2f} computed from {c.table}"
                     + (f"; {c.unpriced_tokens:,} tokens of models with no price ({', '.join(c.unpriced_models)})"
                        if c.unpriced_tokens else ""))

    def table(title: str, rows, cells) -> None:
        if rows:
            lines.append(title)
            lines.extend("  " + cells(*r) for r in rows)

    money = lambda v: f"${v or 0:.2f}"  # noqa: E731
    table("by model (cost, input, output tokens, replies):", fig.by_model,
          lambda m, c, i, o, n, *_: f"{m}: {money(c)}, {i:,}, {o:,}, {n:,}")
    table("by project (cost, input, output tokens, sessions):", fig.by_project,
          lambda p, c, i, o, n, *_: f"{p}: {money(c)}, {i or 0:,}, {o or 0:,}, {n:,}")
    table("by agent (cost, input, output tokens, sessions):", fig.by_agent,
          lambda a, c, i, o, n, *_: f"{a}: {money(c)}, {i or 0:,}, {o or 0:,}, {n:,}")
    table("by week (cost, input, output tokens):", fig.by_week,
          lambda w, c, i, o, *_: f"{w}: {money(c)}, {i:,}, {o:,}")
    table("most branches:", fig.most_branches, lambda f, t, n: f"{_rel(sources, f) or f}: {n} branches ({cut(t, 80)})")
    table("compactions with the lowest audit scores (file, entry, kind, score, facts missing of):", fig.summaries,
          lambda f, e, k, s, m, n, *_: f"{_rel(sources, f) or f} [{e}] {k}: {s if s is not None else '-'}, {m} of {n}")
    table("tool errors (calls, errors, rate):", fig.tool_errors, lambda t, c, e, r: f"{t}: {c:,}, {e:,}, {r:.0%}")
    table("branch outcomes by model:", fig.outcomes,
          lambda m, by: f"{m}: " + ", ".join(f"{s} {n}" for s, n in sorted(by.items())))
    return cut("\n".join(lines), MAX_ANSWER)
