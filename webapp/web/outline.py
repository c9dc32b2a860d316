"""The session tree as indented text, one line per drawn node of a layout (on the session page
the drawing's, at the level it is drawn at: skeleton or turns; in the export the skeleton's), drawn the way pi's `/tree` draws it: a single-child chain stays
flat, the branches of a fork point indent under box-drawing connectors ("├─ ", "└─ ") with a
"│" gutter down the side while a sibling follows, the branch holding the active leaf comes
first and its lines are marked "•", labels read "[label]". The lines are plain HTML links, so
the text reads and works with scripts off; `text-tree.js` only adds the keys and folding."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.entries import BRANCH_SUMMARY, COMPACTION, MESSAGE, Entry, entry_text
from ..core.tokens import format_tokens
from ..core.tree import SessionTree
from .graph import GraphLayout, MoreBranches, Segment, dom_id, dot_text
from .graph.retries import Retries

VIEWS = ("graph", "text", "both")  # the session page's `view`: the drawing, the text tree, or both
TEXT_WIDTH = 110  # characters of a line's words: the pane cuts it shorter, with an ellipsis


def view_of(args) -> str:
    """The `view` a query string asks for; the drawing alone when it names none (or a bad one)."""
    view = args.get("view", "")
    return view if view in VIEWS else "graph"


@dataclass
class Line:
    """One line of the text tree: a drawn node (`dom`), the link it is, and how it reads."""

    dom: str
    href: str
    select: str | None  # the entry a click selects; None: the link opens a page (a group of branches)
    prefix: str  # the gutters and the connector before the words
    kind: str  # a class name: user, assistant, tool, compaction, summary, run, work, more, retries, other
    role: str  # "user:", "assistant:", … (empty for a run or a group)
    text: str
    label: str | None
    on_active: bool
    leaf: str  # "active" for the active leaf, "leaf" for another branch's tip, else ""
    level: int  # how many branch points deep the line is (aria-level)
    end: int = 0  # the index of the last line of its subtree (itself when it has none)
    branch_head: bool = False  # the first line of a branch: folding it hides the branch
    fork: bool = False  # a branch point: folding it hides its branches
    foldable: bool = False  # a branch head or a branch point with lines under it
    selected: bool = False  # the line of the selected node (or of the run that holds it)
    file: str | None = None  # where a file of a conversation across files starts: its caption


def _entry_words(tree: SessionTree, e: Entry) -> tuple[str, str, str]:
    """(kind, role, words) of an entry, as pi's tree names them."""
    text = dot_text(entry_text(e), TEXT_WIDTH)
    if e.type == MESSAGE:
        role = e.role if isinstance(e.role, str) and e.role else "message"
        if role == "user":
            return "user", "user:", text or "(empty)"
        if role == "assistant":
            stop = e.message.get("stopReason")
            kind = "error" if stop in ("error", "aborted") else "assistant"
            return kind, "assistant:", text or f"({stop or 'no text'})"
        if role == "toolResult":
            return "tool", f"[{dot_text(e.message.get('toolName') or 'tool', 24)}]", text
        return "other", f"[{dot_text(role, 24)}]", text
    if e.type == COMPACTION:
        known = [format_tokens(n) for n in (e.get("tokensBefore"), e.get("tokensAfter")) if isinstance(n, int)]
        return "compaction", "[compaction]", f"{' → '.join(known)} tokens" if known else "tokens not recorded"
    if e.type == BRANCH_SUMMARY:
        return "summary", "[branch summary]", text
    return "other", f"[{dot_text(e.type, 24)}]", text


def _segment_words(tree: SessionTree, seg: Segment) -> tuple[str, str]:
    count = seg.tokens(tree)
    size = f"{len(seg.ids):,} entries" + (f" · {format_tokens(count)} tokens" if count is not None else "")
    turns = seg.user_turns()
    if turns:
        first = dot_text(seg.first_user_line(), TEXT_WIDTH)
        return "run", f"⋯ {turns:,} turn{'s' if turns > 1 else ''} · {size}" + (f" — {first}" if first else "")
    first = dot_text(seg.first_text(), TEXT_WIDTH)
    return "work", f"⚙ assistant's work · {size}" + (f" — {first}" if first else "")


def _more_words(more: MoreBranches) -> str:
    if not more.branches:
        return f"⊞ {more.entries:,} more entries here (sub-agent work)"
    return f"⊞ {more.branches:,} more branch{'' if more.branches == 1 else 'es'} here · {more.entries:,} entries"


def text_tree(tree: SessionTree, layout: GraphLayout, link, open_link=None, first: str | None = None) -> list[Line]:
    """The lines of `layout`, depth-first with the chosen branch first: `first` (the branch
    marked winner) when given, else the active one; its lines are the ones marked "•".
    `link(entry_id)` is the URL that selects an entry; `open_link(anchors)` the one that draws a
    group's branches (None: a group links to its first fork point's entry)."""
    active_leaf = tree.conversation_leaf(tree.active_leaf)
    active = set(layout.path_doms(first or active_leaf))
    leaves = set(tree.leaves())
    units: dict[str, object] = {dom_id(e.id): e for e in layout.nodes}
    units.update((s.id, s) for s in layout.segments)
    units.update((m.id, m) for m in layout.more)
    units.update((r.id, r) for r in layout.retries)
    kids: dict[str, list[str]] = {}
    has_parent: set[str] = set()
    for a, b in layout.edges:
        if a in units and b in units and b not in has_parent:
            kids.setdefault(a, []).append(b)
            has_parent.add(b)
    for k, v in kids.items():  # the active branch first, the others in the drawing's order
        v.sort(key=lambda x: x not in active)
    roots = sorted((x for x in units if x not in has_parent), key=lambda x: x not in active)
    many_roots = len(roots) > 1
    lines: list[Line] = []
    # (unit, indent, just branched, shows a connector, last of its siblings, gutters, parent line)
    stack = [(r, 1 if many_roots else 0, many_roots, many_roots, i == len(roots) - 1, (), -1)
             for i, r in reversed(list(enumerate(roots)))]
    open_lines: list[int] = []  # the lines whose subtree is being written, innermost last
    while stack:
        x, indent, just_branched, connector, last, gutters, parent = stack.pop()
        while open_lines and open_lines[-1] != parent:  # every line above `parent` has ended
            lines[open_lines.pop()].end = len(lines) - 1
        unit = units[x]
        children = kids.get(x, [])
        pieces = ["   "] * indent
        for position, show in gutters:
            pieces[position] = "│  " if show else "   "
        if connector:
            pieces[indent - 1] = "└─ " if last else "├─ "
        line = _line(tree, unit, x, link, open_link, active, leaves, active_leaf)
        line.prefix = "".join(pieces)
        line.level = len(gutters) + (1 if connector else 0) + 1
        line.branch_head, line.fork = connector, len(children) > 1
        lines.append(line)
        me = len(lines) - 1
        open_lines.append(me)
        if len(children) > 1 or (just_branched and indent > 0):
            child_indent = indent + 1
        else:
            child_indent = indent
        child_gutters = (*gutters, (indent - 1, not last)) if connector else gutters
        for i in range(len(children) - 1, -1, -1):
            many = len(children) > 1
            stack.append((children[i], child_indent, many, many, i == len(children) - 1, child_gutters, me))
    while open_lines:
        lines[open_lines.pop()].end = len(lines) - 1
    for i, line in enumerate(lines):
        line.foldable = (line.branch_head or line.fork) and line.end > i
    joined = tree.joined
    if joined is not None and len(joined.parts) > 1:  # each file's part says where it starts
        starts = joined.boundaries
        for line in lines:
            if line.select in starts:
                line.file = joined.part_of(line.select).said
    return lines


def _line(tree, unit, dom: str, link, open_link, active, leaves, active_leaf) -> Line:
    on_active = dom in active
    if isinstance(unit, Segment):
        kind, text = _segment_words(tree, unit)
        return Line(dom, link(unit.first_id), unit.first_id, "", kind, "", text, None, on_active, "", 0)
    if isinstance(unit, Retries):  # fork points along the path, folded: the line opens some of them
        opens = unit.opens()
        href = open_link(opens) if open_link else link(opens[0])
        return Line(dom, href, None, "", "retries", "", unit.words(), None, on_active, "", 0)
    if isinstance(unit, MoreBranches):
        href = open_link(unit.anchors) if open_link else link(unit.anchors[0])
        return Line(dom, href, None, "", "more", "", _more_words(unit), None, on_active, "", 0)
    kind, role, text = _entry_words(tree, unit)
    label = tree.labels.get(unit.id)
    leaf = "active" if unit.id == active_leaf else "leaf" if unit.id in leaves else ""
    return Line(dom, link(unit.id), unit.id, "", kind, role, text, dot_text(label, 40) if label else None, on_active, leaf, 0)
