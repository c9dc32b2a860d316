"""`session-tree search QUERY [FILE|ROOT] [--limit N] [--json]`: the entries that mention QUERY,
in one session (every entry's text, as the Search tab finds them, in file order) or in every
session under ROOT (default: the home folder's agents), ranked, from the corpus index brought up
to date first (or from the server that holds it), as the index page's search finds them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..core.entries import short_id
from ..core.private import private_umask
from ..core.search import SessionIndex, session_hits
from ..core.session import Session
from ..core.storage import fs_name
from ..corpus.db import Index, IndexUnavailable
from ..corpus.search import search
from ..corpus.text import text_path
from .args import whole_number
from .corpus import from_holder, written
from .output import one_line, path_text, print_json, shown, title_line


MAX_HITS = 10_000  # a page of hits a person reads, or a script pages through with a query of its own


def cmd_search(args) -> int:
    where = args.where or Path.home()
    if where.is_file():
        return _search_session(args, where)
    with private_umask():  # (what the index creates is the user's alone, as `index` makes it)
        return _search_corpus(args, where)


def _search_session(args, path: Path) -> int:
    tree = Session.open(path).tree
    index = SessionIndex()
    index.update(tree.entries)
    hits, total = session_hits(tree, index, args.query, args.limit)
    if args.json:
        print_json([{"entryId": h.entry.id, "type": h.entry.type, "role": h.entry.role, "leafId": h.leaf,
                     "branch": h.branch, "onActivePath": h.on_active,
                     "snippet": "".join((h.snippet.before, h.snippet.match, h.snippet.after)) if h.snippet else ""}
                    for h in hits])
    else:
        for h in hits:
            text = "".join((h.snippet.before, h.snippet.match, h.snippet.after)) if h.snippet else ""
            print(f"{'*' if h.on_active else ' '} {short_id(h.entry.id)} {h.entry.role or h.entry.type}  "
                  f"[{one_line(h.branch)}]  {one_line(text)}")
    _say_count(args, len(hits), total, path_text(path))
    return 0


def _search_corpus(args, asked: Path) -> int:
    root = asked.resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"{asked}: no such session file or folder")
    prefix = str(root).rstrip(os.sep) + os.sep
    try:
        index = Index(args.db)
    except IndexUnavailable as held:  # a server writes it: that server searches
        got = from_holder(held, lambda client, holder: client.searched(holder, root, args.query, args.limit))
    else:
        with written(index):
            index.build([root])
            found = search(text_path(index.path), index.cursor(), args.query, limit=args.limit, prefix=prefix)
        got = {"hits": [h.as_dict() for h in found.hits], "more": found.more, "problem": found.problem}
    if got["problem"]:
        raise OSError(got["problem"])
    rows = got["hits"]
    for r in rows:  # (under ROOT as it was typed, as `ls` shows it)
        r["path"] = path_text(asked / fs_name(r["path"])[len(prefix):])
        r["alsoIn"] = [path_text(asked / fs_name(f)[len(prefix):]) for f in r.get("alsoIn", ())]
    if args.json:
        print_json(rows)
    else:
        for r in rows:
            print(f"{r['path']} {short_id(r['entryId'])} {r['role'] or r['type']}  {shown(r['time'])}  "
                  f"{title_line(r['title'])}\n    {one_line(r['snippet'])}")
            if r["alsoIn"]:
                n = len(r["alsoIn"])
                print(f"    also in {n} other file{'s' if n > 1 else ''} of this conversation: " + ", ".join(r["alsoIn"]))
    _say_count(args, len(rows), len(rows) + 1 if got["more"] else len(rows), path_text(asked))
    return 0


def _say_count(args, shown_hits: int, total: int, where: str) -> None:
    """On stderr: that nothing matches, or that --limit left hits out."""
    if not total:
        print(f"session-tree: no entry mentions {args.query!r} in {where}", file=sys.stderr)
    elif shown_hits < total:
        print(f"session-tree: the first {shown_hits:,} hits shown; more follow (--limit)", file=sys.stderr)


def register(command) -> None:
    sp = command("search", cmd_search, file=False)
    sp.add_argument("query", metavar="QUERY", help="words to find (in one session: this text, in any case)")
    sp.add_argument("where", metavar="FILE|ROOT", type=Path, nargs="?",
                    help="a session .jsonl file, or a folder of sessions (default: the home folder's agents)")
    sp.add_argument("--limit", type=whole_number(1, MAX_HITS), default=50,
                    help=f"at most this many hits (default 50, at most {MAX_HITS:,})")
    sp.add_argument("--db", metavar="PATH", type=Path, help="for a folder: the index's database file")
    sp.add_argument("--json", action="store_true")
