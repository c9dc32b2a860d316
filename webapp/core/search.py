"""Full-text search over everything a session holds: message text, thinking, tool arguments and
results, summaries, labels, custom data.

An index is the lower-cased text of every entry joined into one string, with where each entry
starts: a search is a few `str.find` calls (C speed) and a bisect per hit, and growing the file
only indexes what was appended. `SessionIndex` follows a parsed session (hits are entry ids);
`FileIndex` reads a file on its own, from the offset it last reached (hits say "it matches"),
for the index page, which must not keep every session parsed.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any

import orjson

from .entries import LABEL, Entry
from .storage import Storage
from .branch_names import branch_name
from .transcript import descend
from .tree import SessionTree

# Fields that hold no text a person would search for: structure, and encoded payloads.
# (A message's role, api, provider, model and stop reason would make "assistant" match them all.)
_SKIP_KEYS = frozenset({"id", "parentId", "timestamp", "type", "toolCallId", "data", "signature",
                        "thinkingSignature", "encrypted_content", "targetId", "firstKeptEntryId", "fromId",
                        "role", "api", "provider", "model", "stopReason", "mimeType"})
_SEP = "\x00"  # between entries: no query can match across two of them
SNIPPET_CHARS = 70  # around a match, each side
# The JSON scalars that hold no text, skipped without a call (usage and cost figures are most of
# an assistant message's values).
_NO_TEXT = frozenset({int, float, bool, type(None)})


def _strings(value: Any, out: list[str]) -> None:
    # Exact type checks first, a string child taken without a call: the corpus index runs this
    # on every entry of every session, and parsed JSON holds only these three types.
    t = type(value)
    if t is dict:
        for k, v in value.items():
            if k not in _SKIP_KEYS:
                tv = type(v)
                if tv is str:
                    out.append(v)
                elif tv not in _NO_TEXT:
                    _strings(v, out)
    elif t is list:
        for v in value:
            tv = type(v)
            if tv is str:
                out.append(v)
            elif tv not in _NO_TEXT:
                _strings(v, out)
    elif isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in _SKIP_KEYS:
                _strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)


def searchable_text(raw: dict) -> str:
    """Every string an entry holds (tool arguments included: `path`, `command`, `oldText`...)."""
    out: list[str] = []
    _strings(raw, out)
    return "\n".join(out)


class TextIndex:
    """Lower-cased texts, each under a key, searchable as one string."""

    def __init__(self) -> None:
        self.keys: list = []
        self.starts: list[int] = []
        self._parts: list[str] = []
        self._size = 0
        self._joined: str | None = ""

    def add(self, key, text: str) -> None:
        text = text.lower().replace(_SEP, " ")
        self.keys.append(key)
        self.starts.append(self._size)
        self._parts.append(text + _SEP)
        self._size += len(text) + 1
        self._joined = None

    def __len__(self) -> int:
        return len(self.keys)

    def find(self, query: str, limit: int | None = None) -> tuple[list, int]:
        """The keys of the entries that contain `query` (case-insensitive), in index order, at
        most `limit` of them, and how many entries match in all."""
        needle = query.lower().strip()
        if not needle or _SEP in needle:
            return [], 0
        if self._joined is None:
            self._joined = "".join(self._parts)
            self._parts = [self._joined]
        text, starts, keys = self._joined, self.starts, self.keys
        hits, total, at = [], 0, text.find(needle)
        while at >= 0:
            i = bisect.bisect_right(starts, at) - 1
            total += 1
            if limit is None or len(hits) < limit:
                hits.append(keys[i])
            nxt = starts[i + 1] if i + 1 < len(starts) else len(text)
            at = text.find(needle, nxt)  # on to the next entry: one hit per entry
        return hits, total


class SessionIndex:
    """The index of a parsed session's entries, kept up to date as the session grows. A label is
    indexed under the entry it labels, so finding a label finds what it names; a label whose
    target is no entry before it (dangling, or not an id at all) under its own id, so that every
    hit is an entry of the session."""

    def __init__(self) -> None:
        self.index = TextIndex()
        self._last: Entry | None = None
        self._count = 0
        self._ids: set[str] = set()

    def update(self, entries: list[Entry]) -> None:
        """Index what was appended since the last call; start over if the file was rewritten."""
        n = self._count
        if n and (len(entries) < n or entries[n - 1] is not self._last):
            self.index, n, self._ids = TextIndex(), 0, set()
        for e in entries[n:]:
            target = e.target_id if e.type == LABEL else None
            self.index.add(target if target in self._ids else e.id, searchable_text(e.raw))
            self._ids.add(e.id)
        self._count = len(entries)
        self._last = entries[-1] if entries else None

    def find(self, query: str, limit: int) -> tuple[list[str], int]:
        """The first `limit` entry ids that match, in file order, and how many match in all."""
        ids = list(dict.fromkeys(self.index.find(query)[0]))  # a label and its target: one hit
        return ids[:limit], len(ids)


class FileIndex:
    """The index of a session file read line by line from where it last stopped: the index page
    asks it whether a file mentions a word, without parsing a session tree."""

    def __init__(self) -> None:
        self.index = TextIndex()
        self.offset = 0  # bytes of complete lines indexed
        self.key: tuple | None = None  # the storage version last seen

    def update(self, storage: Storage) -> None:
        key = storage.version_key()
        if key == self.key:
            return
        if self.key is not None and (key[0] < self.offset or key[2:] != self.key[2:]):
            self.index, self.offset = TextIndex(), 0  # shrunk or replaced: read it again
        data = storage.read_from(self.offset)
        end = data.rfind(b"\n") + 1
        for text in _line_texts(data[:end]):
            self.index.add(None, text)
        self.offset += end
        self.key = key

    def matches(self, query: str) -> bool:
        return self.index.find(query, 1)[1] > 0

    @property
    def size(self) -> int:
        """Characters of text held."""
        return self.index._size


def file_mentions(storage: Storage, query: str) -> bool:
    """Whether a session file mentions `query`, read line by line and kept nowhere (a file too
    big for the index page's cache)."""
    needle = query.lower().strip()
    if not needle:
        return False
    pending = b""
    for chunk in storage.read_chunks(0):
        data = pending + chunk
        end = data.rfind(b"\n") + 1
        if any(needle in text.lower() for text in _line_texts(data[:end])):
            return True
        pending = data[end:]
    return False


def _line_texts(data: bytes):
    """The searchable text of each whole line that is a JSON object; damaged lines hold none."""
    for line in data.splitlines():
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            yield searchable_text(obj)


@dataclass(frozen=True)
class Snippet:
    before: str
    match: str
    after: str


def snippet(text: str, query: str) -> Snippet | None:
    """The first place `query` occurs in `text` (any case), with some words either side."""
    m = re.search(re.escape(query.strip()), text, re.IGNORECASE)
    if not m:
        return None
    start, end = max(0, m.start() - SNIPPET_CHARS), min(len(text), m.end() + SNIPPET_CHARS)
    squash = lambda s: " ".join(s.split())  # noqa: E731 - one line of text, whatever it held
    return Snippet(
        ("…" if start else "") + squash(text[start:m.start()]) + (" " if text[m.start() - 1: m.start()].isspace() else ""),
        text[m.start():m.end()],
        (" " if text[m.end(): m.end() + 1].isspace() else "") + squash(text[m.end():end]) + ("…" if end < len(text) else ""),
    )


@dataclass
class Hit:
    """An entry that matches, as a session's search lists it (the Search tab, `session-tree search`)."""
    entry: Entry
    snippet: Snippet | None
    leaf: str  # the tip the result's branch leads to (its transcript opens there)
    branch: str  # that branch, as people name it
    on_active: bool


def session_hits(tree: SessionTree, index: SessionIndex, query: str, limit: int) -> tuple[list[Hit], int]:
    """The first `limit` entries of `tree` that mention `query` (`index` kept up to date with its
    entries), each with its snippet and branch, and how many match in all."""
    ids, total = index.find(query, limit)
    active = tree.path_ids(tree.active_leaf) if tree.active_leaf else set()
    hits = []
    for entry_id in ids:
        e = tree.by_id[entry_id]
        text = searchable_text(e.raw) + ("\n" + tree.labels[entry_id] if entry_id in tree.labels else "")
        leaf = descend(tree, entry_id, active)
        hits.append(Hit(e, snippet(text, query), leaf, branch_name(tree, leaf, 60), entry_id in active))
    return hits, total
