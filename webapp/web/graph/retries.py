"""Fork points along one path, folded: a session where the user retried often has thousands of
branch points on its active path, each with a short side branch, and a skeleton (or a drawing
by turns) that keeps every branch point drawn is longer than any drawing holds. Past FOLD_PAST
such fork points along the paths that stay drawn (by turns: when even folded by runs those
paths are over the drawing's cap), all but the most relevant (opened, labelled, the active leaf's, newest)
fold, each run of consecutive ones into one node: "⋯ 4,980 retries along turns 12–9,960 ⋯". A
click on it opens OPEN_FORKS of its fork points spread along it (each part between them folds
again), so that any shape stays bounded and every fork point is a few clicks away."""

from __future__ import annotations

from dataclasses import dataclass

from ...core.entries import COMPACTION
from .drawn import Drawn, include_path
from .text import dom_id

KEPT_FORKS = 4  # fork points a folded path keeps drawn besides those the user opened (it fits the pane)
FOLD_PAST = 16  # fold only past this many fork points along the paths drawn (the pane's height)
MIN_FOLD = 3  # fewer consecutive fork points than this stay drawn
OPEN_FORKS = 6  # fork points a click on a fold opens


@dataclass
class Retries:
    """Consecutive fork points along one path folded into one node, with the side branches they
    fork into and the path between them. The path enters it from the chain `start` (which ends
    at the first fork point) and goes on with the chain `after` (below the last one); `heads`
    are the chains of the path in between."""

    forks: list[str]
    start: str
    heads: list[str]
    after: str
    branches: int  # side branches forking from them
    entries: int  # entries of those side branches and of the path between
    turns: tuple[int, int]  # the turn each first and last retry is of (1: the first prompt)

    @property
    def id(self) -> str:
        return "retries-" + dom_id(self.forks[0])

    def words(self) -> str:
        """What its node says: "⋯ 4,980 retries along turns 12–9,960 ⋯"."""
        first, last = self.turns
        along = f"turn {first:,}" if first == last else f"turns {first:,}–{last:,}"
        return f"⋯ {self.branches:,} retr{'y' if self.branches == 1 else 'ies'} along {along} ⋯"

    def opens(self) -> list[str]:
        """The fork points a click opens: OPEN_FORKS of them, spread along the fold."""
        n = len(self.forks)
        return list(dict.fromkeys(self.forks[(2 * q + 1) * n // (2 * OPEN_FORKS)] for q in range(min(OPEN_FORKS, n))))


def spine_of(d: Drawn, targets) -> dict[str, int]:
    """The chains of the paths from the roots to `targets` (chain head -> last position on them)."""
    spine: dict[str, int] = {}
    for target in targets:
        if target is not None and d.place(target) is not None:
            include_path(d, target, spine)
    if not spine:
        spine.update(dict.fromkeys(d.roots, 0))
    return spine


def fold_retries(tree, d: Drawn, spine: dict[str, int], keep: set[str], opened: frozenset[str],
                 active_leaf: str | None) -> list[Retries]:
    """The folds of the fork points along `spine` (chain head -> last position drawn), or none
    when at most FOLD_PAST of them could fold. A fork point can fold when the spine goes on
    through exactly one of its children (its other children are its side branches) and it is
    no root; the chains between the fork points of one fold hold nothing that stays drawn
    (`keep`, compactions, what the user opened)."""
    chains, forks, up = d.chains, d.forks, d.up
    blocked = set()  # chains of the spine holding what stays drawn: no fold crosses them
    for x in (*keep, *opened, *(x for x in d.unfoldable if tree.by_id[x].type == COMPACTION)):
        where = d.place(x)
        if where is not None and where[1] <= spine.get(where[0], -1):
            blocked.add(where[0])
    # The spine's paths, chain by chain from each root: at a fork point it goes on through one
    # child (`nxt`), or splits or stops there (that fork point stays drawn).
    nxt: dict[str, str] = {}
    turn_after: dict[str, int] = {}  # fork point -> the user messages along the path up to it
    sides: dict[str, list[str]] = {}  # fork point -> its side branches (heads of their chains)
    order: list[str] = []
    users_at, last_of, labelled_below = d.users_at, d.last, d.labelled_below
    last: dict[str, int] = {}
    labelled: set[str] = set()
    head_of: dict[str, str] = {}  # fork point -> the chain it ends
    stack = [(r, 0) for r in reversed(d.roots) if r in spine]
    while stack:
        h, users = stack.pop()
        order.append(h)
        chain = chains[h]
        if spine[h] < len(chain) - 1:
            continue
        at = users_at.get(h)
        if at:
            users += len(at)
        f = chain[-1]
        kids = forks.get(f)
        if not kids:
            continue
        below = [k for k in kids if k in spine]
        if len(below) == 1 and (up[h] is not None or len(chain) > 1):
            nxt[h] = below[0]
            head_of[f] = h
            turn_after[f] = users
            off = sides[f] = [k for k in kids if k != below[0]]
            last[f] = max(map(last_of.__getitem__, off))
            if not labelled_below.isdisjoint(off):
                labelled.add(f)
            stack.append((below[0], users))
        else:
            stack.extend((k, users) for k in reversed(below))
    candidates = list(sides)
    if len(candidates) <= FOLD_PAST:
        return []
    where = d.place(active_leaf) if active_leaf is not None else None
    own = up[where[0]] if where is not None else None  # the active leaf's fork point
    kept = {f for f in candidates if f in keep or f in opened}
    ranked = sorted((f for f in candidates if f not in kept), key=lambda f: (f not in labelled, f != own, -last[f]))
    kept.update(ranked[:KEPT_FORKS])

    def goes_on(h: str) -> bool:
        """Whether a run of folded fork points above chain `h` goes on through it."""
        p = up[h]
        return p in head_of and p not in kept and h not in blocked

    folds: list[Retries] = []
    for h in order:  # runs of consecutive fork points, none kept, no blocked chain in between
        if h not in nxt or chains[h][-1] in kept or goes_on(h):
            continue
        run, heads, x = [chains[h][-1]], [], nxt[h]
        while x in nxt and x not in blocked and chains[x][-1] not in kept:
            run.append(chains[x][-1])
            heads.append(x)
            x = nxt[x]
        if len(run) >= MIN_FOLD:
            folds.append(_fold(d, h, run, heads, x, sides, turn_after))
    return folds


def _fold(d: Drawn, start: str, run: list[str], heads: list[str], after: str, sides, turn_after) -> Retries:
    branches = entries = 0
    size = d.size
    for f in run:
        off = sides[f]
        branches += len(off)
        entries += sum(map(size.__getitem__, off))
    entries += sum(len(d.chains[h]) for h in heads) + len(run)
    turns = (turn_after[run[0]] + 1, turn_after[run[-1]] + 1)
    return Retries(run, start, heads, after, branches, entries, turns)
