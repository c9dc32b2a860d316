"""The session tree as indented text, for a terminal: indentation only where a branch starts."""

from __future__ import annotations

from .entries import Entry, entry_text, is_marker, short_id
from .tree import SessionTree

WIDTH = 72


def _describe(entry: Entry) -> str:
    kind = entry.role if entry.type == "message" else entry.type
    text = " ".join(entry_text(entry).split())
    if len(text) > WIDTH:
        text = text[: WIDTH - 1] + "…"
    return f"{short_id(entry.id)} {kind}: {text}"


def render_text_tree(tree: SessionTree) -> str:
    """One line per entry; `*` marks the active path, `←` the active leaf, `[...]` labels."""
    active = tree.path_ids(tree.active_leaf) if tree.active_leaf else set()
    lines: list[str] = []

    def shown(entry_id: str) -> bool:
        e = tree.by_id[entry_id]  # markers without children say nothing a label tag does not
        return not (is_marker(e) and not tree.children.get(entry_id))

    # Each stack item: (entry id, prefix for its own line, prefix for the lines below it).
    stack = [(r, "", "") for r in reversed([r for r in tree.roots if shown(r)])]
    while stack:
        entry_id, own, below = stack.pop()
        e = tree.by_id[entry_id]
        mark = "*" if entry_id in active else " "
        line = f"{mark} {own}{_describe(e)}"
        if entry_id in tree.labels:
            line += f"  [{tree.labels[entry_id]}]"
        if entry_id == tree.active_leaf:
            line += "  ← active leaf"
        if entry_id in tree.orphans:
            line += "  (orphan)"
        lines.append(line)
        kids = [k for k in tree.children.get(entry_id, ()) if shown(k)]
        if len(kids) == 1:
            stack.append((kids[0], below, below))
        else:
            for i in range(len(kids) - 1, -1, -1):
                last = i == len(kids) - 1
                stack.append((kids[i], below + ("└─ " if last else "├─ "), below + ("   " if last else "│  ")))
    return "\n".join(lines)
