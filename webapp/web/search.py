"""Search routes: the Search tab of a session, and what the index page's filter asks of every
file. Indexes live here, one per file, and are brought up to date on each search."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from ..core.entries import Entry
from ..core.errors import SessionError
from ..core.search import FileIndex, SessionIndex, Snippet, searchable_text, snippet
from ..core.storage import JsonlStorage
from ..core.transcript import branch_name, descend
from ..core.tree import SessionTree
from .store import LRU

RESULTS = 50  # hits listed; the count says how many there are in all

_session_indexes = LRU(16)  # path -> SessionIndex (big sessions: keep a few)
_file_indexes = LRU(1024)  # path -> FileIndex, for the index page
_lock = threading.Lock()


def _cached(cache: LRU, path: Path, make):
    with _lock:
        index = cache.get(path)
        if index is None:
            index = make()
            cache.put(path, index)
        return index


def session_index(path: Path, tree: SessionTree) -> SessionIndex:
    index = _cached(_session_indexes, path, SessionIndex)
    with _lock:
        index.update(tree.entries)
    return index


def file_matches(path: Path, query: str) -> bool:
    """Whether the session file mentions `query` anywhere (what the index page filter asks)."""
    index = _cached(_file_indexes, path, FileIndex)
    with _lock:
        try:
            index.update(JsonlStorage(path))
        except (OSError, SessionError):  # gone or unreadable since it was listed: no match
            return False
        return index.matches(query)


@dataclass
class Hit:
    entry: Entry
    snippet: Snippet | None
    leaf: str  # the tip the result's branch leads to (its transcript opens there)
    branch: str  # that branch, as people name it
    on_active: bool


def search_session(path: Path, tree: SessionTree, query: str) -> tuple[list[Hit], int]:
    ids, total = session_index(path, tree).find(query, RESULTS)
    active = tree.path_ids(tree.active_leaf) if tree.active_leaf else set()
    hits = []
    for entry_id in ids:
        e = tree.by_id[entry_id]
        text = searchable_text(e.raw) + ("\n" + tree.labels[entry_id] if entry_id in tree.labels else "")
        leaf = descend(tree, entry_id, active)
        hits.append(Hit(e, snippet(text, query), leaf, branch_name(tree, leaf, 60), entry_id in active))
    return hits, total


def search_context(path: Path, tree: SessionTree, query: str) -> dict:
    """What the Search tab shows."""
    query = query.strip()
    hits, total = search_session(path, tree, query) if query else ([], 0)
    return {"query": query, "hits": hits, "total": total}
