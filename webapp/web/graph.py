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
import ctypes
import functools
import hashlib
import html
import heapq
import re
import signal
import subprocess
import sys
import threading
import time
import weakref
from dataclasses import dataclass, field
from urllib.parse import urlencode

import graphviz

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
from ..core.context import entry_messages
from ..core.reader import first_kept_id
from ..core.tokens import estimate_message_tokens, format_tokens
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


_token_cache: "weakref.WeakKeyDictionary[SessionTree, dict[str, int]]" = weakref.WeakKeyDictionary()


def entry_tokens(tree: SessionTree, e: Entry) -> int:
    """What an entry says to a model, estimated once per file (a tree never changes once built)."""
    known = _token_cache.get(tree)
    if known is None:
        known = _token_cache[tree] = {}
    n = known.get(e.id)
    if n is None:
        n = known[e.id] = sum(estimate_message_tokens(m) for m in entry_messages(e))
    return n


@dataclass
class Segment:
    """A folded run of consecutive single-child entries."""

    entries: list[Entry]

    @property
    def id(self) -> str:
        return "seg-" + dom_id(self.entries[0].id)

    @property
    def first_id(self) -> str:
        return self.entries[0].id

    def first_user_line(self) -> str:
        for e in self.entries:
            if e.role == "user":
                return content_text(e.message.get("content"), " ")
        return ""

    def user_turns(self) -> int:
        return sum(1 for e in self.entries if e.role == "user")

    def tool_chips(self, most: int = 4) -> str:
        """The tools the folded work called, most used first: "bash ×3 · read ×2 · edit"."""
        counts: dict[str, int] = {}
        for e in self.entries:
            for call in tool_calls(e):
                name = dot_text(call.get("name") or "tool", 16)
                counts[name] = counts.get(name, 0) + 1
        top = sorted(counts.items(), key=lambda kv: -kv[1])
        chips = [name if n == 1 else f"{name} ×{n}" for name, n in top[:most]]
        return " · ".join(chips) + (" · …" if len(top) > most else "")

    def first_text(self) -> str:
        """The first thing the assistant says in the folded work."""
        for e in self.entries:
            if e.role == "assistant":
                text = content_text(e.message.get("content"), " ")
                if text.strip():
                    return text
        return ""

    def tokens(self, tree: SessionTree) -> int:
        """The estimated size of what the folded entries say to a model."""
        return sum(entry_tokens(tree, e) for e in self.entries)


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
    """What gets drawn: visible entries, segments, hidden-branch groups, and the edges between them."""

    nodes: list[Entry] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    more: list[MoreBranches] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)  # dom ids
    member_of: dict[str, str] = field(default_factory=dict)  # entry id -> segment or "more" dom id
    collapsed: bool = False
    capped: bool = False  # the tree was too big for one drawing: some side branches are left out

    def signature(self) -> tuple:
        return (self.collapsed, tuple(s.first_id for s in self.segments), tuple(m.id for m in self.more))

    def size(self) -> int:
        """Nodes sent to dot."""
        return len(self.nodes) + len(self.segments) + len(self.more)

    def dom_for(self, entry_id: str) -> str:
        """The drawn node an entry is shown by: itself, or the segment or group that holds it."""
        return self.member_of.get(entry_id) or dom_id(entry_id)

    def opening_for(self, entry_id: str) -> set[str]:
        """The `expand` ids that bring a folded or left-out entry into the drawing: the entry
        itself when its branch is left out (its path joins what is always drawn), or the first
        entry of the segment that holds it."""
        drawn = self.member_of.get(entry_id)
        if drawn is None:
            return set()
        if drawn.startswith("more-"):
            return {entry_id}
        return {s.first_id for s in self.segments if s.id == drawn}


@dataclass
class _Drawn:
    """The drawn tree of a file, found once (a tree never changes once built): parents and
    children among drawn entries (`leaf` and `label` markers are not drawn: a label is a tag on
    its target, their children hang from their nearest drawn ancestor), and for each entry the
    entries, leaves and last line of the subtree below it and whether a label is in it."""

    parent: dict[str, str | None]
    children: dict[str, list[str]]
    size: dict[str, int]
    leaves: dict[str, int]
    last: dict[str, int]
    labelled: set[str]
    unfoldable: set[str]  # compactions and branch summaries: never folded
    users: set[str]  # user messages: folded only when a path is too long to draw turn by turn


_drawn_cache: "weakref.WeakKeyDictionary[SessionTree, _Drawn]" = weakref.WeakKeyDictionary()


def _drawn(tree: SessionTree) -> _Drawn:
    cached = _drawn_cache.get(tree)
    if cached is not None:
        return cached
    drawn = [e for e in tree.entries if e.type not in MARKER_TYPES]
    by_id, tree_parent = tree.by_id, tree.parent
    parent: dict[str, str | None] = {}
    for e in drawn:
        p = tree_parent[e.id]
        parent[e.id] = p if p is None or by_id[p].type not in MARKER_TYPES else tree.conversation_leaf(p)
    children: dict[str, list[str]] = {}
    for p, kids in tree.children.items():
        if p not in parent:
            continue
        if any(by_id[k].type in MARKER_TYPES for k in kids):  # look through `leaf` and `label`
            kids = tree.conversation_children(p)
        if kids:
            children[p] = kids
    size = dict.fromkeys(parent, 1)
    leaves = {x: 0 if x in children else 1 for x in parent}
    last = {e.id: e.line or 0 for e in drawn}
    labelled = {x for x in tree.labels if x in parent}
    # Children before parents: reverse file order, except where a parent was written after its
    # child (a damaged file), where a depth-first order is needed.
    order = [e.id for e in reversed(drawn)]
    if any(p is not None and last[p] > last[x] for x, p in parent.items()):
        order = []
        stack = [x for x, p in parent.items() if p is None]
        while stack:
            x = stack.pop()
            order.append(x)
            stack.extend(children.get(x, ()))
        order.reverse()
    for x in order:
        p = parent[x]
        if p is None:
            continue
        size[p] += size[x]
        leaves[p] += leaves[x]
        if last[x] > last[p]:
            last[p] = last[x]
        if x in labelled:
            labelled.add(p)
    unfoldable = {e.id for e in drawn if e.type in (COMPACTION, BRANCH_SUMMARY)}
    users = {e.id for e in drawn if e.type == MESSAGE and e.role == "user"}
    result = _drawn_cache[tree] = _Drawn(parent, children, size, leaves, last, labelled, unfoldable, users)
    return result


def build_layout(
    tree: SessionTree, collapse: str = "auto", expand: frozenset[str] = frozenset(), pinned: frozenset[str] = frozenset(),
    cap: int = MAX_DRAWN,
) -> GraphLayout:
    """Decide what to draw. `collapse` is "auto" (fold past COLLAPSE_THRESHOLD), "on" or "off";
    `expand` holds the first entry ids of segments the user unfolded, the fork points whose
    left-out branches the user opened and entries brought into view; `pinned` entries stay
    visible. At most `cap` nodes: past it, side branches are left out, ranked (opened, labelled,
    recent, large first), and each drawn node they fork from gets one "N more branches" node."""
    d = _drawn(tree)
    fold = collapse == "on" or (collapse == "auto" and len(d.parent) > COLLAPSE_THRESHOLD)
    keep = set(pinned) | set(tree.labels)
    active_leaf = tree.conversation_leaf(tree.active_leaf)
    if active_leaf is not None:
        keep.add(active_leaf)
    # Where a compaction's kept part starts stays drawn: a fold never straddles what the model
    # sees and what a summary replaced.
    keep.update(first_kept_id(e) for e in tree.compactions())
    for mode in ("turns",) if fold else ("", "turns"):  # "expand all" too big to draw folds by turns
        # Unfolding only adds nodes: when the drawing without it is over the cap, so is this one.
        plain = _plain_fold(tree, d, mode, keep)
        if plain.size() <= cap:
            layout = _fold(tree, d, mode, keep, expand) if expand else plain
            if layout.size() <= cap:
                return layout
    return _bounded(tree, d, keep, expand, pinned, active_leaf, cap, plain, "turns")


_plain_cache: "weakref.WeakKeyDictionary[SessionTree, dict]" = weakref.WeakKeyDictionary()


def _plain_fold(tree, d: _Drawn, fold: str, keep: set[str]) -> GraphLayout:
    """The whole tree folded with nothing unfolded, found once per tree and fold (what the
    bounded drawing weighs side branches with, and whether a drawing can fit at all)."""
    known = _plain_cache.setdefault(tree, {})
    key = (fold, frozenset(keep))
    if key not in known:
        known.clear()  # one set of kept entries at a time: the pinned ones change rarely
        known[key] = _fold(tree, d, fold, keep, frozenset())
    return known[key]


def _fold(tree, d: _Drawn, fold: str, keep: set[str], expand: frozenset[str],
          only: set[str] | None = None) -> GraphLayout:
    """Draw the drawn tree, or only the entries in `only` (a set that holds the parent of each
    of its entries). `fold` "turns": the assistant's work between
    two user messages folds into one node (the user's words stay drawn); "runs": any run of
    single-child entries folds, user messages too (for paths too long to draw turn by turn);
    "": nothing folds."""
    by_id = tree.by_id
    parent, children = d.parent, d.children
    entries = tree.entries
    if only is not None:
        parent = {x: parent[x] for x in only}
        children = {x: kept for x in only if x in children and (kept := [k for k in children[x] if k in only])}
        entries = sorted((by_id[x] for x in only), key=lambda e: e.line or 0)
    layout = GraphLayout(collapsed=bool(fold))
    turns = fold == "turns"
    shortest = 2 if turns else MIN_SEGMENT
    never = keep | d.unfoldable | (d.users if turns else set())
    foldable = {
        entry_id
        for entry_id, kids in children.items()
        if len(kids) == 1 and parent[entry_id] is not None
    } - never if fold else set()

    # A run is a maximal chain of foldable entries: it starts where the parent is not foldable.
    for e in entries:
        if e.id not in parent:
            continue
        if e.id not in foldable:
            layout.nodes.append(e)
            continue
        if parent[e.id] in foldable:
            continue  # inside the run that starts at an ancestor
        run = [e]
        nxt = children[e.id][0]
        while nxt in foldable:
            run.append(by_id[nxt])
            nxt = children[nxt][0]
        if len(run) >= shortest and run[0].id not in expand:
            seg = Segment(run)
            seg_id = seg.id
            layout.segments.append(seg)
            for x in run:
                layout.member_of[x.id] = seg_id
        else:
            layout.nodes.extend(run)
    member_of = layout.member_of
    for child, p in parent.items():
        if p is None:
            continue
        folded_in = member_of.get(child)
        if folded_in is not None and folded_in == member_of.get(p):
            continue  # both inside one segment: no edge (most entries of a big session)
        a, b = layout.dom_for(p), layout.dom_for(child)
        if a != b:
            layout.edges.append((a, b))
    return layout


def _bounded(tree, d: _Drawn, keep, expand, pinned, active_leaf, cap, full: GraphLayout, fold: str) -> GraphLayout:
    """The drawing with side branches left out until it holds at most `cap` nodes. When even
    the paths that must stay take more than three quarters of it turn by turn, they fold by runs."""
    parent, children = d.parent, d.children
    # The spine: paths from the roots to what must stay (the active leaf, pinned entries, and
    # what the user opened). Every other child of a spine entry starts a side branch, drawn or
    # left out whole.
    spine: set[str] = set()
    for target in [active_leaf, *pinned, *(x for x in expand if x in parent)]:
        node = target
        while node is not None and node not in spine:
            spine.add(node)
            node = parent[node]
    if not spine:
        spine.update(r for r, p in parent.items() if p is None)
    sides: list[tuple[str, str]] = []  # (side root, fork point; "" for a root)
    for x in spine:
        for k in children.get(x, ()):
            if k not in spine:
                sides.append((k, x))
    sides.extend((r, "") for r, p in parent.items() if p is None and r not in spine)

    # What a side branch costs: its nodes in the full drawing (one walk of that small drawing).
    unit_kids: dict[str, list[str]] = {}
    for a, b in full.edges:
        unit_kids.setdefault(a, []).append(b)
    units: list[str] = []
    stack = [u for u in {full.dom_for(r) for r, _ in sides}]
    while stack:
        u = stack.pop()
        units.append(u)
        stack.extend(unit_kids.get(u, ()))
    unit_cost: dict[str, int] = {}
    for u in reversed(units):
        unit_cost[u] = 1 + sum(unit_cost.get(k, 0) for k in unit_kids.get(u, ()))
    cost = unit_cost.__getitem__

    opened = set(expand)

    def rank(r: str, p: str) -> tuple:
        return (p not in opened, r not in d.labelled, -d.last[r], -d.size[r], r)

    spine_only = _fold(tree, d, fold, keep, expand, spine)
    if fold == "turns" and spine_only.size() > cap * 3 // 4:
        return _bounded(tree, d, keep, expand, pinned, active_leaf, cap, _plain_fold(tree, d, "runs", keep), "runs")
    used = spine_only.size() + len({p for _, p in sides})  # the spine, a "more" node per fork point
    split: set[str] = set()

    def split_cost(p: str) -> int:  # drawing a branch may cut the spine segment at its fork in three
        return 2 if p and p not in split and p in spine_only.member_of else 0

    heap = [(rank(r, p), r, p) for r, p in sides]
    heapq.heapify(heap)
    shown: list[str] = []
    paths: set[str] = set()  # side branches too big to draw whole: the path to their latest leaf
    while heap and used < cap - 1:
        _, r, p = heapq.heappop(heap)
        room = cap - used - split_cost(p)
        whole = cost(full.dom_for(r))
        if whole <= room:
            used += whole + split_cost(p)
            split.add(p)
            shown.append(r)
            continue
        # Too big to draw whole: draw the path to its latest leaf, if that fits, and rank the
        # branches off that path with the others.
        path, units = [r], {full.dom_for(r)}
        while path[-1] in children and len(units) < room:
            path.append(max(children[path[-1]], key=d.last.__getitem__))
            units.add(full.dom_for(path[-1]))
        on_path = set(path)
        forks = [(k, x) for x in path for k in children.get(x, ()) if k not in on_path]
        extra = len(units) + split_cost(p) + len({x for _, x in forks})
        if path[-1] in children or used + extra > cap:
            continue
        used += extra
        split.add(p)
        paths |= on_path
        sides.extend(forks)
        for k, x in forks:
            heapq.heappush(heap, (rank(k, x), k, x))
    while True:
        hidden = {r for r, _ in sides if r not in paths} - set(shown)
        layout = _fold(tree, d, fold, keep, expand, spine | paths | _subtrees(children, shown))
        _add_more(layout, d, sides, hidden, rank)
        if layout.size() <= cap or not shown:
            break
        shown = shown[: len(shown) * 3 // 4]  # the estimate was short: draw fewer side branches
    layout.capped = True
    return layout


def _subtrees(children, roots) -> set[str]:
    """The entries in the subtrees under `roots` (themselves included)."""
    out: set[str] = set()
    stack = list(roots)
    while stack:
        x = stack.pop()
        out.add(x)
        stack.extend(children.get(x, ()))
    return out


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
        g.branches += d.leaves[r]
        g.entries += d.size[r]
        anchors[attach].append((rank(r, p), p or r))
        stack = [r]
        while stack:
            x = stack.pop()
            layout.member_of[x] = g.id
            stack.extend(d.children.get(x, ()))
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
    return f"{dot_text(text, 160)} · {format_tokens(entry_tokens(tree, e))} tokens"


MAX_DOT_URL = 4000  # dot reads no quoted string longer than 16,384 characters


def to_dot(tree: SessionTree, layout: GraphLayout, node_url, long_urls: dict[str, str] | None = None,
           rankdir: str = "TB") -> graphviz.Digraph:
    """The dot graph, laid out in `rankdir` (RANKDIRS); `node_url(entry_id)` gives the link each node carries (its deep link; a
    "more branches" node adds the `open` parameter). A link too long for dot (an entry id of thousands of
    characters) goes in as a placeholder, kept in `long_urls` for render_svg to put back."""
    if long_urls is None:
        long_urls = {}

    def link(entry_id: str, extra: dict | None = None) -> str:
        url = node_url(entry_id)
        if extra and not url.startswith("#"):
            url += ("&" if "?" in url else "?") + urlencode(extra)
        if len(url) <= MAX_DOT_URL:
            return url
        token = f"?long={len(long_urls)}"
        long_urls[token] = url
        return token

    g = graphviz.Digraph("session", format="svg")
    g.attr(rankdir=rankdir if rankdir in RANKDIRS else "TB", nodesep="0.25", ranksep="0.3", bgcolor="transparent")
    g.attr("node", fontname="DejaVu Sans", fontsize="10", margin="0.12,0.04", height="0.3")
    g.attr("edge", color="#9ca3af", arrowhead="none")  # a tree drawn down or rightwards needs no arrows
    active = tree.path_ids(tree.active_leaf) if tree.active_leaf else set()
    active_leaf = tree.conversation_leaf(tree.active_leaf)
    clusters = _subagent_clusters(tree, layout)
    sub = {root: graphviz.Digraph(name=f"cluster_{i}") for i, root in enumerate(dict.fromkeys(clusters.values()))}
    for root, c in sub.items():
        c.attr(label=f"sub-agent · {dot_text(_first_line(tree, root), 40)}", style="rounded,dashed", color="#8b5cf6",
               fontcolor="#6d28d9", fontsize="9", labeljust="l")

    def into(drawn_id: str):
        """The graph a node goes in: its sub-agent's cluster, or the main drawing."""
        root = clusters.get(drawn_id)
        return sub[root] if root is not None else g

    for e in layout.nodes:
        label, attrs = _node_style(tree, e)
        if e.id in active:
            attrs["class"] += " on-active"
            attrs.setdefault("penwidth", "2")
        if e.id == active_leaf:
            attrs["class"] += " active-leaf"
            attrs.update(penwidth="3", color="#16a34a")
            label += "\n● active leaf"
        # nohtml: a label such as "<b>hi</b>" is text to show, not one of dot's HTML labels.
        into(dom_id(e.id)).node(dom_id(e.id), label=graphviz.nohtml(label), URL=link(e.id), id=dom_id(e.id),
               tooltip=graphviz.nohtml(_tooltip(tree, e)), **attrs)
    for seg in layout.segments:
        on_active = any(x.id in active for x in seg.entries)
        tokens = format_tokens(seg.tokens(tree))
        turns = seg.user_turns()
        if turns:  # a chain of turns, folded because the path is too long to draw turn by turn
            first = seg.first_user_line()
            lines = [f"⋯ {turns} turn{'s' if turns > 1 else ''} · {len(seg.entries)} entries · {tokens} tokens ⋯", dot_text(first)]
            kind, fill = "segment turns", "#ffffff"
        else:  # the assistant's work in one turn: its steps, the tools it called, what it cost
            first = seg.first_text()
            lines = [f"⚙ assistant · {len(seg.entries)} entries · {tokens} tokens", seg.tool_chips(), dot_text(first)]
            kind, fill = "segment turn-work", "#f3f4f6"
        into(seg.id).node(
            seg.id,
            label=graphviz.nohtml("\n".join(x for x in lines if x)),
            shape="box",
            style="dashed,filled",
            fillcolor=fill,
            color="#6b7280",
            fontsize="9",
            id=seg.id,
            URL=link(seg.first_id),
            tooltip=graphviz.nohtml(f"{len(seg.entries)} entries folded: click to expand · " + dot_text(first, 160)),
            **{"class": kind + (" on-active" if on_active else "")},
        )
    for more in layout.more:
        s = "" if more.branches == 1 else "es"
        g.node(
            more.id,
            label=graphviz.nohtml(f"⊞ {more.branches} more branch{s} here\n{more.entries} entries"),
            shape="box",
            style="dashed,rounded,filled",
            fillcolor="#f5f3ff",
            color="#7c3aed",
            fontsize="9",
            id=more.id,
            URL=link(more.anchors[0], {"open": ",".join(more.anchors)}),
            tooltip=f"{more.branches} side branch{s} left out of this drawing: click to draw them",
            **{"class": "segment more"},
        )
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
        if all(getattr(x, "sidechain", False) for x in seg.entries):
            out[seg.id] = root_of(seg.first_id)
    return out


class DotTimeout(RuntimeError):
    """`dot` took longer than its limit (and was killed)."""


DOT_TIMEOUT = 8.0  # seconds one `dot` run may take before the page falls back
DOT_POLL = 0.1  # seconds between two looks at whether the client is still there
_running: set[subprocess.Popen] = set()
_running_lock = threading.Lock()


def _die_with_parent() -> None:  # runs in the child, between fork and exec
    """`dot` gets SIGKILL when the thread that started it ends (request over, server stopped)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def run_dot(source: str, timeout: float | None = None) -> str:
    """`dot -Tsvg` on `source`, killed past `timeout` seconds (DotTimeout), when no client wants
    the drawing any more (ClientGone), or with the server."""
    limit = DOT_TIMEOUT if timeout is None else timeout
    if not client.still_wanted():
        raise ClientGone("the client left before the drawing was made")
    proc = subprocess.Popen(
        ["dot", "-Tsvg"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
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
    long_urls: dict[str, str] = {}
    svg = run_dot(to_dot(tree, layout, node_url, long_urls, rankdir).source, timeout)
    svg = svg[svg.index("<svg"):]  # drop the XML prolog and doctype: the SVG is inlined in HTML
    for token, url in long_urls.items():
        svg = svg.replace(f'"{token}"', f'"{html.escape(url)}"')
    # The same drawing in about half the bytes, for 100k-entry sessions: dot's comments, <title>s
    # and anchor and edge ids only repeat node names; the font and centring are set once in app.css;
    # coordinates keep one decimal (a twentieth of a pixel); and `&#45;` (dot's escape for "-",
    # so that names never put "--" in a comment) is a plain "-" outside comments.
    svg = _DOT_NOISE.sub("", _DOT_COMMENT.sub("", svg))
    svg = _GEOMETRY.sub(lambda m: m.group(1) + _PRECISION.sub(r"\1", m.group(2)), svg)
    return svg.replace("&#45;", "-")
