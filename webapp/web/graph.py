"""The session tree as a Graphviz drawing: which nodes to draw, how each looks, and the SVG.

The overview is drawn by turns: user messages stay drawn and the assistant's work between two of
them folds into one "segment" node; paths too long for that fold chains of turns. Branch points,
compactions, branch summaries, labelled nodes, leaves, roots and pinned nodes always stay
visible. One drawing holds at most MAX_DRAWN nodes whatever the tree's shape: side branches past
it wait in "more branches" nodes. Selection and overlays such as the context view are applied in
the browser by CSS classes, so the costly `dot` layout only depends on the file and on what is
unfolded, and is cached on exactly that. Every string bound for dot goes through `dot_text`, and
`dot` runs with a time limit.
"""

from __future__ import annotations

import atexit
import bisect
import ctypes
import functools
import hashlib
import html
import heapq
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from itertools import compress
from urllib.parse import urlencode

from ..core.entries import (
    BRANCH_SUMMARY,
    COMPACTION,
    MARKER_TYPES,
    MESSAGE,
    META_TYPES,
    Entry,
    content_text,
    entry_text,
    tool_calls,
)
from ..core.reader import first_kept_id, gc_paused
from ..core.tokens import format_tokens
from ..core.tree import SessionTree
from . import client
from .client import ClientGone

COLLAPSE_THRESHOLD = 200  # draw everything below this many nodes, unless told otherwise
MIN_SEGMENT = 4  # shorter runs are not worth folding
LABEL_WIDTH = 34
# The most nodes one drawing sends to `dot`, whatever the tree's shape (see BENCHMARKS.md,
# "graph": the SVG of 1,000 nodes stays under 1 MB and dot lays it out in under a second).
MAX_DRAWN = 1000
MAX_EXPAND = 256  # unfolded segments and opened branch groups one URL may name
MORE_OPEN = 50  # branch points one "more branches" node opens at once

_SAFE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")  # no ":": dot reads `a:b` in an edge as node a, port b
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_CLASS_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@functools.lru_cache(maxsize=1 << 17)  # every drawing asks again for the same ids
def dom_id(entry_id: str) -> str:
    """An id safe for HTML/SVG and for dot: the entry id itself when it is tame, else a hash."""
    if _SAFE_ID.match(entry_id):
        return "e-" + entry_id
    return "x-" + hashlib.sha1(entry_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def dot_text(value, width: int = LABEL_WIDTH) -> str:
    """The one way session text reaches the dot source: any value as one line of at most `width`
    characters, without NUL, control characters or lone surrogates (dot fails on them), and with
    backslashes doubled (dot would read them as escapes, a trailing one as the closing quote's)."""
    text = value if isinstance(value, str) else str(value)
    text = " ".join(_CONTROL.sub(" ", text[: width * 8]).split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return text.replace("\\", "\\\\")


def css_token(value) -> str:
    """A class name from session data (an entry type, a role): tame characters, cut short."""
    return _CLASS_UNSAFE.sub("-", dot_text(value, 40))


SEGMENT_FIGURES = 5000  # past this many entries a fold's label leaves out the figures that read bodies


@dataclass
class Segment:
    """A folded run of consecutive single-child entries (`ids`, in order along the path)."""

    ids: list[str]
    tree: SessionTree = field(repr=False, compare=False)
    turns: int = 0  # user messages folded in (a chain of turns)

    @property
    def id(self) -> str:
        return "seg-" + dom_id(self.ids[0])

    @property
    def first_id(self) -> str:
        return self.ids[0]

    @property
    def entries(self) -> list[Entry]:
        by_id = self.tree.by_id
        return [by_id[x] for x in self.ids]

    def _head(self):
        """The first entries, which the label reads text from (never a whole huge run)."""
        by_id = self.tree.by_id
        return (by_id[x] for x in self.ids[:SEGMENT_FIGURES])

    def first_user_line(self) -> str:
        for e in self._head():
            if e.role == "user":
                return content_text(e.message.get("content"), " ")
        return ""

    def user_turns(self) -> int:
        return self.turns

    def tool_chips(self, most: int = 4) -> str:
        """The tools the folded work called, most used first: "bash ×3 · read ×2 · edit"
        (empty for a run too long to read through)."""
        if len(self.ids) > SEGMENT_FIGURES:
            return ""
        counts: dict[str, int] = {}
        for e in self._head():
            for call in tool_calls(e):
                name = dot_text(call.get("name") or "tool", 16)
                counts[name] = counts.get(name, 0) + 1
        top = sorted(counts.items(), key=lambda kv: -kv[1])
        chips = [name if n == 1 else f"{name} ×{n}" for name, n in top[:most]]
        return " · ".join(chips) + (" · …" if len(top) > most else "")

    def first_text(self) -> str:
        """The first thing the assistant says in the folded work."""
        for e in self._head():
            if e.role == "assistant":
                text = content_text(e.message.get("content"), " ")
                if text.strip():
                    return text
        return ""

    def tokens(self, tree: SessionTree) -> int | None:
        """The estimated size of what the folded entries say to a model; None for a run longer
        than SEGMENT_FIGURES (its bodies are not all read for one label)."""
        if len(self.ids) > SEGMENT_FIGURES:
            return None
        return sum(e.tokens for e in self.entries)


@dataclass
class MoreBranches:
    """Side branches left out of a drawing (it holds at most MAX_DRAWN nodes), hanging off one
    drawn node: `anchors` are the entries they fork from, ranked, which a click opens."""

    attach: str  # the dom id of the drawn node they hang from
    anchors: list[str]
    branches: int
    entries: int

    @property
    def id(self) -> str:
        return "more-" + self.attach


@dataclass
class GraphLayout:
    """What gets drawn: visible entries, segments, hidden-branch groups, and the edges between
    them. Which drawn node shows an entry is found from the drawn tree's chains (never a map of
    every entry: a layout costs what it draws, not what the file holds)."""

    nodes: list[Entry] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    more: list[MoreBranches] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)  # dom ids
    collapsed: bool = False
    capped: bool = False  # the tree was too big for one drawing: some side branches are left out
    counted: int | None = None  # a layout only counted (see _fold): its size
    drawn: "_Drawn | None" = field(default=None, repr=False, compare=False)
    # The tree it was laid out for, kept while the layout is (a cached layout may outlive the
    # session that made it): its drawn tree finds most places through it (_place).
    tree: SessionTree | None = field(default=None, repr=False, compare=False)
    # chain head -> the last position drawn (None: every chain, whole)
    included: dict[str, int] | None = field(default=None, repr=False)
    # chain head -> (start positions, end positions, segments) of its folds, in order
    runs: dict[str, tuple[list[int], list[int], list[Segment]]] = field(default_factory=dict, repr=False)
    # chain head -> the start position of every drawn unit (node or fold) along it
    unit_starts: dict[str, list[int]] = field(default_factory=dict, repr=False)
    heads: list[str] = field(default_factory=list, repr=False)  # chains drawn, depth-first
    # chain head -> (position of a left-out side root, the "more" node that stands for it)
    hidden: dict[str, list[tuple[int, str]]] = field(default_factory=dict, repr=False)

    def signature(self) -> tuple:
        return (self.collapsed, tuple(s.first_id for s in self.segments), tuple(m.id for m in self.more))

    def size(self) -> int:
        """Nodes sent to dot."""
        if self.counted is not None:
            return self.counted
        return len(self.nodes) + len(self.segments) + len(self.more)

    def member(self, entry_id: str) -> str | None:
        """The segment or "more branches" node an entry is folded into or left out in; None when
        it is drawn as itself (or is not in the drawn tree)."""
        d = self.drawn
        where = d.place(entry_id) if d is not None else None
        if where is None:
            return None
        h, i = where
        runs = self.runs.get(h)
        if runs is not None:
            j = bisect.bisect_right(runs[0], i) - 1
            if j >= 0 and i <= runs[1][j]:
                return runs[2][j].id
        if self.included is None or self.included.get(h, -1) >= i:
            return None
        while h is not None:  # left out: under a side root hidden on this chain or above
            found = [g for p, g in self.hidden.get(h, ()) if p <= i]
            if found:
                return found[-1]
            up = d.up[h]
            if up is None:
                return None
            h, i = d.place(up)
        return None

    def dom_for(self, entry_id: str) -> str:
        """The drawn node an entry is shown by: itself, or the segment or group that holds it."""
        return self.member(entry_id) or dom_id(entry_id)

    def path_doms(self, entry_id: str | None) -> list[str]:
        """The drawn nodes on the path from the root to `entry_id`, in order: a fold counts
        once, and a long folded path costs its folds, not its entries."""
        d = self.drawn
        out: list[str] = []
        h, i = (d.place(entry_id) if d is not None and entry_id is not None else None) or (None, -1)
        while h is not None:
            chain = d.chains[h]
            runs = self.runs.get(h)
            while i >= 0:
                if runs is not None:
                    j = bisect.bisect_right(runs[0], i) - 1
                    if j >= 0 and i <= runs[1][j]:
                        out.append(runs[2][j].id)
                        i = runs[0][j] - 1
                        continue
                out.append(self.dom_for(chain[i]))
                i -= 1
            up = d.up[h]
            h, i = d.place(up) if up is not None else (None, -1)
        out.reverse()
        return list(dict.fromkeys(out))

    def opening_for(self, entry_id: str) -> set[str]:
        """The `expand` ids that bring a folded or left-out entry into the drawing: the entry
        itself when its branch is left out (its path joins what is always drawn), or the first
        entry of the segment that holds it."""
        drawn = self.member(entry_id)
        if drawn is None:
            return set()
        if drawn.startswith("more-"):
            return {entry_id}
        return {s.first_id for s in self.segments if s.id == drawn}


@dataclass(eq=False)  # (hashable: layouts are cached by it)
class _Drawn:
    """The drawn tree of a file, cut into chains: runs of single-child entries, each from a
    root or a child of a branch point down to a leaf or a branch point (`leaf` and `label`
    markers are not drawn: a label is a tag on its target, their children hang from their
    nearest drawn ancestor). Layouts fold chains and look entries up by them, and the figures
    of a subtree (entries, leaves, last line, whether a label is in it) are kept per chain, so
    that an append costs the chains, not the entries (`_grown`)."""

    roots: list[str]
    chains: dict[str, list[str]]  # chain head -> its entries, in order
    marks: dict[str, tuple[str, int]]  # some entries -> their `place` (see _place)
    count: int  # drawn entries
    tree: "weakref.ref[SessionTree]" = field(repr=False)  # the tree it is the drawing of, for `place`
    up: dict[str, str | None]  # chain head -> the branch point above it (None for a root)
    forks: dict[str, list[str]]  # branch point -> the heads of its chains below, by time
    # chain head -> the positions of the user messages along it, in order (a user message is
    # folded only when a path is too long to draw turn by turn)
    users_at: dict[str, list[int]]
    unfoldable: set[str]  # compactions and branch summaries: never folded
    maxline: dict[str, int]  # chain head -> the last line along it (_chain_line)
    # (chain head, fold) -> (the chain, what never folds on it, its unit starts): counted folds
    # of chains an append left alone are not counted again (shared with grown trees)
    units: dict = field(default_factory=dict, repr=False)
    basis: tuple = ()  # what it was made from (see _basis)
    # chain head -> figures of the subtree from it (see _figures)
    size: dict[str, int] = field(default_factory=dict)
    leaves: dict[str, int] = field(default_factory=dict)
    last: dict[str, int] = field(default_factory=dict)
    label_at: dict[str, int] = field(default_factory=dict)  # chain head -> the lowest labelled position
    labelled_below: set[str] = field(default_factory=set)  # heads with a label in their subtree

    def place(self, x: str) -> tuple[str, int] | None:
        """(The head of the chain `x` is in, its position there), or None when `x` is not drawn."""
        found = self.marks.get(x)  # (most places asked for are kept: chain heads and ends)
        return found if found is not None else _place(self.marks, self.tree().by_id, x)

    def kids(self, x: str) -> list[str]:
        h, i = self.place(x)
        chain = self.chains[h]
        return [chain[i + 1]] if i < len(chain) - 1 else self.forks.get(x, [])

    def parent_of(self, x: str) -> str | None:
        h, i = self.place(x)
        return self.chains[h][i - 1] if i else self.up[h]

    def subtree(self, x: str) -> tuple[int, int, int, bool]:
        """Figures of the subtree from `x`: its entries, its leaves (no branch before a chain's
        end), the last line written in it (from anywhere in a chain, the chain's: its lines are
        known by its ends only, _chain_line), and whether a label is on `x` or below it."""
        h, i = self.place(x)
        if not i:
            labelled = h in self.labelled_below
        else:
            labelled = self.label_at.get(h, -1) >= i or any(
                k in self.labelled_below for k in self.forks.get(self.chains[h][-1], ()))
        return self.size[h] - i, self.leaves[h], self.last[h], labelled


# Where a drawn entry is (its chain's head and its position there) is kept for every
# PLACE_EVERY-th entry of a chain (its head first) and its last one (a branch point, which
# layouts ask for most) only: two maps of every entry cost 16 MB at 270k entries (#13.5). Any
# other entry's place is found in at most PLACE_EVERY - 1 steps up the tree.
PLACE_EVERY = 16


def _place(marks: dict[str, tuple[str, int]], by_id, x: str) -> tuple[str, int] | None:
    """(Chain head, position) of the drawn entry `x`, from the nearest kept place above it: an
    entry's predecessor in its chain is its parent, markers looked through (as chains are made)."""
    found = marks.get(x)
    if found is not None:
        return found
    e = by_id.get(x)
    if e is None or e.type in MARKER_TYPES:
        return None  # (not drawn)
    for steps in range(1, PLACE_EVERY):
        p = e.parent_id
        e = by_id.get(p) if p is not None else None
        while e is not None and e.type in MARKER_TYPES:
            e = by_id.get(e.parent_id) if e.parent_id is not None else None
        if e is None:
            return None
        found = marks.get(e.id)
        if found is not None:
            return found[0], found[1] + steps
    return None


def _mark(marks: dict[str, tuple[str, int]], chain: list[str], h: str) -> None:
    """Keep the places of `chain` (of head `h`) that are kept (see PLACE_EVERY)."""
    for i in range(0, len(chain), PLACE_EVERY):
        marks[chain[i]] = (h, i)
    marks[chain[-1]] = (h, len(chain) - 1)


def _unmark(marks: dict[str, tuple[str, int]], chain: list[str], start: int) -> None:
    """Forget the kept places of `chain` from position `start` on (that part is moved)."""
    for i in range(-(-start // PLACE_EVERY) * PLACE_EVERY, len(chain), PLACE_EVERY):
        del marks[chain[i]]
    marks.pop(chain[-1], None)  # (when it was not a PLACE_EVERY-th)


def _figures(d: _Drawn, tree: SessionTree) -> None:
    """The per-chain figures of `d`, children's chains before their parents' (one pass over
    the chains: an append makes them again at that cost). Where a sub-agent's run ends is not
    a leaf (as in `tree.leaves`)."""
    chains, forks, maxline, by_id, labels = d.chains, d.forks, d.maxline, tree.by_id, tree.labels
    label_at: dict[str, int] = {}
    for x in labels:
        where = d.place(x)
        if where is not None:
            h = where[0]
            label_at[h] = max(label_at.get(h, -1), where[1])
    order: list[str] = []
    stack = list(d.roots)
    while stack:
        h = stack.pop()
        order.append(h)
        stack.extend(forks.get(chains[h][-1], ()))
    size, leaves, last, labelled = {}, {}, {}, set()
    for h in reversed(order):
        chain = chains[h]
        s, n, m, lab = len(chain), 0, maxline[h], h in label_at
        below = forks.get(chain[-1])
        if below:
            for k in below:
                s += size[k]
                n += leaves[k]
                if last[k] > m:
                    m = last[k]
                lab = lab or k in labelled
        else:
            n = 0 if by_id[chain[-1]].sidechain else 1
        size[h], leaves[h], last[h] = s, n, m
        if lab:
            labelled.add(h)
    d.size, d.leaves, d.last, d.label_at, d.labelled_below = size, leaves, last, label_at, labelled


def _basis(tree: SessionTree) -> tuple:
    """What tells that a later tree grew from this one by appends: the same entry objects
    (the same reading of the file) and no orphan mended or loop cut since."""
    entries = tree.entries
    return (len(entries), entries[-1] if entries else None, list(tree.orphans), len(tree.cycle_cuts))


_drawn_cache: "weakref.WeakKeyDictionary[SessionTree, _Drawn]" = weakref.WeakKeyDictionary()
# First entry of a reading -> its latest drawn tree, which the next append grows (the tree it was
# made for is gone by then). A drawn tree holds ids, not entries: a file the store let go costs
# its ids here, for the last 8 files.
_lineage: "OrderedDict[int, tuple[Entry, _Drawn]]" = OrderedDict()
_lineage_lock = threading.Lock()
GROW_MOST = 5000  # appended entries one extension takes on; past it the drawn tree is made anew


def drawn_tree(tree: SessionTree) -> _Drawn:
    """The drawn tree of `tree`, made once per tree (grown from the one before an append)."""
    cached = _drawn_cache.get(tree)
    if cached is not None:
        return cached
    first = tree.entries[0] if tree.entries else None
    with _lineage_lock:
        before = _lineage.get(id(first))
    with gc_paused():
        d = None
        if before is not None and before[0] is first:
            d = _grown(tree, before[1])
        if d is None:
            d = _drawn_anew(tree)
    _drawn_cache[tree] = d
    if first is not None:
        with _lineage_lock:
            _lineage[id(first)] = (first, d)
            _lineage.move_to_end(id(first))
            while len(_lineage) > 8:
                _lineage.popitem(last=False)
    return d


def _chain_line(by_id, chain: list[str]) -> int:
    """The last line written along a chain: its end's, or its start's in a file where a parent
    was written after its child (reading every line of a long chain costs more than it tells)."""
    return max(by_id[chain[0]].line or 0, by_id[chain[-1]].line or 0)


def _drawn_anew(tree: SessionTree) -> _Drawn:
    entries, by_id, tchildren = tree.entries, tree.by_id, tree.children
    markers: list[str] = []
    users: set[str] = set()
    unfoldable: set[str] = set()
    for e in entries:
        t = e.type
        if t == MESSAGE:
            if e.role == "user":
                users.add(e.id)
        elif t in MARKER_TYPES:
            markers.append(e.id)
        elif t == COMPACTION or t == BRANCH_SUMMARY:
            unfoldable.add(e.id)
    marker_set = set(markers)
    looked_through: dict[str, list[str]] = {}  # drawn entries with a marker child: their drawn children
    roots = [r for r in tree.roots if r not in marker_set]
    for m in markers:
        up = tree.conversation_leaf(m)
        if up is not None:
            looked_through[up] = []
        elif m in tchildren:  # under a marker that is a root: roots too
            roots.extend(k for k in tree.conversation_children(m) if k not in marker_set)
    for x in looked_through:
        looked_through[x] = tree.conversation_children(x)
    if len(roots) > len(tree.roots) - len(marker_set & set(tree.roots)):
        roots = sorted(dict.fromkeys(roots), key=lambda r: by_id[r].line or 0)
    chains: dict[str, list[str]] = {}
    marks: dict[str, tuple[str, int]] = {}
    users_at: dict[str, list[int]] = {}
    count = 0
    up: dict[str, str | None] = dict.fromkeys(roots)
    forks: dict[str, list[str]] = {}
    maxline: dict[str, int] = {}
    kids_of = tchildren.kids.get  # (not merged with looked_through: a copy of every entry's)
    stack = list(reversed(roots))
    while stack:
        h = stack.pop()
        chain = [h]
        append = chain.append
        x = h
        while True:  # (the loop every entry goes through: kept short)
            # (a lone child is its id, see tree.Children)
            kids = kids_of(x) if x not in looked_through else looked_through[x]
            if type(kids) is str:
                x = kids
                append(x)
                continue
            if not kids:
                break
            if len(kids) == 1:
                x = kids[0]
                append(x)
                continue
            forks[x] = kids
            for k in kids:
                up[k] = x
            stack.extend(reversed(kids))
            break
        chains[h] = chain
        found = list(compress(range(len(chain)), map(users.__contains__, chain)))  # (at C speed)
        if found:
            users_at[h] = found
        _mark(marks, chain, h)
        count += len(chain)
        maxline[h] = _chain_line(by_id, chain)
    d = _Drawn(roots, chains, marks, count, weakref.ref(tree), up, forks, users_at, unfoldable, maxline, {},
               _basis(tree))
    _figures(d, tree)
    return d


def _grown(tree: SessionTree, old: _Drawn) -> _Drawn | None:
    """The drawn tree of `tree` made from `old`, the one of a tree it grew from by appends: a
    new entry continues its parent's chain (a tip grows), starts a chain below a branch point,
    or makes its parent a branch point (the chain is cut there); the per-chain figures are
    made again. None when `tree` is not such a growth (another reading of the file, an
    orphan's parent arrived, too many new entries)."""
    n, last_entry, orphans, cuts = old.basis
    entries = tree.entries
    if (len(entries) < n or (n and entries[n - 1] is not last_entry) or len(entries) - n > GROW_MOST
            or tree.orphans[:len(orphans)] != orphans or len(tree.cycle_cuts) != cuts):
        return None
    by_id, tparent = tree.by_id, tree.parent
    chains, marks, up, forks, maxline = dict(old.chains), dict(old.marks), dict(old.up), dict(old.forks), dict(old.maxline)
    count = old.count
    users_at, unfoldable, roots = dict(old.users_at), set(old.unfoldable), list(old.roots)
    mine: set[str] = set()  # chains copied already: they grow in place
    touched: set[str] = set()  # branch points with a new chain below
    for e in entries[n:]:
        t = e.type
        if t in MARKER_TYPES:
            continue
        x, line = e.id, e.line or 0
        if x in marks or x in up:  # an id written twice: a new reading sorts it out
            return None
        count += 1
        user = t == MESSAGE and e.role == "user"
        if t == COMPACTION or t == BRANCH_SUMMARY:
            unfoldable.add(x)
        p = tparent.get(x)
        if p is not None and by_id[p].type in MARKER_TYPES:
            p = tree.conversation_leaf(p)
        where = _place(marks, by_id, p) if p is not None else None
        if p is not None and where is None:
            return None
        h, i = where or (None, -1)
        if h is not None and i == len(chains[h]) - 1 and p not in forks:  # a tip grows
            if h not in mine:
                chains[h] = list(chains[h])
                mine.add(h)
            end = len(chains[h]) - 1
            if end % PLACE_EVERY:  # the old end is no longer the last: kept only if a 16th
                del marks[chains[h][end]]
            marks[x] = (h, end + 1)
            if user:  # (the lists are shared with the drawn tree before: copied)
                users_at[h] = [*users_at.get(h, ()), len(chains[h])]
            chains[h].append(x)
            maxline[h] = max(maxline[h], line)
            continue
        chains[x], marks[x], up[x], maxline[x] = [x], (x, 0), p, line
        if user:
            users_at[x] = [0]
        mine.add(x)
        if p is None:
            roots.append(x)
            continue
        touched.add(p)
        chain = chains[h]
        if i < len(chain) - 1:  # p had one child: it becomes a branch point, its chain ends there
            rest = chain[i + 1:]
            chains[h] = chain[:i + 1]
            chains[rest[0]] = rest
            mine.update((h, rest[0]))
            _unmark(marks, chain, i + 1)
            marks[p] = (h, i)  # its new last entry
            _mark(marks, rest, rest[0])
            at = users_at.get(h, ())
            k = bisect.bisect_right(at, i)
            if k < len(at):  # user messages after the cut: on the new chain
                users_at[rest[0]] = [q - i - 1 for q in at[k:]]
                if k:
                    users_at[h] = at[:k]
                else:
                    del users_at[h]
            up[rest[0]] = p
            maxline[h] = _chain_line(by_id, chains[h])
            maxline[rest[0]] = _chain_line(by_id, rest)
            forks[p] = [rest[0], x]
        else:
            forks[p] = [*forks[p], x]
    for p in touched:  # siblings in the tree's order (by time)
        forks[p] = tree.conversation_children(p)
    d = _Drawn(roots, chains, marks, count, weakref.ref(tree), up, forks, users_at, unfoldable, maxline, old.units,
               _basis(tree))
    _figures(d, tree)
    return d


def build_layout(
    tree: SessionTree, collapse: str = "auto", expand: frozenset[str] = frozenset(), pinned: frozenset[str] = frozenset(),
    cap: int = MAX_DRAWN,
) -> GraphLayout:
    """Decide what to draw. `collapse` is "auto" (fold past COLLAPSE_THRESHOLD), "on" or "off";
    `expand` holds the first entry ids of segments the user unfolded, the fork points whose
    left-out branches the user opened and entries brought into view; `pinned` entries stay
    visible. At most `cap` nodes: past it, side branches are left out, ranked (opened, labelled,
    recent, large first), and each drawn node they fork from gets one "N more branches" node."""
    with gc_paused():
        d = drawn_tree(tree)
        fold = collapse == "on" or (collapse == "auto" and d.count > COLLAPSE_THRESHOLD)
        keep = set(pinned) | set(tree.labels)
        active_leaf = tree.conversation_leaf(tree.active_leaf)
        if active_leaf is not None:
            keep.add(active_leaf)
        # Where a compaction's kept part starts stays drawn: a fold never straddles what the model
        # sees and what a summary replaced.
        by_id = tree.by_id
        keep.update(first_kept_id(by_id[x]) for x in d.unfoldable if by_id[x].type == COMPACTION)
        for mode in ("turns",) if fold else ("", "turns"):  # "expand all" too big to draw folds by turns
            # Unfolding only adds nodes: when the drawing without it is over the cap, so is this one.
            plain = _plain_fold(tree, d, mode, keep)
            if plain.size() <= cap:
                layout = _fold(tree, d, mode, keep, expand)
                if layout.size() <= cap:
                    return layout
        return _bounded(tree, d, keep, expand, pinned, active_leaf, cap, plain, "turns")


_plain_cache: "weakref.WeakKeyDictionary[_Drawn, dict]" = weakref.WeakKeyDictionary()


def _plain_fold(tree, d: _Drawn, fold: str, keep: set[str]) -> GraphLayout:
    """The whole tree folded with nothing unfolded, counted once per drawn tree and fold (what
    the bounded drawing weighs side branches with, and whether a drawing can fit at all)."""
    known = _plain_cache.setdefault(d, {})
    key = (fold, frozenset(keep))
    if key not in known:
        known.clear()  # one set of kept entries at a time: the pinned ones change rarely
        known[key] = _fold(tree, d, fold, keep, frozenset(), count=True)
    return known[key]


def _fold(tree, d: _Drawn, fold: str, keep: set[str], expand: frozenset[str],
          only: dict[str, int] | None = None, count: bool = False) -> GraphLayout:
    """Draw the drawn tree, or only the chains in `only` (chain head -> the last position drawn;
    it holds the chain above each of its chains, whole). `fold` "turns": the assistant's work
    between two user messages folds into one node (the user's words stay drawn); "runs": any
    run of single-child entries folds, user messages too (for paths too long to draw turn by
    turn); "": nothing folds. Where a chain ends (a leaf, a branch point, or where the drawing
    stops) stays drawn. The cost is the number of chains and of what is drawn; with `count`,
    the units are only counted (`unit_starts`, `size()`), which costs less than drawing them."""
    by_id, chains = tree.by_id, d.chains
    layout = GraphLayout(collapsed=bool(fold), drawn=d, included=only, tree=None if count else tree)
    turns = fold == "turns"
    shortest = 2 if turns else MIN_SEGMENT
    users_at = d.users_at if fold else {}
    never: dict[str, set[int]] = {}  # kept entries, compactions and branch summaries, by chain
    if fold:
        for group in (keep,) if fold == "all" else (keep, d.unfoldable):
            for x in group:
                where = d.place(x)
                if where is not None:
                    never.setdefault(where[0], set()).add(where[1])
    nodes, segments, edges, runs, unit_starts, heads = (layout.nodes, layout.segments, layout.edges, layout.runs,
                                                        layout.unit_starts, layout.heads)
    total = 0
    stack = list(reversed(d.roots))
    while stack:
        h = stack.pop()
        if only is not None and h not in only:
            continue
        heads.append(h)
        chain = chains[h]
        end = len(chain) - 1 if only is None else only[h]
        up = d.up[h]
        lo, hi = (0 if up is not None else 1), end - 1
        if count and only is None:
            known = d.units.get((h, fold))
            extra = tuple(sorted(never.get(h, ())))
            if known is not None and known[0] is chain and known[1] == extra:
                unit_starts[h] = known[2]
                total += len(known[2])
                if end == len(chain) - 1:
                    stack.extend(reversed(d.forks.get(chain[-1], ())))
                continue
        if not fold or hi < lo:
            spans = [(q, q) for q in range(end + 1)]
        else:
            upos = users_at.get(h, ())
            cuts = upos[bisect.bisect_left(upos, lo):bisect.bisect_right(upos, hi)] if turns and upos else []
            extra = never.get(h)
            if extra:
                cuts = sorted({*cuts, *(q for q in extra if lo <= q <= hi)})
            spans = [(q, q) for q in range(lo)]
            start = lo
            for cut in (*cuts, hi + 1):
                if cut - start >= shortest and chain[start] not in expand:
                    spans.append((start, cut - 1))
                else:
                    spans.extend((q, q) for q in range(start, cut))
                if cut <= hi:
                    spans.append((cut, cut))
                start = cut + 1
            spans.extend((q, q) for q in range(hi + 1, end + 1))
        unit_starts[h] = [a for a, _ in spans]
        total += len(spans)
        if count and only is None:
            d.units[(h, fold)] = (chain, tuple(sorted(never.get(h, ()))), unit_starts[h])
        if not count:
            prev = dom_id(up) if up is not None else None
            for a, b in spans:
                if a == b:
                    x = chain[a]
                    nodes.append(by_id[x])
                    u = dom_id(x)
                else:
                    upos = users_at.get(h)
                    turns_in = bisect.bisect_right(upos, b) - bisect.bisect_left(upos, a) if upos else 0
                    seg = Segment(chain[a:b + 1], tree, turns_in)
                    segments.append(seg)
                    r = runs.setdefault(h, ([], [], []))
                    r[0].append(a)
                    r[1].append(b)
                    r[2].append(seg)
                    u = seg.id
                if prev is not None:
                    edges.append((prev, u))
                prev = u
        if end == len(chain) - 1:
            stack.extend(reversed(d.forks.get(chain[-1], ())))
    if count:
        layout.counted = total
    return layout


def _include(d: _Drawn, x: str, into: dict[str, int]) -> None:
    """Add `x` and the path above it to a chain restriction (head -> last position drawn)."""
    h, i = d.place(x)
    while into.get(h, -1) < i:
        into[h] = i
        up = d.up[h]
        if up is None:
            return
        h, i = d.place(up)


def _subtree_units(full: GraphLayout, d: _Drawn) -> dict[str, int]:
    """Chain head -> the drawn units of the subtree from that chain down, in `full`."""
    total: dict[str, int] = {}
    for h in reversed(full.heads):
        n = len(full.unit_starts[h])
        for k in d.forks.get(d.chains[h][-1], ()):
            n += total.get(k, 0)
        total[h] = n
    return total


def _bounded(tree, d: _Drawn, keep, expand, pinned, active_leaf, cap, full: GraphLayout, fold: str) -> GraphLayout:
    """The drawing with side branches left out until it holds at most `cap` nodes. When even
    the paths that must stay take more than three quarters of it turn by turn, they fold by runs."""
    children, chains, place = d.forks, d.chains, d.place
    # The spine: paths from the roots to what must stay (the active leaf, pinned entries, and
    # what the user opened). Every other child of a spine entry starts a side branch, drawn or
    # left out whole.
    spine: dict[str, int] = {}
    for target in [active_leaf, *pinned, *expand]:
        if target is not None and place(target) is not None:
            _include(d, target, spine)
    if not spine:
        spine.update(dict.fromkeys(d.roots, 0))
    sides: list[tuple[str, str]] = []  # (side root, fork point; "" for a root)
    for h, end in spine.items():
        chain = chains[h]
        if end < len(chain) - 1:
            sides.append((chain[end + 1], chain[end]))
        else:
            sides.extend((k, chain[-1]) for k in children.get(chain[-1], ()) if k not in spine)
    sides.extend((r, "") for r in d.roots if r not in spine)

    # What a side branch costs: its nodes in the full drawing.
    total = _subtree_units(full, d)

    def cost(r: str) -> int:
        h, i = place(r)
        if h == r:
            return total.get(r, 1)
        starts = full.unit_starts.get(h, [])
        below = sum(total.get(k, 0) for k in children.get(chains[h][-1], ()))
        return len(starts) - bisect.bisect_right(starts, i) + 1 + below

    opened = set(expand)
    ranks: dict[str, tuple] = {}

    def rank(r: str, p: str) -> tuple:
        known = ranks.get(r)
        if known is None:
            size, _, last, labelled = d.subtree(r)
            known = ranks[r] = (p not in opened, not labelled, -last, -size, r)
        return known

    spine_only = _fold(tree, d, fold, keep, expand, spine)
    if fold == "turns" and spine_only.size() > cap * 3 // 4:
        return _bounded(tree, d, keep, expand, pinned, active_leaf, cap, _plain_fold(tree, d, "runs", keep), "runs")
    if fold == "runs" and spine_only.size() > cap:
        # Even by runs the paths that must stay hold more than a drawing (hundreds of branch
        # summaries, compactions or labels along them): only what the user asked to see stays
        # drawn as itself, and those fold too ("all").
        least = set(pinned) | set(expand) | ({active_leaf} if active_leaf is not None else set())
        return _bounded(tree, d, least, expand, pinned, active_leaf, cap, _plain_fold(tree, d, "all", least), "all")
    used = spine_only.size() + len({p for _, p in sides})  # the spine, a "more" node per fork point
    heap = [(rank(r, p), r, p) for r, p in sides]
    heapq.heapify(heap)
    shown: list[str] = []
    paths: dict[str, int] = {}  # side branches too big to draw whole: the path to their latest leaf
    path_roots: set[str] = set()
    while heap and used < cap - 1:
        _, r, p = heapq.heappop(heap)
        room = cap - used
        whole = cost(r)
        if whole <= room:
            used += whole
            shown.append(r)
            continue
        # Too big to draw whole: draw the path to its latest leaf, if that fits, and rank the
        # branches off that path with the others.
        x, units, forks, path = r, 0, [], {}
        while True:
            h, i = place(x)
            starts = full.unit_starts.get(h, [])
            units += len(starts) - bisect.bisect_right(starts, i) + 1
            chain = chains[h]
            path[h] = len(chain) - 1
            kids = children.get(chain[-1])
            if not kids or units >= room:
                break
            x = max(kids, key=d.last.__getitem__)  # (heads of chains)
            forks.extend((k, chain[-1]) for k in kids if k != x)
        extra = units + len({f for _, f in forks})
        if kids or used + extra > cap:
            continue
        used += extra
        path_roots.add(r)
        for h, end in path.items():
            paths[h] = max(paths.get(h, -1), end)
        sides.extend(forks)
        for k, f in forks:
            heapq.heappush(heap, (rank(k, f), k, f))
    while True:
        hidden = {r for r, _ in sides if r not in path_roots} - set(shown)
        only = dict(spine)
        for h, end in paths.items():
            only[h] = max(only.get(h, -1), end)
        for r in shown:
            _include(d, r, only)
            stack = [r]
            while stack:
                h = place(stack.pop())[0]
                chain = chains[h]
                only[h] = len(chain) - 1
                stack.extend(children.get(chain[-1], ()))
        layout = _fold(tree, d, fold, keep, expand, only)
        _add_more(layout, d, sides, hidden, rank)
        if layout.size() <= cap or not shown:
            break
        shown = shown[: len(shown) * 3 // 4]  # the estimate was short: draw fewer side branches
    layout.capped = True
    return layout


def _add_more(layout: GraphLayout, d: _Drawn, sides, hidden: set[str], rank) -> None:
    """One "N more branches here" node per drawn node that left-out branches fork from; the
    entries left out are shown by it (selecting one there brings it into the drawing)."""
    groups: dict[str, MoreBranches] = {}
    anchors: dict[str, list[tuple[int, str]]] = {}
    for r, p in sides:
        if r not in hidden:
            continue
        attach = layout.dom_for(p) if p else "roots"
        g = groups.get(attach)
        if g is None:
            g = groups[attach] = MoreBranches(attach, [], 0, 0)
            anchors[attach] = []
        size, leaves, _, _ = d.subtree(r)
        g.branches += leaves
        g.entries += size
        anchors[attach].append((rank(r, p), p or r))
        h, i = d.place(r)
        layout.hidden.setdefault(h, []).append((i, g.id))
    for marks in layout.hidden.values():
        marks.sort()
    for attach, g in groups.items():
        for _, a in sorted(anchors[attach]):
            if a not in g.anchors:
                g.anchors.append(a)
            if len(g.anchors) >= MORE_OPEN:
                break
        layout.more.append(g)
        if attach != "roots":
            layout.edges.append((attach, g.id))


RANKDIRS = ("TB", "LR")  # top-down, left-to-right: the two directions a drawing is laid out in
# What "auto" weighs a direction by: the graph pane at 1280x720 (the side panel takes the rest),
# and the smallest scale at which the smallest node text (9 pt) renders at 11 px (static/app.js
# never lets "Fit" go below it). A node is about 160 x 26 pt; dot puts 0.25 in between siblings
# and 0.3 in between ranks.
PANE = (820.0, 560.0)
LEGIBLE_SCALE = 11 / 9
_NODE_W, _NODE_H, _NODESEP, _RANKSEP = 160.0, 26.0, 18.0, 21.6


def drawing_extent(layout: GraphLayout, rankdir: str) -> tuple[float, float]:
    """About how wide and tall dot draws `layout` in `rankdir`, in points: its ranks (depth)
    along one axis, its widest rank along the other."""
    kids: dict[str, list[str]] = {}
    has_parent: set[str] = set()
    for a, b in layout.edges:
        kids.setdefault(a, []).append(b)
        has_parent.add(b)
    ids = [dom_id(e.id) for e in layout.nodes] + [s.id for s in layout.segments] + [m.id for m in layout.more]
    per_rank: dict[int, int] = {}
    stack = [(x, 0) for x in ids if x not in has_parent]
    while stack:
        x, depth = stack.pop()
        per_rank[depth] = per_rank.get(depth, 0) + 1
        stack.extend((k, depth + 1) for k in kids.get(x, ()))
    ranks, widest = max(len(per_rank), 1), max(per_rank.values(), default=1)
    if rankdir == "LR":
        return ranks * (_NODE_W + _RANKSEP), widest * (_NODE_H + _NODESEP)
    return widest * (_NODE_W + _NODESEP), ranks * (_NODE_H + _RANKSEP)


def choose_rankdir(layout: GraphLayout, pane: tuple[float, float] = PANE) -> str:
    """The direction that shows the most of the drawing at "Fit" on `pane`: the largest share
    of it in view at a legible scale, then the largest scale (a small tree drawn big)."""
    def score(rankdir: str) -> tuple[float, float]:
        w, h = drawing_extent(layout, rankdir)
        scale = max(min(pane[0] / w, pane[1] / h), LEGIBLE_SCALE)
        shown = min(1.0, pane[0] / (scale * w)) * min(1.0, pane[1] / (scale * h))
        return round(shown, 3), min(pane[0] / w, pane[1] / h)

    return max(RANKDIRS, key=score)  # TB first: it wins a tie


def _node_style(tree: SessionTree, e: Entry) -> tuple[str, dict[str, str]]:
    """The label and dot attributes that say an entry's type at a glance."""
    classes = ["t-" + css_token(e.type).replace("_", "-")]
    attrs: dict[str, str] = {}
    text = dot_text(entry_text(e))
    if e.type == MESSAGE:
        role = e.role if isinstance(e.role, str) and e.role else "message"
        classes.append("r-" + css_token(role))
        if role == "user":
            attrs.update(shape="box", style="rounded,filled", fillcolor="#dbeafe", color="#2563eb", penwidth="1.5")
            label = text or "(empty)"
        elif role == "assistant":
            calls = tool_calls(e)
            attrs.update(shape="box", style="filled", fillcolor="#f3f4f6", color="#6b7280")
            if calls:
                classes.append("has-tools")
                attrs.update(fillcolor="#fef9c3", color="#a16207")
            if e.message.get("stopReason") in ("error", "aborted"):
                classes.append("is-error")
                attrs.update(color="#dc2626", fontcolor="#991b1b")
            label = text or "(no text)"
        elif role == "toolResult":
            err = bool(e.message.get("isError"))
            attrs.update(shape="box", style="filled", fillcolor="#fee2e2" if err else "#ecfdf5",
                         color="#dc2626" if err else "#059669", fontsize="9")
            if err:
                classes.append("is-error")
            label = dot_text(f"{e.message.get('toolName', 'tool')}: {content_text(e.message.get('content'), ' ')}")
        else:
            attrs.update(shape="box", style="filled", fillcolor="#ede9fe", color="#7c3aed")
            label = text
    elif e.type == COMPACTION:
        before, after = e.get("tokensBefore"), e.get("tokensAfter")
        tokens = format_tokens(before) if isinstance(before, int) else "?"
        if isinstance(after, int):
            tokens += " → " + format_tokens(after)
        attrs.update(shape="folder", style="filled", fillcolor="#fde68a", color="#b45309", penwidth="2")
        label = f"compaction\n{tokens} tokens"
    elif e.type == BRANCH_SUMMARY:
        attrs.update(shape="note", style="filled", fillcolor="#e0e7ff", color="#4338ca")
        label = "branch summary\n" + text
    elif e.type in META_TYPES:
        classes.append("meta")
        attrs.update(shape="box", style="filled", fillcolor="#f9fafb", color="#d1d5db",
                     fontsize="9", fontcolor="#4b5563", height="0.2")
        label = text
    else:
        attrs.update(shape="box", style="dashed", color="#9ca3af")
        label = dot_text(e.type)
    if e.id in tree.labels:
        label = f"◆ {dot_text(tree.labels[e.id])}\n{label}"
        classes.append("labelled")
    if e.id in tree.orphans or e.id in tree.cycle_cuts:
        classes.append("has-problem")
        attrs.update(color="#dc2626", penwidth="2")
        label = ("⚠ orphan: parent missing" if e.id in tree.orphans else "⚠ parent loop cut") + "\n" + label
    attrs["class"] = " ".join(classes)
    return label, attrs


def _tooltip(tree: SessionTree, e: Entry) -> str:
    """What hovering a node says: its whole first line and what it costs in tokens."""
    text = entry_text(e) or str(e.type)
    return f"{dot_text(text, 160)} · {format_tokens(e.tokens)} tokens"


MAX_DOT_URL = 4000  # dot reads no quoted string longer than 16,384 characters


def _quoted(value) -> str:
    """A dot string: every text in it went through dot_text (backslashes doubled), so only the
    quotes are left to escape."""
    return '"' + str(value).replace('"', '\\"') + '"'


class DotGraph:
    """The few calls of `graphviz.Digraph` a drawing makes, writing the source directly (the
    library's quoting of each attribute took longer than laying out a 1,000-node drawing)."""

    def __init__(self, name: str):
        self.name = name
        self._lines: list[str] = []

    @staticmethod
    def _attrs(attrs: dict) -> str:
        return " ".join(f"{k}={_quoted(v)}" for k, v in attrs.items())

    def attr(self, kind: str = "graph", **attrs) -> None:
        self._lines.append(f"\t{kind} [{self._attrs(attrs)}]")

    def node(self, name: str, **attrs) -> None:
        ident = attrs.pop("id", None)  # first, so that the line starts with what names the node
        head = {"id": ident} if ident is not None else {}
        self._lines.append(f"\t{_quoted(name)} [{self._attrs({**head, **attrs})}]")

    def edge(self, a: str, b: str) -> None:
        self._lines.append(f"\t{_quoted(a)} -> {_quoted(b)}")

    def subgraph(self, graph: "DotGraph") -> None:
        self._lines.append(graph.source.replace("digraph ", "subgraph ", 1))

    @property
    def source(self) -> str:
        return f"digraph {_quoted(self.name)} {{\n" + "\n".join(self._lines) + "\n}\n"


def node_specs(tree: SessionTree, layout: GraphLayout, link) -> dict[str, dict]:
    """Dom id -> the label and dot attributes of every drawn node (what to_dot writes, and what
    patch_drawing compares); `link(entry_id, extra=None)` gives a node's URL."""
    active_leaf = tree.conversation_leaf(tree.active_leaf)
    active = set(layout.path_doms(active_leaf))  # the drawn nodes on the active path
    specs: dict[str, dict] = {}
    for e in layout.nodes:
        label, attrs = _node_style(tree, e)
        if dom_id(e.id) in active:
            attrs["class"] += " on-active"
            attrs.setdefault("penwidth", "2")
        if e.id == active_leaf:
            attrs["class"] += " active-leaf"
            attrs.update(penwidth="3", color="#16a34a")
            label += "\n● active leaf"
        # Quoted: a label such as "<b>hi</b>" is text to show, not one of dot's HTML labels.
        specs[dom_id(e.id)] = dict(label=label, URL=link(e.id), id=dom_id(e.id), tooltip=_tooltip(tree, e), **attrs)
    for seg in layout.segments:
        on_active = seg.id in active
        count = seg.tokens(tree)
        size = f"{len(seg.ids)} entries" + (f" · {format_tokens(count)} tokens" if count is not None else "")
        turns = seg.user_turns()
        if turns:  # a chain of turns, folded because the path is too long to draw turn by turn
            first = seg.first_user_line()
            lines = [f"⋯ {turns} turn{'s' if turns > 1 else ''} · {size} ⋯", dot_text(first)]
            kind, fill = "segment turns", "#ffffff"
        else:  # the assistant's work in one turn: its steps, the tools it called, what it cost
            first = seg.first_text()
            lines = [f"⚙ assistant · {size}", seg.tool_chips(), dot_text(first)]
            kind, fill = "segment turn-work", "#f3f4f6"
        specs[seg.id] = dict(
            label="\n".join(x for x in lines if x),
            shape="box",
            style="dashed,filled",
            fillcolor=fill,
            color="#6b7280",
            fontsize="9",
            id=seg.id,
            URL=link(seg.first_id),
            tooltip=f"{len(seg.ids)} entries folded: click to expand · " + dot_text(first, 160),
            **{"class": kind + (" on-active" if on_active else "")},
        )
    for more in layout.more:
        s = "" if more.branches == 1 else "es"
        if more.branches:
            label = f"⊞ {more.branches} more branch{s} here\n{more.entries} entries"
            tip = f"{more.branches} side branch{s} left out of this drawing: click to draw them"
        else:  # (only where sub-agents' runs end: they are no branches)
            label, tip = f"⊞ {more.entries} more entries here", "sub-agent work left out of this drawing: click to draw it"
        specs[more.id] = dict(
            label=label,
            shape="box",
            style="dashed,rounded,filled",
            fillcolor="#f5f3ff",
            color="#7c3aed",
            fontsize="9",
            id=more.id,
            URL=link(more.anchors[0], {"open": ",".join(more.anchors)}),
            tooltip=tip,
            **{"class": "segment more"},
        )
    return specs


def _linker(node_url, long_urls: dict[str, str]):
    """`link(entry_id, extra)`: a node's URL; one too long for dot (an entry id of thousands of
    characters) is a placeholder, kept in `long_urls` for render_drawing to put back."""

    def link(entry_id: str, extra: dict | None = None) -> str:
        url = node_url(entry_id)
        if extra and not url.startswith("#"):
            url += ("&" if "?" in url else "?") + urlencode(extra)
        if len(url) <= MAX_DOT_URL:
            return url
        token = f"?long={len(long_urls)}"
        long_urls[token] = url
        return token

    return link


def to_dot(tree: SessionTree, layout: GraphLayout, node_url, long_urls: dict[str, str] | None = None,
           rankdir: str = "TB", specs: dict[str, dict] | None = None) -> DotGraph:
    """The dot graph, laid out in `rankdir` (RANKDIRS); `node_url(entry_id)` gives the link each node carries (its deep link; a
    "more branches" node adds the `open` parameter); `specs` are the node_specs when made already."""
    if long_urls is None:
        long_urls = {}
    if specs is None:
        specs = node_specs(tree, layout, _linker(node_url, long_urls))
    g = DotGraph("session")
    g.attr(rankdir=rankdir if rankdir in RANKDIRS else "TB", nodesep="0.25", ranksep="0.3", bgcolor="transparent")
    g.attr("node", fontname="DejaVu Sans", fontsize="10", margin="0.12,0.04", height="0.3")
    g.attr("edge", color="#9ca3af", arrowhead="none")  # a tree drawn down or rightwards needs no arrows
    clusters = _subagent_clusters(tree, layout)
    sub = {root: DotGraph(f"cluster_{i}") for i, root in enumerate(dict.fromkeys(clusters.values()))}
    for root, c in sub.items():
        c.attr(label=f"sub-agent · {dot_text(_first_line(tree, root), 40)}", style="rounded,dashed", color="#8b5cf6",
               fontcolor="#6d28d9", fontsize="9", labeljust="l")
    for name, attrs in specs.items():
        root = clusters.get(name)  # a sub-agent's nodes go in its cluster
        (sub[root] if root is not None else g).node(name, **attrs)
    for c in sub.values():
        g.subgraph(c)
    for a, b in layout.edges:
        g.edge(a, b)
    return g


def _first_line(tree: SessionTree, entry_id: str) -> str:
    return entry_text(tree.by_id[entry_id]) or str(tree.by_id[entry_id].type)


def _subagent_clusters(tree: SessionTree, layout: GraphLayout) -> dict[str, str]:
    """Drawn node -> the first entry of the sub-agent run it belongs to (Claude Code sidechain
    entries, `Entry.sidechain`): each run is drawn boxed, off the main path."""
    roots: dict[str, str] = {}

    def root_of(entry_id: str) -> str:
        seen = []
        node = entry_id
        while node not in roots:
            parent = tree.parent.get(node)
            if parent is None or not getattr(tree.by_id[parent], "sidechain", False):
                roots[node] = node
                break
            seen.append(node)
            node = parent
        for x in seen:
            roots[x] = roots[node]
        return roots[node]

    out: dict[str, str] = {}
    for e in layout.nodes:
        if getattr(e, "sidechain", False):
            out[dom_id(e.id)] = root_of(e.id)
    for seg in layout.segments:
        if all(getattr(tree.by_id[x], "sidechain", False) for x in seg.ids):
            out[seg.id] = root_of(seg.first_id)
    return out


class DotTimeout(RuntimeError):
    """`dot` took longer than its limit (and was killed)."""


DOT_TIMEOUT = 8.0  # seconds one `dot` run may take before the page falls back
DOT_POLL = 0.1  # seconds between two looks at whether the client is still there
_running: set[subprocess.Popen] = set()
_running_lock = threading.Lock()


_SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None


def _die_with_parent() -> None:  # runs in the child, between fork and exec
    """`dot` gets SIGKILL when the thread that started it ends (request over, server stopped)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def run_dot(source: str, timeout: float | None = None) -> str:
    """`dot -Tsvg` on `source`, killed past `timeout` seconds (DotTimeout), when no client wants
    the drawing any more (ClientGone), or with the server."""
    limit = DOT_TIMEOUT if timeout is None else timeout
    if not client.still_wanted():
        raise ClientGone("the client left before the drawing was made")
    # setpriv asks for the same signal as _die_with_parent, and lets Python start `dot` without
    # copying the server's memory map first (a preexec_fn forces a fork: 0.2 s for a big session).
    linux = sys.platform.startswith("linux")
    proc = subprocess.Popen(
        [_SETPRIV, "--pdeathsig", "KILL", "dot", "-Tsvg"] if _SETPRIV else ["dot", "-Tsvg"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=_die_with_parent if linux and not _SETPRIV else None,
    )
    with _running_lock:
        _running.add(proc)
    deadline = time.monotonic() + limit
    data: bytes | None = source.encode("utf-8")
    try:
        while True:
            try:
                out, err = proc.communicate(data, timeout=max(0.0, min(DOT_POLL, deadline - time.monotonic())))
                break
            except subprocess.TimeoutExpired:
                data = None  # sent already: communicate goes on where it stopped
                if time.monotonic() >= deadline:
                    raise DotTimeout(f"dot took longer than {limit:g} s") from None
                if not client.still_wanted():
                    raise ClientGone("the client left while the drawing was being made") from None
    finally:
        if proc.poll() is None:  # timed out, abandoned, or the request was interrupted
            proc.kill()
            proc.communicate()
        with _running_lock:
            _running.discard(proc)
    if proc.returncode != 0:
        raise RuntimeError("dot failed: " + err.decode("utf-8", "replace").strip()[:300])
    return out.decode("utf-8")


@atexit.register
def kill_running_dots() -> None:
    """No `dot` outlives the server."""
    with _running_lock:
        procs = list(_running)
    for proc in procs:
        if proc.poll() is None:
            proc.kill()


_DOT_COMMENT = re.compile(r"<!--.*?-->\n", re.S)
_DOT_NOISE = re.compile(r'<title>[^<]*</title>\n?| id="(?:a_[^"]*|edge\d+)"| font-family="[^"]*"| text-anchor="middle"')
_GEOMETRY = re.compile(r'( (?:points|d|x|y)=")([^"]*)')
_PRECISION = re.compile(r"(\d\.\d)\d+")


def render_svg(tree: SessionTree, layout: GraphLayout, node_url, timeout: float | None = None,
               rankdir: str = "TB") -> str:
    """The drawing as inline SVG; DotTimeout when `dot` runs out of time."""
    return render_drawing(tree, layout, node_url, timeout, rankdir).svg


@dataclass
class Drawing:
    """A laid-out drawing: its SVG, the node_specs it was made from, and its shape (what must stay
    the same for patch_drawing to reuse it)."""

    svg: str
    specs: dict[str, dict]
    shape: tuple


def _shape(tree: SessionTree, layout: GraphLayout) -> tuple:
    return ([dom_id(e.id) for e in layout.nodes], [s.id for s in layout.segments], layout.more,
            frozenset(layout.edges), layout.collapsed, bool(_subagent_clusters(tree, layout)))


def drawing_specs(tree: SessionTree, layout: GraphLayout, node_url) -> tuple[dict[str, dict], dict[str, str]]:
    """The node specs of a drawing and the long URLs their placeholders stand for (`_linker`):
    made once per drawing, for `patch_drawing` and, when it cannot patch, `render_drawing`."""
    long_urls: dict[str, str] = {}
    return node_specs(tree, layout, _linker(node_url, long_urls)), long_urls


def render_drawing(tree: SessionTree, layout: GraphLayout, node_url, timeout: float | None = None,
                   rankdir: str = "TB", prepared: tuple[dict, dict] | None = None) -> Drawing:
    """The drawing laid out by `dot` (with its `drawing_specs`, when made already); DotTimeout
    when it runs out of time."""
    specs, long_urls = prepared or drawing_specs(tree, layout, node_url)
    svg = run_dot(to_dot(tree, layout, node_url, long_urls, rankdir, specs).source, timeout)
    svg = svg[svg.index("<svg"):]  # drop the XML prolog and doctype: the SVG is inlined in HTML
    for token, url in long_urls.items():
        svg = svg.replace(f'"{token}"', f'"{html.escape(url)}"')
    # The same drawing in about half the bytes, for 100k-entry sessions: dot's comments, <title>s
    # and anchor and edge ids only repeat node names; the font and centring are set once in app.css;
    # coordinates keep one decimal (a twentieth of a pixel); and `&#45;` (dot's escape for "-",
    # so that names never put "--" in a comment) is a plain "-" outside comments.
    svg = _DOT_NOISE.sub("", _DOT_COMMENT.sub("", svg))
    svg = _GEOMETRY.sub(lambda m: m.group(1) + _PRECISION.sub(r"\1", m.group(2)), svg)
    return Drawing(svg.replace("&#45;", "-"), specs, _shape(tree, layout))


def patch_drawing(tree: SessionTree, layout: GraphLayout, before: Drawing,
                  prepared: tuple[dict, dict]) -> Drawing | None:
    """`before` changed where an append changed it, without `dot` (issue 13.2): when the drawing
    keeps its shape (the same folds and edges, at most one node standing for another: the old
    active leaf folded into the turn above and the new entry took its place), the nodes whose
    text, link or colours changed are written again in their old boxes. None when the shape
    changed, or a new text would not fit its box (then `dot` lays it out again). `prepared`: the
    new drawing's `drawing_specs`."""
    specs, long_urls = prepared
    shape = _shape(tree, layout)
    nodes, segments, more, edges, collapsed, clusters = shape
    old_nodes, old_segments, old_more, old_edges, old_collapsed, old_clusters = before.shape
    if long_urls or clusters or old_clusters or (segments, more, collapsed) != (old_segments, old_more, old_collapsed):
        return None
    gone, new = set(old_nodes) - set(nodes), set(nodes) - set(old_nodes)
    if len(gone) != len(new) or len(new) > 1:
        return None
    was = {new.pop(): gone.pop()} if new else {}
    if {(was.get(a, a), was.get(b, b)) for a, b in edges} != old_edges:
        return None
    svg = before.svg
    for name, attrs in specs.items():
        old = before.specs[was.get(name, name)]
        if old != attrs:
            svg = _patch_node(svg, was.get(name, name), old, attrs)
            if svg is None:
                return None
    return Drawing(svg, specs, shape)


_NODE_START = re.compile(r'<g id="([^"]*)" class="node[^"]*">\n<g><a [^>]*>\n(<(?:polygon|path) [^>]*/>\n)')
_TEXT = re.compile(r'<text x="([^"]*)" y="([^"]*)"[^>]*>[^<]*</text>\n')
_WIDE = frozenset("MWmw@%#&")
_NARROW = frozenset(" .,:;'|!ilIjft()[]")


def _text_width(text: str) -> float:
    """About how wide a line is, in ems (only ever compared with another line of the same node)."""
    return sum(0.32 if c in _NARROW else 0.95 if c in _WIDE or ord(c) > 0x2000 else 0.64 for c in text)


def _svg_text(text: str) -> str:
    return html.escape(text.replace("\\\\", "\\"))  # dot_text doubled backslashes for dot


def _patch_node(svg: str, old_id: str, old: dict, new: dict) -> str | None:
    """The node `old_id` of `svg` written again from `new` in its old box; None when it cannot be
    (another shape or style, more lines, a line wider than the widest before)."""
    if any(old.get(k) != new.get(k) for k in ("shape", "style", "fontsize")):
        return None
    start = svg.find(f'<g id="{old_id}" class="node')
    end = svg.find("</a>\n</g>\n</g>\n", start)
    m = _NODE_START.match(svg, start) if start >= 0 and end >= 0 else None
    if m is None:
        return None
    texts = _TEXT.findall(svg, m.end(), end)
    old_lines, lines = old["label"].split("\n"), new["label"].split("\n")
    if len(texts) != len(old_lines) or len(lines) > len(old_lines) or (
            max(map(_text_width, lines)) > max(map(_text_width, old_lines)) + 0.5):
        return None
    ys = [float(y) for _, y in texts]
    step = ys[1] - ys[0] if len(ys) > 1 else 0.0
    middle = sum(ys) / len(ys)
    if len(lines) != len(ys):
        ys = [middle + (i - (len(lines) - 1) / 2) * step for i in range(len(lines))]
    fill = new.get("fillcolor", "lightgrey") if "filled" in new.get("style", "") else "none"
    outline = re.sub(r' stroke-width="[^"]*"', "", m.group(2))
    outline = re.sub(r' fill="[^"]*"', f' fill="{fill}"', outline, count=1)
    width = new.get("penwidth")
    stroke = f' stroke="{new.get("color", "black")}"' + (f' stroke-width="{width}"' if width and float(width) != 1 else "")
    outline = re.sub(r' stroke="[^"]*"', stroke, outline, count=1)
    size = f'{float(new.get("fontsize", 10)):.2f}'
    color = f' fill="{new["fontcolor"]}"' if "fontcolor" in new else ""
    block = (f'<g id="{new["id"]}" class="node {new["class"]}">\n'
             f'<g><a xlink:href="{html.escape(new["URL"])}" xlink:title="{_svg_text(new["tooltip"])}">\n{outline}'
             + "".join(f'<text x="{texts[0][0]}" y="{y:.1f}" font-size="{size}"{color}>{_svg_text(line)}</text>\n'
                       for line, y in zip(lines, ys)))
    return svg[:start] + block + svg[end:]
