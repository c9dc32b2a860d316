"""A whole session as one HTML file that reads anywhere: the tree drawing, every branch's
transcript, filters, search. Styles are inline and nothing is fetched; the inline script only
adds search and the highlighting of a clicked branch, so the file reads fully without it.

Entries are rendered by the same partials as the app (`_transcript_item.html` with `export`
set), so their content is escaped and sanitized exactly as there.
"""

from __future__ import annotations

import dataclasses
import html
import re
from pathlib import Path

from flask import Blueprint, Flask, current_app, request

from ..core.catalog import first_user_message
from ..core.entries import COMPACTION, MODEL_CHANGE
from ..core.session import Session
from ..core.transcript import (
    FILTER_NAMES,
    FILTERS,
    Options,
    branch_name,
    branch_sections,
    items_of,
    only_tool_calls,
    other_branches,
)
from ..core.tokens import entry_cost
from ..core.tree import SessionTree
from . import render, sessions
from .graph import GraphLayout, MoreBranches, build_layout, dom_id, render_svg
from .transcript import plain_item_body
from .views import short

bp = Blueprint("export", __name__)

STATIC = Path(__file__).resolve().parents[2] / "static"
_STYLES = ("app.css", "transcript.css", "export.css")


def export_html(app: Flask, tree: SessionTree, title: str, leaf: str | None = None) -> str:
    """The session (or only the branch to `leaf`) as a self-contained HTML page."""
    active = tree.conversation_leaf(tree.active_leaf)
    leaves = [leaf] if leaf else list(dict.fromkeys([x for x in [active] if x] + tree.leaves()))
    sections = branch_sections(tree, leaves)
    options = Options(filter="all")  # everything is rendered; the filters only hide (CSS)
    shown = {e.id for s in sections for e in s.entries}
    layout = branch_layout(tree, leaf) if leaf else build_layout(tree)
    svg = render_svg(tree, layout, lambda entry_id: f"#t-{dom_id(entry_id)}")
    if leaf:
        svg = _MORE_TITLE.sub(lambda m: m.group(1) + html.escape(_fork_note(m.group(2))), svg)
    blocks = []
    for i, s in enumerate(sections):
        items = items_of(s.entries, options, tree.labels)
        blocks.append({
            "index": i,
            "section": s,
            "title": branch_name(tree, s.leaf, 80),
            "rows": items,
            "branches_at": {it.entry.id: [c for c in other_branches(tree, s.entries, it.at) if c in shown] for it in items},
            "only_tools": {it.entry.id for it in items if it.kind == "assistant" and only_tool_calls(it.entry)},
        })
    css = "\n".join([(STATIC / name).read_text() for name in _STYLES] + [render.pygments_css()])
    with app.app_context():
        template = app.jinja_env.get_template("session_export.html")
        return template.render(
            tree=tree, title=title, sections=blocks, svg=svg, css=css, script=(STATIC / "export.js").read_text(),
            options=options, labels=tree.labels, item_body=plain_item_body, export=True, filters=FILTERS,
            filter_names=FILTER_NAMES, focus_id=None, compactions=sum(1 for e in tree.entries if e.type == COMPACTION),
            leaf=leaf, dom=dom_id, cost=sum(entry_cost(e) for e in tree.entries),
            models=sorted({f"{e.get('provider')}/{e.get('modelId')}" for e in tree.entries if e.type == MODEL_CHANGE}),
        )


def branch_layout(tree: SessionTree, leaf: str) -> GraphLayout:
    """Only the path to `leaf`, folded as the app folds it, with a "more branches" node at each
    fork point on it saying how many branches leave there (they are not in the file)."""
    path = tree.path(leaf)
    on_path = {e.id for e in path}
    forks = {e.id: [c for c in tree.conversation_children(e.id) if c not in on_path] for e in path}
    forks = {f: side for f, side in forks.items() if side}
    layout = build_layout(tree, "auto", frozenset(), frozenset([leaf, *forks]))  # fork points stay drawn
    nodes = [e for e in layout.nodes if e.id in on_path]
    segments = [s for s in layout.segments if s.first_id in on_path]  # a fold never crosses a fork point
    drawn = {dom_id(e.id) for e in nodes} | {s.id for s in segments}
    out = dataclasses.replace(
        layout, nodes=nodes, segments=segments, more=[], capped=False,
        edges=[(a, b) for a, b in layout.edges if a in drawn and b in drawn],
    )
    leaves = set(tree.leaves())
    for fork, side in forks.items():
        below = _subtree(tree, side)
        more = MoreBranches(out.dom_for(fork), [fork], sum(x in leaves for x in below), len(below))
        out.more.append(more)
        out.edges.append((more.attach, more.id))
    return out


def _subtree(tree: SessionTree, tops: list[str]) -> list[str]:
    out, stack = [], list(tops)
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(tree.conversation_children(x))
    return out


# The tooltip of a "more branches" node says it opens them; in a one-branch file it cannot.
_MORE_TITLE = re.compile(r'(<g id="more-[^"]*"[^>]*>(?:(?!</g>).)*?xlink:title=")([^"]*)', re.S)


def _fork_note(title: str) -> str:
    n = re.match(r"\d+", title)
    if n is None:  # (a sub-agent's work, no branch)
        return "sub-agent work is left out here: this file holds one branch"
    n = int(n.group())
    return f"{n} other branch{'' if n == 1 else 'es'} fork{'s' if n == 1 else ''} here: this file holds one branch"


def export_name(tree: SessionTree, leaf: str | None) -> str:
    session_id = re.sub(r"[^A-Za-z0-9-]", "", str((tree.header or {}).get("id") or ""))[:13] or "session"
    return f"session-{session_id}{'-' + re.sub(r'[^A-Za-z0-9-]', '', leaf)[-8:] if leaf else ''}.html"


def session_title(tree: SessionTree, fallback: str) -> str:
    return tree.name or short(first_user_message(tree) or "", 80) or fallback


def export_session(path: Path, leaf: str | None = None) -> str:
    """What `session-tree export` writes: the file's session as HTML, without serving anything."""
    from .app import create_app

    tree = Session.open(path).tree
    leaf = tree.find(leaf).id if leaf else None
    return export_html(create_app(path.parent), tree, session_title(tree, path.name), leaf)


@bp.get("/s/<path:rel>/export")
def export(rel: str):
    """The session (or `?leaf=`'s branch) as one HTML file, downloaded."""
    tree = sessions.store().session(rel).tree
    leaf = request.args.get("leaf") or None
    if leaf:
        leaf = tree.entry(leaf).id
    html = export_html(current_app._get_current_object(), tree, session_title(tree, rel), leaf)
    response = current_app.response_class(html, mimetype="text/html")
    response.headers["Content-Disposition"] = f'attachment; filename="{export_name(tree, leaf)}"'
    return response
