"""How each drawn node looks: its label, colours and shape by entry type and role, its
tooltip, and the specs (label, link, attributes) of every node of a layout, which the DOT
writer writes and the SVG patcher compares."""

from __future__ import annotations

from urllib.parse import urlencode

from ...core.entries import (
    BRANCH_SUMMARY, COMPACTION, MESSAGE, META_TYPES, Entry, content_text, entry_text, readable_type, tool_calls,
)
from ...core.tokens import format_tokens
from ...core.tree import SessionTree
from .layout import GraphLayout
from .text import LABEL_WIDTH, css_token, dom_id, dot_text

SKELETON_WIDTH = 26  # characters of a line in the skeleton: its drawing fits the pane at 11 px


def _node_style(tree: SessionTree, e: Entry, width: int = LABEL_WIDTH) -> tuple[str, dict[str, str]]:
    """The label (lines of at most `width` characters) and dot attributes that say an entry's
    type at a glance."""
    classes = ["t-" + css_token(e.type).replace("_", "-")]
    attrs: dict[str, str] = {}
    text = dot_text(entry_text(e), width)
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
            label = dot_text(f"{e.message.get('toolName', 'tool')}: {content_text(e.message.get('content'), ' ')}", width)
        elif role == "system":  # pi 1.6: the prompt and tools from here on
            attrs.update(shape="box", style="filled", fillcolor="#fffbeb", color="#b45309")
            label = "system prompt\n" + text if text else "system prompt"
        else:
            attrs.update(shape="box", style="filled", fillcolor="#ede9fe", color="#7c3aed")
            label = text
    elif e.type == COMPACTION:
        before, after = e.get("tokensBefore"), e.get("tokensAfter")
        known = [format_tokens(n) if isinstance(n, int) else "?" for n in (before, after) if n is not None]
        tokens = f"{' → '.join(known)} tokens" if known else "tokens not recorded"
        attrs.update(shape="folder", style="filled", fillcolor="#fde68a", color="#b45309", penwidth="2")
        label = f"compaction\n{tokens}"
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
        label = dot_text(readable_type(e.type))  # ("context edit", not "context_edit")
    if e.id in tree.labels:
        label = f"◆ {dot_text(tree.labels[e.id], width)}\n{label}"
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


# What a node standing for left-out work looks like: "more branches here" and folded retries.
_FOLDED = dict(shape="box", style="dashed,rounded,filled", fillcolor="#f5f3ff", color="#7c3aed", fontsize="9")


def node_specs(tree: SessionTree, layout: GraphLayout, link) -> dict[str, dict]:
    """Dom id -> the label and dot attributes of every drawn node (what to_dot writes, and what
    patch_drawing compares); `link(entry_id, extra=None)` gives a node's URL."""
    active_leaf = tree.conversation_leaf(tree.active_leaf)
    active = set(layout.path_doms(active_leaf))  # the drawn nodes on the active path
    specs: dict[str, dict] = {}
    skeleton = layout.level == "skeleton"
    width = SKELETON_WIDTH if skeleton else LABEL_WIDTH
    for e in layout.nodes:
        label, attrs = _node_style(tree, e, width)
        if skeleton and e.type == COMPACTION:
            label = label.replace("\n", " ", 1)
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
            head = f"{turns} turn{'s' if turns > 1 else ''} · {size}"
            # (one line in the skeleton, its words in the tooltip: the skeleton fits the pane)
            lines = [head] if skeleton else [f"⋯ {head} ⋯", dot_text(first, width)]
            kind, fill = "segment turns", "#ffffff"
        else:  # the assistant's work in one turn: its steps, the tools it called, what it cost
            first = seg.first_text()
            lines = [f"⚙ assistant · {size}"] if skeleton else [f"⚙ assistant · {size}", seg.tool_chips(), dot_text(first)]
            kind, fill = "segment turn-work", "#f3f4f6"
        specs[seg.id] = dict(
            label="\n".join(x for x in lines if x),
            shape="box",
            style="dashed,filled",
            fillcolor=fill,
            color="#6b7280",
            fontsize="9",
            id=seg.id,
            URL=link(seg.first_id, {"open": seg.opens} if seg.opens else None),
            tooltip=f"{len(seg.ids)} entries folded: click to expand · " + dot_text(first, 160),
            **{"class": kind + (" skeleton" if seg.opens else "") + (" on-active" if on_active else "")},
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
            **_FOLDED,
            id=more.id,
            URL=link(more.anchors[0], {"open": ",".join(more.anchors)}),
            tooltip=tip,
            **{"class": "segment more"},
        )
    for fold in layout.retries:
        specs[fold.id] = dict(
            label=fold.words(),
            **_FOLDED,
            id=fold.id,
            URL=link(fold.opens()[0], {"open": ",".join(fold.opens())}),
            tooltip=(f"{len(fold.forks):,} fork points along this path, folded with their {fold.branches:,} side "
                     f"branch{'' if fold.branches == 1 else 'es'} ({fold.entries:,} entries): click to open some of them"),
            **{"class": "segment retries" + (" on-active" if fold.id in active else "")},
        )
    return specs


def linker(node_url, long_urls: dict[str, str]):
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
