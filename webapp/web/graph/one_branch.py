"""A drawing of one branch alone: its path, folded as the drawing it is cut from folds it, with
one "N more branches here" node at each fork point on it saying how many branches leave there.

What a one-branch export holds (the other branches are not in its file) and what the presenter
draws beside a turn: the branch being shown can never be folded into a group, and the drawing
stays one column wide, so that it reads from afar without a node cut at the pane's edge.
"""

from __future__ import annotations

import dataclasses

from ...core.tree import SessionTree
from .layout import GraphLayout, MoreBranches
from .text import dom_id


def side_branches(tree: SessionTree, leaf: str) -> dict[str, list[str]]:
    """Fork point on the path to `leaf` -> the children there the path does not go on with."""
    path = tree.path(leaf)
    on_path = {e.id for e in path}
    forks = {e.id: [c for c in tree.conversation_children(e.id) if c not in on_path] for e in path}
    return {f: side for f, side in forks.items() if side}


def only_the_branch(tree: SessionTree, layout: GraphLayout, leaf: str) -> GraphLayout:
    """`layout` (drawn with `leaf` and the fork points on its path pinned) cut to the path to
    `leaf`, with a "more branches" node per fork point on it."""
    on_path = {e.id for e in tree.path(leaf)}
    nodes = [e for e in layout.nodes if e.id in on_path]
    segments = [s for s in layout.segments if s.first_id in on_path]  # (a fold never crosses a fork point)
    drawn = {dom_id(e.id) for e in nodes} | {s.id for s in segments}
    out = dataclasses.replace(
        layout, nodes=nodes, segments=segments, more=[], retries=[], capped=False, one_branch=True,
        edges=[(a, b) for a, b in layout.edges if a in drawn and b in drawn],
    )
    leaves = set(tree.leaves())
    for fork, side in side_branches(tree, leaf).items():
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
