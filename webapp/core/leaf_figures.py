"""Figures of every branch of a session, from one walk down the tree (issue #13.4).

The figures of a path are the figures of its parent path plus its own entry, so one depth-first
walk gives every leaf its turns, cost, tool calls and errors, wall time, status and context
tokens, instead of building a context per leaf. Context tokens follow SPEC §6 like
`tokens.context_tokens`: the last usable usage after the latest compaction, plus an estimate of
what follows it; estimates are made only for the entries after such an anchor (memoized).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .compare import STATUSES, entry_cost, is_tool_error, outcome, user_text
from .context import entry_messages, summary_message
from .entries import COMPACTION, MESSAGE, Entry, parse_time, tool_calls
from .reader import first_kept_id
from .tokens import estimate_message_tokens, usage_tokens
from .tree import SessionTree

SORT_KEYS = ("cost", "tokens", "errors", "turns", "calls", "depth", "wall")


@dataclass
class LeafFigures:
    leaf: Entry
    last_user: str
    label: str | None  # the latest label on the branch's own part (below its last split)
    depth: int  # entries from the root
    turns: int
    tokens: int  # the context at the leaf
    cost: float
    calls: int
    errors: int
    wall_seconds: float | None
    status: str  # a key of compare.STATUSES
    active: bool

    @property
    def wall(self) -> float:
        return self.wall_seconds or 0.0

    @property
    def status_text(self) -> str:
        return STATUSES[self.status]


@dataclass
class _State:
    """The running figures of the path from the root to one node."""

    depth: int = 0
    turns: int = 0
    cost: float = 0.0
    calls: int = 0
    errors: int = 0
    first: datetime | None = None
    last: datetime | None = None
    last_user: Entry | None = None
    last_message: Entry | None = None
    label: str | None = None
    anchor: int | None = None  # usage tokens reported after the latest compaction
    anchor_depth: int = -1  # where that usage (or, without one, the counted part) ends
    base: int = 0  # tokens of the compaction summary and its kept part, before `anchor_depth`


def leaf_figures(tree: SessionTree) -> list[LeafFigures]:
    """Every leaf of `tree` (in `tree.leaves()` order) with the figures of its whole path."""
    leaves = set(tree.leaves())
    active = tree.conversation_leaf(tree.active_leaf)
    estimates: dict[str, int] = {}

    def estimate(e: Entry) -> int:
        n = estimates.get(e.id)
        if n is None:
            n = estimates[e.id] = sum(estimate_message_tokens(m) for m in entry_messages(e))
        return n

    found: dict[str, LeafFigures] = {}
    path: list[Entry] = []  # the current path of the walk
    stack: list[tuple[str, _State | None]] = [(r, None) for r in reversed(tree.roots)]
    while stack:
        node, parent_state = stack.pop()
        entry = tree.by_id[node]
        depth = parent_state.depth if parent_state else 0
        del path[depth:]
        path.append(entry)
        state = _step(tree, parent_state, entry, path, estimate)
        if node in leaves:
            found[node] = _figures(state, entry, path, estimate, node == active)
        for child in reversed(tree.children.get(node, ())):
            stack.append((child, state))
    return [found[leaf] for leaf in tree.leaves() if leaf in found]


def _step(tree: SessionTree, parent: _State | None, e: Entry, path: list[Entry], estimate) -> _State:
    s = _State() if parent is None else _State(**parent.__dict__)
    s.depth += 1
    if e.type == MESSAGE:
        s.last_message = e
        role = e.role
        if role == "user":
            s.turns += 1
            s.last_user = e
        elif role == "assistant":
            s.cost += entry_cost(e)
            s.calls += len(tool_calls(e))
            used = usage_tokens(e)
            if used is not None:
                s.anchor, s.anchor_depth, s.base = used, s.depth - 1, 0
        elif is_tool_error(e):
            s.errors += 1
    elif e.type == COMPACTION:
        kept = first_kept_id(e)
        start = next((i for i, x in enumerate(path[:-1]) if x.id == kept), len(path))
        s.anchor, s.anchor_depth = None, len(path) - 1
        s.base = estimate_message_tokens(summary_message(e)) + sum(estimate(x) for x in path[start:-1])
    t = parse_time(e.timestamp)
    if t is not None:
        s.first = t if s.first is None else min(s.first, t)
        s.last = t if s.last is None else max(s.last, t)
    if e.id in tree.labels:
        s.label = tree.labels[e.id]
    elif len(tree.conversation_children(e.id)) > 1:
        s.label = None  # a split: what is above it is shared with another branch
    return s


def _figures(s: _State, leaf: Entry, path: list[Entry], estimate, active: bool) -> LeafFigures:
    after = sum(estimate(x) for x in path[s.anchor_depth + 1:])
    return LeafFigures(
        leaf=leaf,
        last_user=user_text(s.last_user) if s.last_user else "",
        label=s.label,
        depth=s.depth,
        turns=s.turns,
        tokens=(s.anchor or 0) + s.base + after,
        cost=s.cost,
        calls=s.calls,
        errors=s.errors,
        wall_seconds=(s.last - s.first).total_seconds() if s.first is not None else None,
        status=outcome([s.last_message] if s.last_message else []).status,
        active=active,
    )


def sort_leaves(rows: list[LeafFigures], key: str, descending: bool = True) -> list[LeafFigures]:
    """`rows` by one of SORT_KEYS (stable: ties keep the tree's order)."""
    if key not in SORT_KEYS:
        raise ValueError(f"sort by {key!r}: use one of {', '.join(SORT_KEYS)}")
    return sorted(rows, key=lambda r: getattr(r, key), reverse=descending)
