"""The direction a drawing is laid out in: the one that shows the most of it at "Fit" in the
graph pane, estimated from the layout's ranks before `dot` runs."""

from __future__ import annotations

from ...core.tree import SessionTree
from .drawn import drawn_tree
from .layout import COLLAPSE_THRESHOLD, SKELETON_NODE, GraphLayout, build_layout


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
    ranks, widest = layout.ranks()
    node_w, node_h, nodesep, ranksep = SKELETON_NODE if layout.level == "skeleton" else (_NODE_W, _NODE_H, _NODESEP, _RANKSEP)
    if rankdir == "LR":
        return ranks * (node_w + ranksep), widest * (node_h + nodesep)
    return widest * (node_w + nodesep), ranks * (node_h + ranksep)


def choose_rankdir(layout: GraphLayout, pane: tuple[float, float] = PANE) -> str:
    """The direction that shows the most of the drawing at "Fit" on `pane`: the largest share
    of it in view at a legible scale, then the largest scale (a small tree drawn big)."""
    def score(rankdir: str) -> tuple[float, float]:
        w, h = drawing_extent(layout, rankdir)
        scale = max(min(pane[0] / w, pane[1] / h), LEGIBLE_SCALE)
        shown = min(1.0, pane[0] / (scale * w)) * min(1.0, pane[1] / (scale * h))
        return round(shown, 3), min(pane[0] / w, pane[1] / h)

    return max(RANKDIRS, key=score)  # TB first: it wins a tie


def default_level(tree: SessionTree) -> str:
    """How a session's graph folds when the URL does not say: a session with more than one
    branch opens at its skeleton (its shape at a glance), unless it is small enough that its
    drawing by turns fits the pane at a legible size already; any other by turns ("auto")."""
    d = drawn_tree(tree)
    if sum(d.leaves[r] for r in d.roots) <= 1:
        return "auto"
    if d.count <= COLLAPSE_THRESHOLD:
        layout = build_layout(tree)
        for rankdir in RANKDIRS:
            w, h = drawing_extent(layout, rankdir)
            if w * LEGIBLE_SCALE <= PANE[0] and h * LEGIBLE_SCALE <= PANE[1]:
                return "auto"
    return "skeleton"
