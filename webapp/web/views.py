"""What each page shows, computed from the core; the routes only pick one and render it."""

from __future__ import annotations

import bisect
import weakref
from dataclasses import dataclass

from ..core.compaction import (
    CompactionPlan,
    fitted_budgets,
    plan_compaction,
    suggested_keep_recent_tokens,
)
from ..core.context import Context, build_context, settings_on
from ..core.context_diff import replaced_entries
from ..core.context_edits import is_editable
from ..core.edit_preview import EditedEntry, edited_entries
from ..core.entries import (
    BRANCH_SUMMARY,
    COMPACTION,
    CUSTOM,
    CUSTOM_MESSAGE,
    MESSAGE,
    MODEL_CHANGE,
    THINKING_LEVEL_CHANGE,
    Entry,
    as_key,
    entry_text,
    readable_type,
    short_id,
    tool_calls,
)
from ..core.reader import first_kept_id
from ..core.request import Request, build_request
from ..core.system_prompt import SystemChange, changes
from ..core.tokens import TokenCount, context_tokens, leaf_tokens
from ..core.tree import SessionTree
from ..model.table import context_window
from .bands import compaction_bands, preview_band
from .graph import GraphLayout, dom_id, drawn_tree


@dataclass
class SummaryRow:
    entry: Entry
    parent: Entry | None
    first_kept: str | None
    from_id: str | None
    problem: str | None
    on_active_path: bool


def summary_rows(tree: SessionTree) -> list[SummaryRow]:
    active = tree.path_ids(tree.active_leaf) if tree.active_leaf else set()
    rows = []
    for e in tree.entries:
        if e.type not in (COMPACTION, BRANCH_SUMMARY):
            continue
        parent = tree.parent.get(e.id)
        rows.append(
            SummaryRow(
                entry=e,
                parent=tree.by_id[parent] if parent else None,
                first_kept=first_kept_id(e) if e.type == COMPACTION else None,
                from_id=as_key(e.get("fromId")) if e.type == BRANCH_SUMMARY else None,
                problem=tree.first_kept_problem(e) if e.type == COMPACTION else None,
                on_active_path=e.id in active,
            )
        )
    return rows


@dataclass
class ContextNotes:
    """What the context tab says beside its messages: what each system message changed (by
    message index), the entries edits changed (both texts), and which it offers to edit."""

    system: dict[int, SystemChange]
    edited: dict[str, EditedEntry]  # in the context, its content replaced
    omitted: list[EditedEntry]  # taken out of it
    editable: set[str]


def context_notes(ctx: Context) -> ContextNotes:
    system = {c.index: c for c in changes(ctx.messages, ctx.sources)}
    edited = edited_entries(ctx)
    return ContextNotes(system, {x.target.id: x for x in edited if x.sent is not None},
                        [x for x in edited if x.sent is None],
                        {s.id for s in ctx.sources if is_editable(s)})


@dataclass
class ContextView:
    context: Context
    tokens: TokenCount
    window: int | None
    overlay: dict  # drawn node dom id -> state, for the graph
    request: Request  # what a model call at this node is sent (SPEC §5b)
    replaced: int = 0  # entries the compaction in force replaced (`replaced_entries`)
    notes: ContextNotes | None = None

    @property
    def percent(self) -> int | None:
        return round(100 * self.tokens.context / self.window) if self.window else None


def context_view(tree: SessionTree, node_id: str, layout: GraphLayout) -> ContextView:
    """The context at a node, and how each drawn node relates to it: in it, replaced by a
    compaction's summary (which one), or off the path. A fold takes its strongest member state,
    and one only partly in the context says how much of it is ("28 of 40 in context": of its
    entries that say something to the model, those not replaced by a summary)."""
    ctx = build_context(tree, node_id)
    tokens = context_tokens(ctx)
    window = context_window(ctx.settings.provider, ctx.settings.model_id)
    in_ctx = ctx.entry_ids
    rank = {"in-context": 3, "replaced": 2, "on-path": 1}
    states: dict[str, dict] = {}
    counts: dict[str, list[int]] = {}  # a fold's dom id -> [its entries in the context, and replaced]
    path_doms: set[str] = set()
    for e, drawn in zip(ctx.path, layout.doms_along(ctx.path)):  # (one walk: the path is long, the drawing small)
        if e.id in in_ctx:
            state = {"state": "in-context"}
        elif e.id in ctx.edits and ctx.edits[e.id].get("replacement", {}) is None:
            edit = ctx.edits[e.id].id
            state = {"state": "replaced", "by": dom_id(edit), "byLabel": f"omitted by context edit {short_id(edit)}"}
        elif e.id in ctx.replaced_by:
            comp = ctx.replaced_by[e.id]
            state = {"state": "replaced", "by": dom_id(comp), "byLabel": f"summarized by compaction {short_id(comp)}"}
        else:
            state = {"state": "on-path"}
        path_doms.add(drawn)
        if drawn not in states or rank[state["state"]] > rank[states[drawn]["state"]]:
            states[drawn] = state
        if state["state"] != "on-path" and not drawn.startswith(("e-", "x-")):
            counts.setdefault(drawn, [0, 0])[state["state"] == "replaced"] += 1
    for drawn, (held, replaced) in counts.items():
        if held and replaced:
            states[drawn] = {**states[drawn], "count": f"{held:,} of {held + replaced:,} in context"}
    overlay = {"nodes": states, "onPath": sorted(path_doms),
               "bands": compaction_bands(tree, ctx.path, layout)}
    replaced = len(replaced_entries(tree, ctx.compaction.id)) if ctx.compaction and tree.parent.get(ctx.compaction.id) else 0
    return ContextView(ctx, tokens, window, overlay, build_request(ctx), replaced, context_notes(ctx))


@dataclass
class Nav:
    parent: str | None
    children: list[str]  # the first NAV_CHILDREN (a node may have 100,000: one link each is no page)
    prev_sibling: str | None
    next_sibling: str | None
    next_branch_point: str | None
    prev_branch_point: str | None
    root: str | None
    more_children: int = 0  # children past the first NAV_CHILDREN


NAV_CHILDREN = 20


class _TreeOrder:
    """Drawn entries in depth-first order (children by time) and the branch points among them,
    found once per tree from its chains (the entries of a chain are consecutive in that order,
    so only chains are walked): `b`/`B` walk this order."""

    def __init__(self, tree: SessionTree):
        self._d = d = drawn_tree(tree)
        self._start: dict[str, int] = {}  # chain head -> the position of its first entry
        self.branch_points: list[str] = []
        self.branch_positions: list[int] = []
        at = 0
        stack = list(reversed(d.roots))
        while stack:
            h = stack.pop()
            chain = d.chains[h]
            self._start[h] = at
            at += len(chain)
            kids = d.forks.get(chain[-1], ())
            if tree.forks(chain[-1], kids):
                self.branch_points.append(chain[-1])
                self.branch_positions.append(at - 1)
            stack.extend(reversed(kids))
        self.root = d.roots[0] if d.roots else None

    def position(self, entry_id: str | None) -> int:
        where = self._d.place(entry_id or "")
        return self._start[where[0]] + where[1] if where is not None else 0


_orders: "weakref.WeakKeyDictionary[SessionTree, _TreeOrder]" = weakref.WeakKeyDictionary()


def _tree_order(tree: SessionTree) -> _TreeOrder:
    order = _orders.get(tree)
    if order is None:
        order = _orders[tree] = _TreeOrder(tree)
    return order


def node_nav(tree: SessionTree, entry_id: str) -> Nav:
    """Where the keyboard moves from a node: parent, first child, siblings, the next and previous
    branch points in depth-first order (from any node: below it first, then the later branches,
    wrapping round), and the root."""
    parent = tree.parent[entry_id]
    siblings = tree.conversation_children(parent) if parent else tree.roots
    i = siblings.index(entry_id) if entry_id in siblings else -1
    order = _tree_order(tree)
    points = order.branch_points
    next_bp = prev_bp = None
    if points:
        at = order.position(tree.conversation_leaf(entry_id))
        cut = bisect.bisect_right(order.branch_positions, at)
        next_bp = points[cut % len(points)]
        before = cut - 1 if points[cut - 1] != entry_id else cut - 2
        prev_bp = points[before % len(points)]
    children = tree.conversation_children(entry_id)
    return Nav(
        parent=parent,
        children=children[:NAV_CHILDREN],
        more_children=max(len(children) - NAV_CHILDREN, 0),
        prev_sibling=siblings[i - 1] if i > 0 else None,
        next_sibling=siblings[i + 1] if 0 <= i < len(siblings) - 1 else None,
        next_branch_point=next_bp,
        prev_branch_point=prev_bp,
        root=order.root,
    )


def tool_call_for(tree: SessionTree, entry: Entry) -> dict | None:
    """The toolCall block a tool result answers, looked up in the assistant message above it."""
    call_id = entry.message.get("toolCallId") if entry.role == "toolResult" else None
    node = tree.parent.get(entry.id)
    while call_id and node is not None:
        for call in tool_calls(tree.by_id[node]):
            if call.get("id") == call_id:
                return call
        if tree.by_id[node].role == "assistant":
            return None
        node = tree.parent.get(node)
    return None


# Roles whose name in the file reads as code: a pi `bashExecution` is a command the user ran
# with `!`, shown to the model as a user message.
ROLE_TITLES = {"bashExecution": "bash (user)", "system": "system prompt", "toolResult": "tool result",
               "branchSummary": "branch summary", "compactionSummary": "compaction summary"}


def entry_title(entry: Entry) -> str:
    """What kind of entry it is, in words: a message's role (a tool result with its tool's name:
    "tool result of read"), a custom entry's own type."""
    if entry.type == MESSAGE:
        if not (isinstance(entry.role, str) and entry.role):
            return "entry"
        tool = entry.message.get("toolName") if entry.role == "toolResult" else None
        if isinstance(tool, str) and tool.strip():
            return f"tool result of {' '.join(tool.split())}"
        return ROLE_TITLES.get(entry.role, entry.role)
    if entry.type in (CUSTOM, CUSTOM_MESSAGE) and isinstance(entry.get("customType"), str):
        return readable_type(entry.get("customType"))
    return readable_type(entry.type) if entry.type else "entry"


def short(text, n: int = 90) -> str:
    """One line of at most `n` characters (a malformed file may hand over a number or a list)."""
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def entry_summary(entry: Entry) -> str:
    return short(entry_text(entry))


def compaction_plan(
    tree: SessionTree, leaf: str | None, keep_recent_tokens: str = "", first_kept: str | None = None
) -> CompactionPlan:
    """The plan at a leaf, against the window of the model the branch uses; `keep_recent_tokens`
    is the form's text (blank: a budget that makes a cut on this branch, the SPEC default when the
    branch is large enough). ValueError says what is wrong with it."""
    text = keep_recent_tokens.strip()
    settings = settings_on(tree, tree.path(leaf))
    window = context_window(settings.provider, settings.model_id)
    keep = int(text) if text.isascii() and text.isdigit() else suggested_keep_recent_tokens(tree, leaf, window) if not text else None
    if keep is None:
        raise ValueError(f"keep the most recent tokens: {text!r} is not a whole number")
    return plan_compaction(tree, leaf, keep_recent_tokens=keep, context_window=window, first_kept=first_kept)


def compaction_overlay(plan: CompactionPlan, layout: GraphLayout) -> dict:
    """Drawn nodes a compaction would summarize, keep, and where it cuts."""
    summarized = {e.id for e in plan.entries_to_summarize()}
    kept = {s.id for s in plan.context.sources if s.id not in summarized and s is not plan.context.compaction}
    cut = plan.first_kept_entry_id
    return {
        "summarize": sorted({layout.dom_for(i) for i in summarized}),
        "kept": sorted({layout.dom_for(i) for i in kept}),
        "cut": layout.dom_for(cut) if cut else None,
        # The fold (its first entry, as the `expand` state names folds) that hides the cut, if any.
        "cutFold": next((s.key for s in layout.segments if cut and s.id == layout.member(cut)), None),
        "bands": [b for b in [preview_band(plan, layout)] if b],
    }


@dataclass
class Meter:
    tokens: int
    window: int | None
    over_threshold: bool  # SPEC §6: fewer than the reserve tokens left in the window
    count: TokenCount  # what of `tokens` is reported and what estimated (token_text)

    @property
    def percent(self) -> int | None:
        return round(100 * self.tokens / self.window) if self.window else None


def session_counts(tree: SessionTree) -> dict[str, int]:
    """The branches and compactions of a session: its branches are `tree.leaves()`, what the
    Branches tab lists (found once per tree; the drawn tree's own count of tips took the side
    lines Claude Code writes after a reply for branches of their own), its compactions counted
    from the drawn tree (chains, not entries: the stats bar is printed on every page)."""
    d = drawn_tree(tree)
    compactions = sum(1 for x in d.unfoldable if tree.by_id[x].type == COMPACTION)
    return {"branches": len(tree.leaves()), "compactions": compactions}


_meters: "weakref.WeakKeyDictionary[SessionTree, Meter]" = weakref.WeakKeyDictionary()


def context_meter(tree: SessionTree) -> Meter:
    """How full the context of the active leaf is (once per tree: every page of it shows it)."""
    meter = _meters.get(tree)
    if meter is None:
        count, model = leaf_tokens(tree, tree.active_leaf)
        window = context_window(*model)
        meter = _meters[tree] = Meter(count.context, window,
                                      bool(window) and count.context > window - fitted_budgets(window)[1], count)
    return meter


def awaits_reply(tree: SessionTree, entry_id: str) -> bool:
    """A user message with no answer below it (looking past settings such as a model change)."""
    if tree.by_id[entry_id].role != "user":
        return False
    stack = list(tree.conversation_children(entry_id))
    while stack:
        e = tree.by_id[stack.pop()]
        if e.type == MESSAGE or e.type not in (MODEL_CHANGE, THINKING_LEVEL_CHANGE):
            return False
        stack.extend(tree.conversation_children(e.id))
    return True
