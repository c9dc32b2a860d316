"""Pages that compare what the model saw: before and after a compaction, and any two contexts.

Both are whole pages (two columns need the width of the window), reached from the Context tab,
a compaction's node panel and the Lost tab; their URLs name what they compare, so they can be
shared. The timeline of the Context tab is made here too.
"""

from __future__ import annotations

from flask import Blueprint, abort, render_template, request, url_for

from ..core.context import settings_on
from ..core.context_diff import BeforeAfter, ContextDiff, Side, before_after, diff_contexts
from ..core.errors import SessionError
from ..core.timeline import timeline
from ..core.tree import SessionTree
from ..model.table import context_window
from .compare import diff_html
from .current import store
from .timeline_svg import legend, timeline_svg

bp = Blueprint("context_pages", __name__)


def window_of(side: Side) -> int | None:
    return context_window(side.settings.provider, side.settings.model_id)


def percent(side: Side) -> int | None:
    window = window_of(side)
    return round(100 * side.tokens.context / window) if window else None


def path_timeline(tree: SessionTree, rel: str, node: str, link=None):
    """The timeline chart of the path to `node` (links select the point's node unless `link`)."""
    points = timeline(tree, node)
    settings = settings_on(tree, tree.path(node))
    window = context_window(settings.provider, settings.model_id)
    link = link or (lambda i: url_for("sessions.session_page", rel=rel, node=i, tab="context"))
    return timeline_svg(points, window, link, selected=node)


@bp.app_template_global()
def context_timeline(tree: SessionTree, rel: str, node: str):
    return path_timeline(tree, rel, node)


@bp.app_template_global()
def timeline_legend():
    return legend()


@bp.get("/s/<path:rel>/context/compaction/<cid>")
def compaction_page(rel: str, cid: str):
    tree = store().session(rel).tree
    try:
        ba: BeforeAfter = before_after(tree, cid)
    except SessionError as exc:
        abort(404, description=str(exc))
    return render_template("context_compaction.html", rel=rel, tree=tree, ba=ba, window_of=window_of,
                           percent=percent)


@bp.get("/s/<path:rel>/context/diff")
def diff_page(rel: str):
    tree = store().session(rel).tree
    a, b = request.args.get("a", "").strip(), request.args.get("b", "").strip()
    if not a or not b:
        node = a or b or tree.conversation_leaf(tree.active_leaf) or ""
        return render_template("context_diff.html", rel=rel, tree=tree, diff=None, a=node, b="",
                               problem=None)
    try:
        diff: ContextDiff = diff_contexts(tree, a, b)
    except SessionError as exc:
        return render_template("context_diff.html", rel=rel, tree=tree, diff=None, a=a, b=b, problem=str(exc)), 404
    return render_template("context_diff.html", rel=rel, tree=tree, diff=diff, a=a, b=b, problem=None,
                           diff_html=diff_html, window_of=window_of, percent=percent,
                           swap_url=url_for("context_pages.diff_page", rel=rel, a=b, b=a))
