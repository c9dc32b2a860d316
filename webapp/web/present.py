"""Presenter mode: a branch shown one turn at a time in large type, beside the skeleton of the
tree (the run holding the turn opened to its turns, the turn marked), for demos.

Read-only by nature (it has no form). The position is in the URL (`leaf` and `turn`), so a link
opens at a turn and a reload stays there; presenter.js only maps ←/→/space to the prev/next links.
"""

from __future__ import annotations

from flask import Blueprint, abort, redirect, render_template, request, url_for

from ..core.transcript import Options, items_of, path_to_leaf, turns
from ..core.verdicts import chosen_leaf, verdicts
from . import current, sessions
from .graph import dom_id
from .graph.one_branch import only_the_branch, side_branches
from .transcript import item_body

bp = Blueprint("present", __name__)


@bp.get("/s/<path:rel>/present")
def present(rel: str):
    session = current.store().session(rel)
    tree = session.tree
    node, leaf = request.args.get("node"), request.args.get("leaf")
    for ref in (node, leaf):
        if ref and ref not in tree.by_id:
            abort(404, description=f"no entry {ref!r} in this session")
    view = "turn" if request.args.get("view") == "turn" else "graph"
    start = node or leaf or chosen_leaf(tree, verdicts(session))  # (the winner, else the active leaf)
    if start is None:
        abort(404, description="this session has no entries to present")
    path = path_to_leaf(tree, start, leaf)
    starts = turns(path)
    if node:  # a click on the graph: open the turn that holds the node, under a canonical URL
        at = next(i for i, e in enumerate(path) if e.id == node)
        turn = max(i for i, s in enumerate(starts) if s <= at) + 1
        return redirect(url_for("present.present", rel=rel, leaf=path[-1].id, turn=turn, **_view(view)))
    text = request.args.get("turn", "1")
    turn = int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else 0
    if not 1 <= turn <= len(starts):
        abort(404, description=f"turn {text!r}: this branch has turns 1 to {len(starts)}")
    lo = starts[turn - 1]
    hi = starts[turn] if turn < len(starts) else len(path)
    entries = path[lo:hi]
    options = Options()
    graph = sessions.GraphOptions({"collapse": "skeleton"})  # the shape, read from afar
    graph.known(tree)
    # The branch presented alone, one column that reads from afar (its fork points say how many
    # branches leave there): never folded into a group; the turn is drawn, not folded.
    forks = side_branches(tree, path[-1].id)
    layout = sessions.layout_showing(rel, session, graph, entries[0].id, frozenset([path[-1].id, *forks]))
    layout = only_the_branch(tree, layout, path[-1].id)
    svg, note = sessions.drawing_svg(rel, session, graph, layout) if view == "graph" else (None, None)
    return render_template(
        "present.html",
        rel=rel, tree=tree, leaf=path[-1].id, turn=turn, turns=len(starts), view=view,
        items=items_of(entries, options, tree.labels), options=options, item_body=item_body,
        labels=tree.labels, branches_at={}, focus_id=None, present=True,
        svg=svg, graph_note=note,
        here=sorted({layout.dom_for(e.id) for e in entries}), path_doms=sorted({layout.dom_for(e.id) for e in path}),
        step=lambda n: url_for("present.present", rel=rel, leaf=path[-1].id, turn=n, **_view(view)),
        dom_id=dom_id,
    )


def _view(view: str) -> dict:
    return {"view": view} if view == "turn" else {}
