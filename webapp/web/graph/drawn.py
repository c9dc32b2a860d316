"""The drawn tree of a file: its entries cut into chains (runs of single-child entries between
branch points), where each entry sits along them, and per-chain figures of the subtree below.
Made once per reading of a file and grown in place by appends, so that a drawing costs the
chains it touches, not the entries of the file."""

from __future__ import annotations

import bisect
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from itertools import compress

from ...core.entries import BRANCH_SUMMARY, COMPACTION, CUSTOM, MARKER_TYPES, MESSAGE, Entry, is_marker
from ...core.reader import gc_paused
from ...core.tree import SessionTree


@dataclass(eq=False)  # (hashable: layouts are cached by it)
class Drawn:
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


def include_path(d: Drawn, x: str, into: dict[str, int]) -> None:
    """Add `x` and the path above it to a chain restriction (head -> last position drawn)."""
    h, i = d.place(x)
    while into.get(h, -1) < i:
        into[h] = i
        up = d.up[h]
        if up is None:
            return
        h, i = d.place(up)


# Where a drawn entry is (its chain's head and its position there) is kept for every
# PLACE_EVERY-th entry of a chain (its head first) and its last one (a branch point, which
# layouts ask for most) only: two maps of every entry cost 16 MB at 270k entries. Any
# other entry's place is found in at most PLACE_EVERY - 1 steps up the tree.
PLACE_EVERY = 16


def _place(marks: dict[str, tuple[str, int]], by_id, x: str) -> tuple[str, int] | None:
    """(Chain head, position) of the drawn entry `x`, from the nearest kept place above it: an
    entry's predecessor in its chain is its parent, markers looked through (as chains are made)."""
    found = marks.get(x)
    if found is not None:
        return found
    e = by_id.get(x)
    if e is None or is_marker(e):
        return None  # (not drawn)
    for steps in range(1, PLACE_EVERY):
        p = e.parent_id
        e = by_id.get(p) if p is not None else None
        while e is not None and is_marker(e):
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


def _figures(d: Drawn, tree: SessionTree) -> None:
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


_drawn_cache: "weakref.WeakKeyDictionary[SessionTree, Drawn]" = weakref.WeakKeyDictionary()
# First entry of a reading -> its latest drawn tree, which the next append grows (the tree it was
# made for is gone by then). A drawn tree holds ids, not entries: a file the store let go costs
# its ids here, for the last 8 files.
_lineage: "OrderedDict[int, tuple[Entry, Drawn]]" = OrderedDict()
_lineage_lock = threading.Lock()
GROW_MOST = 5000  # appended entries one extension takes on; past it the drawn tree is made anew


def drawn_tree(tree: SessionTree) -> Drawn:
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


def _drawn_anew(tree: SessionTree) -> Drawn:
    entries, by_id, tchildren = tree.entries, tree.by_id, tree.children
    markers: list[str] = []
    users: set[str] = set()
    unfoldable: set[str] = set()
    for e in entries:
        t = e.type
        if t == MESSAGE:
            if e.role == "user":
                users.add(e.id)
        elif t in MARKER_TYPES or (t == CUSTOM and is_marker(e)):
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
    d = Drawn(roots, chains, marks, count, weakref.ref(tree), up, forks, users_at, unfoldable, maxline, {},
               _basis(tree))
    _figures(d, tree)
    return d


def _grown(tree: SessionTree, old: Drawn) -> Drawn | None:
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
        if t in MARKER_TYPES or (t == CUSTOM and is_marker(e)):
            continue
        x, line = e.id, e.line or 0
        if x in marks or x in up:  # an id written twice: a new reading sorts it out
            return None
        count += 1
        user = t == MESSAGE and e.role == "user"
        if t == COMPACTION or t == BRANCH_SUMMARY:
            unfoldable.add(x)
        p = tparent.get(x)
        if p is not None and is_marker(by_id[p]):
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
    d = Drawn(roots, chains, marks, count, weakref.ref(tree), up, forks, users_at, unfoldable, maxline, old.units,
               _basis(tree))
    _figures(d, tree)
    return d
