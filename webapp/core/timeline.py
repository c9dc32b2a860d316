"""The context over a path, turn by turn: how large it was at the end of each turn, where a
compaction cut it, and what the path had cost by then.

Each point is the context at one entry, counted exactly as `session-tree context --leaf ID` counts
it (`context_tokens`), so the chart and the inspector never disagree. A turn is a user message
and everything up to the next one; its point is the last entry of it the model sees. A compaction is a point of its
own, right after the end of the turn it followed, so it shows as a drop.
"""

from __future__ import annotations

from dataclasses import dataclass

from .context import build_context, own_path
from .entries import COMPACTION, MESSAGE, Entry
from .messages import entry_messages, estimate_message_tokens
from .tokens import TokenCount, context_tokens, entry_cost, usage_tokens
from .tree import SessionTree


@dataclass(frozen=True)
class Point:
    entry: Entry
    turn: int  # 1 for the first turn; 0 before any user message
    tokens: TokenCount
    cost: float  # what the path had cost up to and with this entry

    @property
    def reported(self) -> bool:
        """The provider reported the whole figure (nothing of it is an estimate)."""
        return self.tokens.estimated == 0

    @property
    def is_compaction(self) -> bool:
        return self.entry.type == COMPACTION


def _is_user(entry: Entry) -> bool:
    return entry.type == MESSAGE and entry.role == "user"


def turn_ends(path: list[Entry]) -> list[tuple[int, int]]:
    """(index in `path`, turn number) of each point: the last entry of every turn that gives the
    model a message (settings and labels after it change nothing it sees), and every compaction."""
    out: list[tuple[int, int]] = []
    turn = 0
    last: int | None = None  # the latest entry of the current stretch that adds messages

    def close() -> None:
        if last is not None and (not out or out[-1][0] != last):
            out.append((last, turn))

    for i, e in enumerate(path):
        if _is_user(e):
            close()
            turn += 1
            last = i
        elif e.type == COMPACTION:
            close()
            out.append((i, turn))
            last = None
        elif _gives_messages(e):
            last = i
    close()
    return out


def _gives_messages(e: Entry) -> bool:
    """Whether an entry says something to the model, from its kept token estimate where that
    answers (an entry with tokens gives messages), so that a long path's bodies are not read
    again for it; an entry of no tokens (an empty message) is asked itself."""
    return e.tokens > 0 or bool(entry_messages(e))


def timeline(tree: SessionTree, leaf_id: str | None) -> list[Point]:
    """The points of the path to `leaf_id`, in path order.

    One walk of the path: each point's count is what `context_tokens(build_context(...))` gives
    at its entry (the tests hold it to that), made from running sums instead of building the
    context anew at every turn, which on a path of a thousand entries took seconds. A sub-agent's
    path is its own run (`own_path`), as its context is."""
    path = own_path(tree.path(leaf_id))
    ends = dict(turn_ends(path))
    first_usage = next((e for e in path if usage_tokens(e) is not None), None)
    overhead = context_tokens(build_context(tree, first_usage.id)).overhead if first_usage else 0
    points: list[Point] = []
    cost = 0.0
    base = 0  # estimated tokens of the context's messages up to the latest compaction's own
    since: list[tuple[Entry, int]] = []  # entries after the latest compaction, with their estimates
    seen_usage = False
    for i, e in enumerate(path):
        cost += entry_cost(e)
        seen_usage = seen_usage or e is first_usage
        if e.type == COMPACTION:
            base = _compacted_estimate(tree, path, i)
            since = []
        else:
            since.append((e, e.tokens))  # (`Entry.tokens`: estimate_entry_tokens, kept once made)
        if i in ends:
            points.append(Point(e, ends[i], _count(base, since, overhead if seen_usage else 0), cost))
    return points


def _compacted_estimate(tree: SessionTree, path: list[Entry], at: int) -> int:
    """The estimated tokens of what a compaction at `path[at]` leaves: its summary (or the history
    it records) and the entries it keeps, as `build_context` puts them."""
    ctx = build_context(tree, path[at].id)
    return sum(estimate_message_tokens(m) for m in ctx.messages)


def _count(base: int, since: list[tuple[Entry, int]], overhead: int) -> TokenCount:
    """`context_tokens` from running sums: the last usage after the compaction, plus the estimate
    of what follows it; without one, the whole estimate plus the overhead."""
    for j in range(len(since) - 1, -1, -1):
        used = usage_tokens(since[j][0])
        if used is not None and _gives_messages(since[j][0]):
            estimate = sum(t for _, t in since[j + 1:])
            return TokenCount(used + estimate, estimate, since[j][0].id, overhead)
    estimate = base + sum(t for _, t in since)
    return TokenCount(estimate + overhead, estimate + overhead, None, overhead)
