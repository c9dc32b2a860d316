"""Folding and bounding: which nodes one drawing holds. User messages stay drawn and the
assistant's work between two of them folds into one segment; paths too long for that fold
chains of turns. Branch points, compactions, branch summaries, labelled nodes, leaves, roots and
pinned nodes stay visible, and past MAX_DRAWN nodes side branches wait in "more branches" nodes,
whatever the tree's shape."""

from __future__ import annotations

import bisect
import heapq
import weakref
from dataclasses import dataclass, field

from ...core.entries import COMPACTION, Entry, content_text, tool_calls
from ...core.reader import first_kept_id, gc_paused
from ...core.tree import SessionTree
from .drawn import Drawn, drawn_tree, include_path
from .retries import Retries, fold_retries, spine_of
from .text import dom_id, dot_text

COLLAPSE_THRESHOLD = 200  # draw everything below this many nodes, unless told otherwise
LEVELS = ("auto", "on", "off", "skeleton")  # how far a drawing folds (build_layout's `collapse`)
MIN_SEGMENT = 4  # shorter runs are not worth folding
# The most nodes one drawing sends to `dot`, whatever the tree's shape (see BENCHMARKS.md,
# "graph": the SVG of 1,000 nodes stays under 1 MB and dot lays it out in under a second).
MAX_DRAWN = 1000
MAX_EXPAND = 256  # unfolded segments and opened branch groups one URL may name
MORE_OPEN = 50  # branch points one "more branches" node opens at once
# The most nodes the skeleton draws: about 40 leaves with their runs and branch points, what a
# graph pane shows at a legible size; past it side branches group by fork point.
SKELETON_DRAWN = 120
# About how big dot draws a skeleton node (one line, see dot.to_dot), in points: width, height,
# room between siblings and between ranks; and the graph pane at 1280x720 in points at the scale
# where its 9 pt text renders at 11 px: side branches group until the skeleton fits it.
SKELETON_NODE = (200.0, 17.0, 8.6, 10.8)
SKELETON_PANE = (760 * 9 / 11, 600 * 9 / 11)


SEGMENT_FIGURES = 5000  # past this many entries a fold's label leaves out the figures that read bodies


@dataclass
class Segment:
    """A folded run of consecutive single-child entries (`ids`, in order along the path)."""

    ids: list[str]
    tree: SessionTree = field(repr=False, compare=False)
    turns: int = 0  # user messages folded in (a chain of turns)
    # A run of the skeleton opens to its turns, whose first fold may start where it does: its
    # `expand` id is its last entry ("" for any other fold: its first).
    opens: str = ""

    @property
    def key(self) -> str:
        """The `expand` id that unfolds it."""
        return self.opens or self.ids[0]

    @property
    def id(self) -> str:
        return ("run-" if self.opens else "seg-") + dom_id(self.ids[0])  # (an opened run's first fold starts where it did)

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
    retries: list[Retries] = field(default_factory=list)  # fork points along one path, folded
    edges: list[tuple[str, str]] = field(default_factory=list)  # dom ids
    collapsed: bool = False
    level: str = ""  # "skeleton" for the tree's shape only (drawn compact: see style and dot)
    capped: bool = False  # the tree was too big for one drawing: some side branches are left out
    counted: int | None = None  # a layout only counted (see _fold): its size
    one_branch: bool = False  # one branch alone (one_branch.py): drawn as a straight column, its groups beside it
    drawn: "Drawn | None" = field(default=None, repr=False, compare=False)
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
    # chain head -> (the first position folded in a fold of fork points, that fold)
    retried: dict[str, tuple[int, Retries]] = field(default_factory=dict, repr=False)

    def signature(self) -> tuple:
        """What the drawing of this layout depends on (a drawing is cached on it): what is folded,
        grouped and drawn as itself (a drawing of one branch cut from another holds fewer nodes)."""
        return (self.collapsed, self.level, tuple(s.first_id for s in self.segments), tuple(m.id for m in self.more),
                tuple(r.id for r in self.retries), len(self.nodes))

    def ranks(self) -> tuple[int, int]:
        """How many ranks (depths) the drawing has, and how many nodes its widest one holds."""
        kids: dict[str, list[str]] = {}
        has_parent: set[str] = set()
        for a, b in self.edges:
            kids.setdefault(a, []).append(b)
            has_parent.add(b)
        ids = [dom_id(e.id) for e in self.nodes] + [s.id for s in self.segments] + [m.id for m in self.more] + [
            r.id for r in self.retries]
        per_rank: dict[int, int] = {}
        stack = [(x, 0) for x in ids if x not in has_parent]
        while stack:
            x, depth = stack.pop()
            per_rank[depth] = per_rank.get(depth, 0) + 1
            stack.extend((k, depth + 1) for k in kids.get(x, ()))
        return max(len(per_rank), 1), max(per_rank.values(), default=1)

    def size(self) -> int:
        """Nodes sent to dot."""
        if self.counted is not None:
            return self.counted
        return len(self.nodes) + len(self.segments) + len(self.more) + len(self.retries)

    def _retried(self, h: str, i: int) -> Retries | None:
        """The fold of fork points that holds position `i` of chain `h` on its path, if any."""
        hit = self.retried.get(h)
        return hit[1] if hit is not None and i >= hit[0] else None

    def member(self, entry_id: str) -> str | None:
        """The segment, "more branches" node or fold of fork points an entry is folded into or
        left out in; None when it is drawn as itself (or is not in the drawn tree)."""
        d = self.drawn
        where = d.place(entry_id) if d is not None else None
        return self._member_at(where) if where is not None else None

    def _member_at(self, where: tuple[str, int]) -> str | None:
        """`member` of the entry at `where` (its chain's head, its position there)."""
        d = self.drawn
        h, i = where
        folded = self._retried(h, i) if self.retried else None
        if folded is not None:
            return folded.id
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
            folded = self._retried(h, i) if self.retried else None
            if folded is not None:  # a side branch of a folded fork point
                return folded.id
        return None

    def dom_for(self, entry_id: str) -> str:
        """The drawn node an entry is shown by: itself, or the segment or group that holds it."""
        return self.member(entry_id) or dom_id(entry_id)

    def doms_along(self, path: list[Entry]) -> list[str]:
        """`dom_for` of each entry of a path from a root, its places found by walking it (an
        entry's place is the one before it plus one, in the same chain) rather than asked for
        one by one: the Context tab maps a path of thousands of entries on every click."""
        d = self.drawn
        out: list[str] = []
        prev: tuple[str, int] | None = None
        for e in path:
            where = None
            if d is not None:
                where = d.marks.get(e.id)
                if where is None and prev is not None:
                    h, i = prev
                    chain = d.chains[h]
                    if i + 1 < len(chain) and chain[i + 1] == e.id:
                        where = (h, i + 1)
                if where is None:
                    where = d.place(e.id)
            if where is not None:
                prev = where
            member = self._member_at(where) if where is not None else None
            out.append(member or dom_id(e.id))
        return out

    def path_doms(self, entry_id: str | None) -> list[str]:
        """The drawn nodes on the path from the root to `entry_id`, in order: a fold counts
        once, and a long folded path costs its folds, not its entries."""
        d = self.drawn
        out: list[str] = []
        h, i = (d.place(entry_id) if d is not None and entry_id is not None else None) or (None, -1)
        while h is not None:
            folded = self._retried(h, i) if self.retried else None
            if folded is not None:  # the path goes through a fold of fork points: it counts once
                out.append(folded.id)
                h, i = folded.start, self.retried[folded.start][0] - 1
                continue
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
        if drawn.startswith(("more-", "retries-")):
            return {entry_id}
        return {s.key for s in self.segments if s.id == drawn}



def build_layout(
    tree: SessionTree, collapse: str = "auto", expand: frozenset[str] = frozenset(), pinned: frozenset[str] = frozenset(),
    cap: int = MAX_DRAWN,
) -> GraphLayout:
    """Decide what to draw. `collapse` is "auto" (fold past COLLAPSE_THRESHOLD), "on", "off" or
    "skeleton" (only the tree's shape, see _fold, in at most SKELETON_DRAWN nodes); `expand`
    holds the first entry ids of segments the user unfolded (a skeleton run's: its last), the fork points whose
    left-out branches the user opened and entries brought into view; `pinned` entries stay
    visible. At most `cap` nodes: past it, side branches are left out, ranked (opened, labelled,
    recent, large first), and each drawn node they fork from gets one "N more branches" node."""
    with gc_paused():
        d = drawn_tree(tree)
        fold = collapse == "on" or (collapse == "auto" and d.count > COLLAPSE_THRESHOLD)
        keep = set(pinned) | set(tree.labels)
        if tree.joined is not None:  # where each file of a conversation starts stays drawn (its box begins there)
            keep |= tree.joined.boundaries
        active_leaf = tree.conversation_leaf(tree.active_leaf)
        if active_leaf is not None:
            keep.add(active_leaf)
        # Where a compaction's kept part starts stays drawn: a fold never straddles what the model
        # sees and what a summary replaced.
        if collapse == "skeleton":
            return _skeleton(tree, d, keep, expand, pinned, active_leaf, min(cap, SKELETON_DRAWN))
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


def _skeleton(tree, d: Drawn, keep, expand, pinned, active_leaf, cap: int) -> GraphLayout:
    """The skeleton (see _fold), bounded like any drawing; where a compaction's kept part starts
    is not drawn in it (the compaction is)."""
    plain = _plain_fold(tree, d, "skeleton", keep)
    memo: dict = {}  # what the bounded drawings below share (see _bounded): each is of the same tree
    layout = None
    if plain.size() <= cap:
        layout = _fold(tree, d, "skeleton", keep, expand)
    folds: list[Retries] = []
    if layout is None or layout.size() > cap:
        # Thousands of fork points along one path (a session retried often) fold first.
        folds = fold_retries(tree, d, spine_of(d, [active_leaf, *pinned, *expand]), keep, expand, active_leaf)
        layout = _bounded(tree, d, keep, expand, pinned, active_leaf, cap, plain, "skeleton", folds, memo)
    # Too wide or deep for the pane: fewer side branches, grouped by fork point ("⊞ N more
    # branches"), never fewer nodes than the paths that must stay hold (to the active leaf, the
    # pinned entries and what the user opened: a smaller cap would fold their compactions and
    # labels away), and never a branch the user opened (a click on its group would not draw it).
    floor = len({x for e in (active_leaf, *pinned, *expand) for x in layout.path_doms(e)}) + 1
    while not _fits(layout) and layout.size() * 4 // 5 >= floor:
        smaller = _bounded(tree, d, keep, expand, pinned, active_leaf, _smaller_cap(layout, floor), plain, "skeleton",
                           folds, memo)
        if smaller.size() >= layout.size() or any(a in expand for m in smaller.more for a in m.anchors):
            break
        layout = smaller
    layout.level = "skeleton"
    return layout


def _smaller_cap(layout: GraphLayout, floor: int) -> int:
    """The next cap of a skeleton too big for its pane: a fifth fewer nodes, or as many fewer as
    its widest rank holds past what a pane's width takes (a node with 100,000 children drawn
    with 119 of them would otherwise be shrunk a fifth at a time, at a drawing each)."""
    size = layout.size()
    w, h, sep, _ = SKELETON_NODE
    pane_w, pane_h = SKELETON_PANE
    widest_fitting = int(max(pane_w // (w + sep), pane_h // (h + sep)))
    excess = layout.ranks()[1] - widest_fitting
    return max(min(size * 4 // 5, size - excess), floor)


def _fits(layout: GraphLayout) -> bool:
    """Whether the skeleton fits SKELETON_PANE, drawn top-down or left to right."""
    ranks, widest = layout.ranks()
    w, h, sep, rank_sep = SKELETON_NODE
    pane_w, pane_h = SKELETON_PANE
    return (widest * (w + sep) <= pane_w and ranks * (h + rank_sep) <= pane_h) or (
        ranks * (w + rank_sep) <= pane_w and widest * (h + sep) <= pane_h)


_plain_cache: "weakref.WeakKeyDictionary[Drawn, dict]" = weakref.WeakKeyDictionary()


def _plain_fold(tree, d: Drawn, fold: str, keep: set[str]) -> GraphLayout:
    """The whole tree folded with nothing unfolded, counted once per drawn tree and fold (what
    the bounded drawing weighs side branches with, and whether a drawing can fit at all)."""
    known = _plain_cache.setdefault(d, {})
    key = (fold, frozenset(keep))
    if key not in known:
        known.clear()  # one set of kept entries at a time: the pinned ones change rarely
        known[key] = _fold(tree, d, fold, keep, frozenset(), count=True)
    return known[key]


def _fold(tree, d: Drawn, fold: str, keep: set[str], expand: frozenset[str],
          only: dict[str, int] | None = None, count: bool = False, retries: list[Retries] = ()) -> GraphLayout:
    """Draw the drawn tree, or only the chains in `only` (chain head -> the last position drawn;
    it holds the chain above each of its chains, whole). `fold` "turns": the assistant's work
    between two user messages folds into one node (the user's words stay drawn); "runs": any
    run of single-child entries folds, user messages too (for paths too long to draw turn by
    turn); "skeleton": as "runs" for runs of two entries on, branch summaries too, and a run
    whose last entry is in `expand` folds by turns instead (skeleton, then turns, then
    entries); "": nothing folds. Where a chain ends (a leaf, a branch point, or where the
    drawing stops) stays drawn. The cost is the number of chains and of what is drawn; with `count`,
    the units are only counted (`unit_starts`, `size()`), which costs less than drawing them.
    Each of `retries` (not counted) is drawn as one node in place of its fork points, their side
    branches and the path between them."""
    by_id, chains = tree.by_id, d.chains
    turns = fold == "turns"
    skeleton = fold == "skeleton"
    shortest = 2 if turns or skeleton else MIN_SEGMENT
    skeleton_runs: set[int] = set()  # (per chain) where the spans that are runs of the skeleton start
    layout = GraphLayout(collapsed=bool(fold), drawn=d, included=only, tree=None if count else tree)
    users_at = d.users_at if fold else {}
    never: dict[str, set[int]] = {}  # kept entries, compactions and branch summaries, by chain
    if fold:
        for group in (keep,) if fold == "all" else (keep, d.unfoldable):
            for x in group:
                if skeleton and group is d.unfoldable and tree.by_id[x].type != COMPACTION:
                    continue  # a branch summary is a step of its run in the skeleton
                where = d.place(x)
                if where is not None:
                    never.setdefault(where[0], set()).add(where[1])
    nodes, segments, edges, runs, unit_starts, heads = (layout.nodes, layout.segments, layout.edges, layout.runs,
                                                        layout.unit_starts, layout.heads)
    total = 0
    starts = {r.start: r for r in retries}
    below = {r.after: r for r in retries}
    for r in retries:
        layout.retried[r.start] = (len(chains[r.start]) - 1, r)
        layout.retried.update((x, (0, r)) for x in r.heads)
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
        skeleton_runs.clear()
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
                if skeleton and cut - start >= shortest:
                    if chain[cut - 1] in expand:
                        spans.extend(_turn_spans(chain, start, cut - 1, upos, expand))
                    else:
                        spans.append((start, cut - 1))
                        skeleton_runs.add(start)
                elif cut - start >= shortest and chain[start] not in expand:
                    spans.append((start, cut - 1))
                else:
                    spans.extend((q, q) for q in range(start, cut))
                if cut <= hi:
                    spans.append((cut, cut))
                start = cut + 1
            spans.extend((q, q) for q in range(hi + 1, end + 1))
        folded = starts.get(h) if end == len(chain) - 1 else None
        if folded is not None:
            spans.pop()  # (its last entry: the first fork point folded)
        unit_starts[h] = [a for a, _ in spans]
        total += len(spans)
        if count and only is None:
            d.units[(h, fold)] = (chain, tuple(sorted(never.get(h, ()))), unit_starts[h])
        if not count:
            prev = below[h].id if h in below else dom_id(up) if up is not None else None
            for a, b in spans:
                if a == b:
                    x = chain[a]
                    nodes.append(by_id[x])
                    u = dom_id(x)
                else:
                    upos = users_at.get(h)
                    turns_in = bisect.bisect_right(upos, b) - bisect.bisect_left(upos, a) if upos else 0
                    seg = Segment(chain[a:b + 1], tree, turns_in, chain[b] if a in skeleton_runs else "")
                    segments.append(seg)
                    r = runs.setdefault(h, ([], [], []))
                    r[0].append(a)
                    r[1].append(b)
                    r[2].append(seg)
                    u = seg.id
                if prev is not None:
                    edges.append((prev, u))
                prev = u
            if folded is not None:
                layout.retries.append(folded)
                edges.append((prev, folded.id))
        if folded is not None:
            stack.append(folded.after)
            total += 1
        elif end == len(chain) - 1:
            stack.extend(reversed(d.forks.get(chain[-1], ())))
    if count:
        layout.counted = total
    return layout


def _turn_spans(chain: list[str], start: int, stop: int, upos, expand: frozenset[str]) -> list[tuple[int, int]]:
    """The spans of an opened run of the skeleton (positions `start` to `stop` of `chain`), folded
    by turns: its user messages drawn, the work after each one folded unless it was opened."""
    spans: list[tuple[int, int]] = []
    cuts = upos[bisect.bisect_left(upos, start):bisect.bisect_right(upos, stop)] if upos else []
    s = start
    for cut in (*cuts, stop + 1):
        if cut - s >= 2 and chain[s] not in expand:
            spans.append((s, cut - 1))
        else:
            spans.extend((q, q) for q in range(s, cut))
        if cut <= stop:
            spans.append((cut, cut))
        s = cut + 1
    return spans


def _subtree_units(full: GraphLayout, d: Drawn) -> dict[str, int]:
    """Chain head -> the drawn units of the subtree from that chain down, in `full`."""
    total: dict[str, int] = {}
    for h in reversed(full.heads):
        n = len(full.unit_starts[h])
        for k in d.forks.get(d.chains[h][-1], ()):
            n += total.get(k, 0)
        total[h] = n
    return total


def _bounded(tree, d: Drawn, keep, expand, pinned, active_leaf, cap, full: GraphLayout, fold: str,
             retries: list[Retries] = (), memo: dict | None = None) -> GraphLayout:
    """The drawing with side branches left out until it holds at most `cap` nodes. When even
    the paths that must stay take more than three quarters of it turn by turn (or more than all
    of it with a "more" node per fork point), they fold by runs; when even then they take more
    than the cap, the fork points along them fold (`retries`, see fold_retries), and after that
    whatever else keeps them long ("all"). The side branches of the fork points in `retries` are in those folds (see _fold)."""
    children, chains, place = d.forks, d.chains, d.place
    # The spine: paths from the roots to what must stay (the active leaf, pinned entries, and
    # what the user opened). Every other child of a spine entry starts a side branch, drawn or
    # left out whole.
    spine = spine_of(d, [active_leaf, *pinned, *expand])
    folded = {f for r in retries for f in r.forks}
    sides: list[tuple[str, str]] = []  # (side root, fork point; "" for a root)
    for h, end in spine.items():
        chain = chains[h]
        if chain[-1] in folded:
            continue
        if end < len(chain) - 1:
            sides.append((chain[end + 1], chain[end]))
        else:
            sides.extend((k, chain[-1]) for k in children.get(chain[-1], ()) if k not in spine)
    sides.extend((r, "") for r in d.roots if r not in spine)

    def cost(r: str) -> int:
        h, i = place(r)
        if h == r:
            return total.get(r, 1)
        starts = full.unit_starts.get(h, [])
        below = sum(total.get(k, 0) for k in children.get(chains[h][-1], ()))
        return len(starts) - bisect.bisect_right(starts, i) + 1 + below

    opened = set(expand)
    # Shared by the drawings of one request (`memo`): the skeleton draws several in turn, and each
    # ranks every side branch (a node with 100,000 children has as many).
    memo = {} if memo is None else memo
    ranks: dict[str, tuple] = memo.setdefault(("ranks", frozenset(opened)), {})

    def rank(r: str, p: str) -> tuple:
        known = ranks.get(r)
        if known is None:
            size, _, last, labelled = d.subtree(r)
            known = ranks[r] = (p not in opened, not labelled, -last, -size, r)
        return known

    spine_only = _fold(tree, d, fold, keep, expand, spine, count=True, retries=retries)  # (only its size is read)
    used = spine_only.size() + len({p for _, p in sides})  # the spine, a "more" node per fork point
    if fold == "turns" and (spine_only.size() > cap * 3 // 4 or used > cap):
        return _bounded(tree, d, keep, expand, pinned, active_leaf, cap, _plain_fold(tree, d, "runs", keep), "runs",
                        memo=memo)
    if fold != "turns" and used > cap and not retries:
        # Even by runs the paths that must stay, with a "more" node per fork point, hold more
        # than a drawing: when it is their fork points (a session retried often: each stays
        # drawn), those fold, at any level.
        folds = fold_retries(tree, d, spine, keep, expand, active_leaf)
        if folds:
            return _bounded(tree, d, keep, expand, pinned, active_leaf, cap, full, fold, folds, memo)
    if fold in ("runs", "skeleton") and spine_only.size() > cap:
        # Even by runs the paths that must stay hold more than a drawing (hundreds of branch
        # summaries, compactions or labels along them): only what the user asked to see stays
        # drawn as itself, and those fold too ("all").
        least = set(pinned) | set(expand) | ({active_leaf} if active_leaf is not None else set())
        return _bounded(tree, d, least, expand, pinned, active_leaf, cap, _plain_fold(tree, d, "all", least), "all", retries,
                        memo)
    counted = memo.get(("units", id(full)))
    if counted is None or counted[0] is not full:
        counted = memo[("units", id(full))] = (full, _subtree_units(full, d))
    total = counted[1]  # what a side branch costs: its nodes in the full drawing (see cost)
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
            include_path(d, r, only)
            stack = [r]
            while stack:
                h = place(stack.pop())[0]
                chain = chains[h]
                only[h] = len(chain) - 1
                stack.extend(children.get(chain[-1], ()))
        layout = _fold(tree, d, fold, keep, expand, only, retries=retries)
        _add_more(layout, d, sides, hidden, rank, memo.setdefault("subtrees", {}))
        if layout.size() <= cap or not shown:
            break
        shown = shown[: len(shown) * 3 // 4]  # the estimate was short: draw fewer side branches
    layout.capped = True
    return layout


def _add_more(layout: GraphLayout, d: Drawn, sides, hidden: set[str], rank, subtrees: dict) -> None:
    """One "N more branches here" node per drawn node that left-out branches fork from; the
    entries left out are shown by it (selecting one there brings it into the drawing).
    `subtrees`: the figures of subtrees found already (shared by the drawings of a request)."""
    groups: dict[str, MoreBranches] = {}
    anchors: dict[str, list[tuple[int, str]]] = {}
    attached: dict[str, str] = {}
    for r, p in sides:
        if r not in hidden:
            continue
        attach = attached.get(p)
        if attach is None:
            attach = attached[p] = layout.dom_for(p) if p else "roots"
        g = groups.get(attach)
        if g is None:
            g = groups[attach] = MoreBranches(attach, [], 0, 0)
            anchors[attach] = []
        figures = subtrees.get(r)
        if figures is None:
            figures = subtrees[r] = d.subtree(r)
        g.branches += figures[1]
        g.entries += figures[0]
        anchors[attach].append((rank(r, p), p or r))
        h, i = d.place(r)
        layout.hidden.setdefault(h, []).append((i, g.id))
    for marks in layout.hidden.values():
        marks.sort()
    for attach, g in groups.items():
        # The anchors by the best rank of their branches, the first MORE_OPEN (a fork point of
        # 100,000 branches is one anchor: its branches are not sorted to find it).
        best: dict[str, tuple] = {}
        for key, a in anchors[attach]:
            if a not in best or key < best[a]:
                best[a] = key
        g.anchors.extend(sorted(best, key=best.__getitem__)[:MORE_OPEN])
        layout.more.append(g)
        if attach != "roots":
            layout.edges.append((attach, g.id))
