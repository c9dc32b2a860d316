"""Search routes: the Search tab of a session, and what the index page's filter asks of every
file. Indexes live here, one per file, and are brought up to date on each search."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

from ..core.errors import SessionError
from ..core.search import FileIndex, Hit, SessionIndex, file_mentions, session_hits
from ..core.storage import JsonlStorage
from ..core.tree import SessionTree
from .store import LRU

RESULTS = 50  # hits listed; the count says how many there are in all

_session_indexes = LRU(16)  # path -> SessionIndex (big sessions: keep a few)
# The index page's filter keeps each file's text to answer the next filter quickly, up to
# FILE_TEXT_CHARS in all (the least recently asked are let go of first); a file bigger than a
# quarter of that is read through for each filter and kept nowhere: 294 MB of files kept 300 MB.
FILE_TEXT_CHARS = 32 * 1024 * 1024
_file_indexes: OrderedDict[Path, FileIndex] = OrderedDict()
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
    with _lock:
        try:
            storage = JsonlStorage(path)
            if storage.size() > FILE_TEXT_CHARS // 4:
                _file_indexes.pop(path, None)
                return file_mentions(storage, query)
            index = _file_indexes.pop(path, None) or FileIndex()
            index.update(storage)
        except (OSError, SessionError):  # gone or unreadable since it was listed: no match
            return False
        _file_indexes[path] = index  # (the most recently asked last)
        total = sum(i.size for i in _file_indexes.values())
        while total > FILE_TEXT_CHARS and len(_file_indexes) > 1:
            total -= _file_indexes.popitem(last=False)[1].size
        return index.matches(query)


def file_text_held() -> int:
    """Characters of file text the index page's filter keeps."""
    with _lock:
        return sum(i.size for i in _file_indexes.values())


def search_session(path: Path, tree: SessionTree, query: str) -> tuple[list[Hit], int]:
    return session_hits(tree, session_index(path, tree), query, RESULTS)


def search_context(path: Path, tree: SessionTree, query: str) -> dict:
    """What the Search tab shows."""
    query = query.strip()
    hits, total = search_session(path, tree, query) if query else ([], 0)
    return {"query": query, "hits": hits, "total": total}
