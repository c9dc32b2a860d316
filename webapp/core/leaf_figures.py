"""Figures of every branch of a session, from one walk down the tree.

The figures of a path are the figures of its parent path plus its own entry, so one depth-first
walk gives every leaf its turns, cost, tool calls and errors, wall time, status and context
tokens, instead of building a context per leaf. Context tokens follow SPEC §6 like
`tokens.context_tokens`: the last usable usage after the latest compaction, plus an estimate of
what follows it; estimates are made only for the entries after such an anchor (memoized). A leaf
with no such usage (a session that reports none) gets `context_tokens` itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from .compare import IDLE_GAP, user_text
from .context import build_context
from .entries import BRANCH_SUMMARY, COMPACTION, CONTEXT_EDIT, MESSAGE, USAGE, Entry
from .outcome import STATUS_ORDER, STATUSES, outcome
from .tokens import context_tokens
from .tree import SessionTree

SORT_KEYS = ("cost", "tokens", "errors", "turns", "calls", "depth", "wall", "status")


@dataclass
class LeafFigures:
    leaf: Entry
    last_user: str
    label: str | None  # the latest label on the branch's own part (below its last split)
    inherited_label: str | None  # else the latest label above it, on the part shared with others
    depth: int  # entries from the root
    turns: int
    tokens: int  # the context at the leaf
    cost: float
    calls: int
    errors: int
    wall_seconds: float | None
    status: str  # a key of outcome.STATUSES
    status_detail: str
    active: bool

    @property
    def wall(self) -> float:
        return self.wall_seconds or 0.0

    @property
    def status_text(self) -> str:
        return STATUSES[self.status]

    @property
    def status_rank(self) -> int:
        """Sorting by status puts what needs a look first: errors, failed checks, questions."""
        return len(STATUS_ORDER) - STATUS_ORDER[self.status]


# The running figures of the path from the root to a node, as one tuple (a walk of 100k entries
# makes 100k of them): depth, turns, cost, tool calls, tool errors, the last time and the time
# worked, last user message, own label, inherited label, the usage reported after the latest compaction (the
# anchor) and the depth of the message that reported it.
_ROOT = (0, 0, 0.0, 0, 0, None, None, None, None, None, None, -1)


def leaf_figures(tree: SessionTree) -> list[LeafFigures]:
    """Every leaf of `tree` (in `tree.leaves()` order) with the figures of its whole path."""
    leaves = set(tree.leaves())
    active = tree.conversation_leaf(tree.active_leaf)
    by_id, kids_of, labels = tree.by_id, tree.children.kids.get, tree.labels

    found: dict[str, LeafFigures] = {}
    path: list[Entry] = []  # the current path of the walk
    stack: list[tuple[str, tuple]] = [(r, _ROOT) for r in reversed(tree.roots)]
    while stack:
        node, state = stack.pop()
        depth, turns, cost, calls, errors, previous, worked, last_user, label, inherited, anchor, upto = state
        del path[depth:]
        while True:  # down a linear run in place: the state is packed again only where it splits
            e = by_id[node]
            path.append(e)
            depth += 1
            t, spent, made, used, failed = e.figures  # (the facts kept of each entry: no body is read)
            if e.type == MESSAGE:
                role = e.role
                if role == "user":
                    turns += 1
                    last_user = e
                elif role == "assistant":
                    cost += spent
                    calls += made
                    if used is not None:
                        anchor, upto = used, depth - 1
                elif role == "toolResult":
                    errors += failed
                    cost += spent  # (a tool that called a model itself records its usage)
            elif e.type == BRANCH_SUMMARY or e.type == USAGE:
                cost += spent  # the summary call, or spending that is no reply (a cache warm-up)
            elif e.type == COMPACTION:
                cost += spent
                anchor = None  # a usage reported before it measured the context before it
            elif e.type == CONTEXT_EDIT:
                anchor = None  # likewise before an edit (pi distrusts it too)
            if t is not None:  # the time worked, entry to entry along the path (compare.figures_of's rule)
                if previous is not None and 0 < t - previous <= IDLE_GAP:
                    worked = (worked or 0.0) + (t - previous)
                elif worked is None:
                    worked = 0.0
                previous = t
            kids = kids_of(node, ())  # a lone child's id, or a list of two or more (tree.Children)
            if node in labels:
                label = labels[node]
            elif type(kids) is list and len(tree.conversation_children(node)) > 1:
                inherited = label or inherited
                label = None  # a split: what is above it is shared with another branch
            if node in leaves:
                ended = outcome(path)  # (reads the bodies of the last turn only)
                found[node] = LeafFigures(
                    leaf=e,
                    last_user=user_text(last_user) if last_user else "",
                    label=label,
                    inherited_label=None if label else inherited,
                    depth=depth,
                    turns=turns,
                    tokens=(anchor + sum(x.tokens for x in path[upto + 1:]) if anchor is not None
                            else context_tokens(build_context(tree, node)).context),
                    cost=cost,
                    calls=calls,
                    errors=errors,
                    wall_seconds=round(worked, 6) if worked is not None else None,
                    status=ended.status,
                    status_detail=ended.detail,
                    active=node == active,
                )
            if type(kids) is not str:
                break
            node = kids
        state = (depth, turns, cost, calls, errors, previous, worked, last_user, label, inherited, anchor, upto)
        for child in reversed(kids):
            stack.append((child, state))
    return [found[leaf] for leaf in tree.leaves() if leaf in found]


def sort_leaves(rows: list[LeafFigures], key: str, descending: bool = True) -> list[LeafFigures]:
    """`rows` by one of SORT_KEYS (stable: ties keep the tree's order)."""
    if key not in SORT_KEYS:
        raise ValueError(f"sort by {key!r}: use one of {', '.join(SORT_KEYS)}")
    attr = "status_rank" if key == "status" else key
    return sorted(rows, key=lambda r: getattr(r, attr), reverse=descending)
