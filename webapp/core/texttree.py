"""The session tree as indented text, for a terminal: indentation only where a branch starts."""

from __future__ import annotations

from collections.abc import Iterator

from .entries import Entry, entry_text, is_marker, short_id
from .tree import SessionTree

WIDTH = 72


def _line_text(entry: Entry) -> str:
    """An entry's text on one line of at most WIDTH characters."""
    text = " ".join(entry_text(entry).split())
    return text[: WIDTH - 1] + "…" if len(text) > WIDTH else text


def _describe(entry: Entry) -> str:
    kind = entry.role if entry.type == "message" else entry.type
    return f"{short_id(entry.id)} {kind}: {_line_text(entry)}"


def tree_rows(tree: SessionTree) -> Iterator[tuple[Entry, str]]:
    """The entries the text tree draws, in its order, each with the drawing before it (`├─ `,
    `│  `...): indentation only where a branch starts. Markers without children are left out
    (a label tag says what they do)."""
    def shown(entry_id: str) -> bool:
        e = tree.by_id[entry_id]
        return not (is_marker(e) and not tree.children.get(entry_id))

    # Each stack item: (entry id, prefix for its own line, prefix for the lines below it).
    stack = [(r, "", "") for r in reversed([r for r in tree.roots if shown(r)])]
    while stack:
        entry_id, own, below = stack.pop()
        yield tree.by_id[entry_id], own
        kids = [k for k in tree.children.get(entry_id, ()) if shown(k)]
        if len(kids) == 1:
            stack.append((kids[0], below, below))
        else:
            for i in range(len(kids) - 1, -1, -1):
                last = i == len(kids) - 1
                stack.append((kids[i], below + ("└─ " if last else "├─ "), below + ("   " if last else "│  ")))


def render_text_tree(tree: SessionTree) -> str:
    """One line per entry; `*` marks the active path, `←` the active leaf, `[...]` labels."""
    active = tree.path_ids(tree.active_leaf) if tree.active_leaf else set()
    lines: list[str] = []
    for e, own in tree_rows(tree):
        line = f"{'*' if e.id in active else ' '} {own}{_describe(e)}"
        if e.id in tree.labels:
            line += f"  [{tree.labels[e.id]}]"
        if e.id == tree.active_leaf:
            line += "  ← active leaf"
        if e.id in tree.orphans:
            line += "  (orphan)"
        lines.append(line)
    return "\n".join(lines)


def text_tree_json(tree: SessionTree) -> dict:
    """What `tree --json` prints: the entries the text tree draws, in its order, flat (a long
    session nests thousands deep), each with its parent, what it is, its text as the line shows
    it, its label, and whether it is on the active path."""
    active = tree.path_ids(tree.active_leaf) if tree.active_leaf else set()
    return {
        "activeLeaf": tree.active_leaf,
        "entries": [{"id": e.id, "parentId": tree.parent.get(e.id), "type": e.type, "role": e.role,
                     "text": _line_text(e), "label": tree.labels.get(e.id),
                     "onActivePath": e.id in active, "orphan": e.id in tree.orphans}
                    for e, _ in tree_rows(tree)],
    }
