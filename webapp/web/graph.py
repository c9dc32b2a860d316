"""The session tree as a Graphviz drawing: which nodes to draw, how each looks, and the SVG.

Long linear runs fold into "segment" nodes so that a 100k-entry session still draws in a few
hundred nodes. Branch points, compactions, branch summaries, labelled nodes, leaves, roots and
pinned nodes (the selected one, the active leaf) always stay visible. Overlays such as the
context view are applied in the browser by CSS classes, so the costly `dot` layout only depends
on the file and on which segments are folded, and is cached on exactly that.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

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

COLLAPSE_THRESHOLD = 200  # draw everything below this many nodes, unless told otherwise
MIN_SEGMENT = 4  # shorter runs are not worth folding
LABEL_WIDTH = 34

_SAFE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")  # no ":": dot reads `a:b` in an edge as node a, port b


def dom_id(entry_id: str) -> str:
    """An id safe for HTML/SVG and for dot: the entry id itself when it is tame, else a hash."""
    if _SAFE_ID.match(entry_id):
        return "e-" + entry_id
    return "x-" + hashlib.sha1(entry_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _dot_text(text: str) -> str:
    """Text for a dot label: one line, trimmed, and with backslashes that dot would interpret escaped."""
    text = " ".join(text.split())
    if len(text) > LABEL_WIDTH:
        text = text[: LABEL_WIDTH - 1] + "…"
    return text.replace("\\", "\\\\")


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

    def tokens(self) -> int:
        """The estimated size of what the folded entries say to a model."""
        return sum(estimate_message_tokens(m) for e in self.entries for m in entry_messages(e))


@dataclass
class GraphLayout:
    """What gets drawn: visible entries, segments, and the edges between them."""

    nodes: list[Entry] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)  # dom ids
    member_of: dict[str, str] = field(default_factory=dict)  # entry id -> segment dom id
    collapsed: bool = False

    def signature(self) -> tuple:
        return (self.collapsed, tuple(s.first_id for s in self.segments))

    def dom_for(self, entry_id: str) -> str:
        """The drawn node an entry is shown by: itself, or the segment that holds it."""
        return self.member_of.get(entry_id) or dom_id(entry_id)


def _drawn(tree: SessionTree) -> tuple[dict[str, str | None], dict[str, list[str]]]:
    """Parents and children among drawn entries: `leaf` and `label` markers are not drawn
    (a label is a tag on its target), their children hang from their nearest drawn ancestor."""
    parent: dict[str, str | None] = {}
    children: dict[str, list[str]] = {}
    for e in tree.entries:
        if e.type in MARKER_TYPES:
            continue
        parent[e.id] = tree.conversation_leaf(tree.parent[e.id])
        kids = tree.conversation_children(e.id)
        if kids:
            children[e.id] = kids
    return parent, children


def build_layout(
    tree: SessionTree, collapse: str = "auto", expand: frozenset[str] = frozenset(), pinned: frozenset[str] = frozenset()
) -> GraphLayout:
    """Decide what to draw. `collapse` is "auto" (fold past COLLAPSE_THRESHOLD), "on" or "off";
    `expand` holds the first entry ids of segments the user unfolded; `pinned` entries stay visible."""
    parent, children = _drawn(tree)
    layout = GraphLayout()
    fold = collapse == "on" or (collapse == "auto" and len(parent) > COLLAPSE_THRESHOLD)
    layout.collapsed = fold
    keep = set(pinned) | set(tree.labels)
    active_leaf = tree.conversation_leaf(tree.active_leaf)
    if active_leaf is not None:
        keep.add(active_leaf)
    # Where a compaction's kept part starts stays drawn: a fold never straddles what the model
    # sees and what a summary replaced.
    keep.update(first_kept_id(e) for e in tree.entries if e.type == COMPACTION)

    foldable = {
        entry_id
        for entry_id, p in parent.items()
        if fold
        and entry_id not in keep
        and p is not None
        and len(children.get(entry_id, ())) == 1
        and tree.by_id[entry_id].type not in (COMPACTION, BRANCH_SUMMARY)
    }

    # A run is a maximal chain of foldable entries: it starts where the parent is not foldable.
    for e in tree.entries:
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
            run.append(tree.by_id[nxt])
            nxt = children[nxt][0]
        if len(run) >= MIN_SEGMENT and run[0].id not in expand:
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


def _node_style(tree: SessionTree, e: Entry) -> tuple[str, dict[str, str]]:
    """The label and dot attributes that say an entry's type at a glance."""
    classes = ["t-" + str(e.type).replace("_", "-")]
    attrs: dict[str, str] = {}
    text = _dot_text(entry_text(e))
    if e.type == MESSAGE:
        role = e.role or "message"
        classes.append("r-" + role)
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
            label = _dot_text(f"{e.message.get('toolName', 'tool')}: {content_text(e.message.get('content'), ' ')}")
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
        label = f"{e.type}"
    if e.id in tree.labels:
        label = f"◆ {_dot_text(tree.labels[e.id])}\n{label}"
        classes.append("labelled")
    if e.id in tree.orphans or e.id in tree.cycle_cuts:
        classes.append("has-problem")
        attrs.update(color="#dc2626", penwidth="2")
        label = ("⚠ orphan: parent missing" if e.id in tree.orphans else "⚠ parent loop cut") + "\n" + label
    attrs["class"] = " ".join(classes)
    return label, attrs


def to_dot(tree: SessionTree, layout: GraphLayout, node_url) -> graphviz.Digraph:
    """The dot graph; `node_url(entry_id)` gives the link each node carries (its deep link)."""
    g = graphviz.Digraph("session", format="svg")
    g.attr(rankdir="TB", nodesep="0.25", ranksep="0.3", bgcolor="transparent")
    g.attr("node", fontname="DejaVu Sans", fontsize="10", margin="0.12,0.04", height="0.3")
    g.attr("edge", color="#9ca3af", arrowhead="none")  # a tree drawn top-down needs no arrows
    active = tree.path_ids(tree.active_leaf) if tree.active_leaf else set()
    active_leaf = tree.conversation_leaf(tree.active_leaf)
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
        g.node(dom_id(e.id), label=graphviz.nohtml(label), URL=node_url(e.id), id=dom_id(e.id), **attrs)
    for seg in layout.segments:
        on_active = any(x.id in active for x in seg.entries)
        first = _dot_text(seg.first_user_line())
        label = f"⋯ {len(seg.entries)} entries · {format_tokens(seg.tokens())} tokens ⋯" + (f"\n{first}" if first else "")
        g.node(
            seg.id,
            label=graphviz.nohtml(label),
            shape="box",
            style="dashed,filled",
            fillcolor="#ffffff",
            color="#6b7280",
            fontsize="9",
            id=seg.id,
            URL=node_url(seg.first_id),
            tooltip=f"{len(seg.entries)} entries folded: click to expand",
            **{"class": "segment" + (" on-active" if on_active else "")},
        )
    for a, b in layout.edges:
        g.edge(a, b)
    return g


_DOT_COMMENT = re.compile(r"<!--.*?-->\n", re.S)
_DOT_NOISE = re.compile(r'<title>[^<]*</title>\n?| id="(?:a_[^"]*|edge\d+)"| font-family="[^"]*"| text-anchor="middle"')
_GEOMETRY = re.compile(r'( (?:points|d|x|y)=")([^"]*)')
_PRECISION = re.compile(r"(\d\.\d)\d+")


def render_svg(tree: SessionTree, layout: GraphLayout, node_url) -> str:
    svg = to_dot(tree, layout, node_url).pipe(format="svg", encoding="utf-8")
    svg = svg[svg.index("<svg"):]  # drop the XML prolog and doctype: the SVG is inlined in HTML
    # The same drawing in about half the bytes, for 100k-entry sessions: dot's comments, <title>s
    # and anchor and edge ids only repeat node names; the font and centring are set once in app.css;
    # coordinates keep one decimal (a twentieth of a pixel); and `&#45;` (dot's escape for "-",
    # so that names never put "--" in a comment) is a plain "-" outside comments.
    svg = _DOT_NOISE.sub("", _DOT_COMMENT.sub("", svg))
    svg = _GEOMETRY.sub(lambda m: m.group(1) + _PRECISION.sub(r"\1", m.group(2)), svg)
    return svg.replace("&#45;", "-")
