"""Compaction and branch summaries planned (SPEC §4, §6): what to summarize, where to cut, and
whether a cut point can be honoured.

Producing the summary text is not done here: a caller (a model, the extractive summarizer, a
person) supplies it. This module decides what that text must cover; `check_first_kept` refuses a
cut point the tree cannot honour (the session runs it under its lock before it writes one).
Writing a plan is `summary_writes`', above the session.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .context import Context, build_context
from .entries import BRANCH_SUMMARY, COMPACTION, CUSTOM_MESSAGE, MESSAGE, Entry, tool_calls
from .errors import InvalidWrite
from .agents.tools import EDIT, READ, WRITE, tool_action
from .messages import entry_messages, estimate_message_tokens, summary_message_of
from .tokens import TokenCount, context_tokens, format_tokens
from .tree import SessionTree

DEFAULT_RESERVE_TOKENS = 16384
DEFAULT_KEEP_RECENT_TOKENS = 20000

_CUT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom"})
_LIST_TAGS = ("read-files", "modified-files")


def is_cut_point(entry: Entry) -> bool:
    """Where the kept part of a context may begin: never at a tool result, which needs its call."""
    if entry.type == MESSAGE:
        return entry.role in _CUT_ROLES
    return entry.type in (CUSTOM_MESSAGE, BRANCH_SUMMARY)


def _paths(files) -> list[str]:
    """The paths of a `readFiles`/`modifiedFiles` list (a lone string is not a list of paths)."""
    return [p for p in files if isinstance(p, str)] if isinstance(files, list) else []


@dataclass
class FileOps:
    read: set[str] = field(default_factory=set)
    modified: set[str] = field(default_factory=set)

    def add_details(self, details) -> None:
        if isinstance(details, dict):
            self.read.update(_paths(details.get("readFiles")))
            self.modified.update(_paths(details.get("modifiedFiles")))

    def add_entry(self, entry: Entry) -> None:
        for call in tool_calls(entry):
            action = tool_action(call)
            if action.kind == READ:
                self.read.update(action.paths)
            elif action.kind in (EDIT, WRITE):
                self.modified.update(action.paths)
        if entry.type == BRANCH_SUMMARY:
            self.add_details(entry.get("details"))

    def lists(self) -> tuple[list[str], list[str]]:
        """(read-only files, modified files): a file both read and changed counts as modified."""
        return sorted(self.read - self.modified), sorted(self.modified)


def strip_file_lists(summary: str) -> str:
    """The summary without its `<read-files>`/`<modified-files>` lists (and the blank lines
    before each), found by scanning: a lazy pattern would rescan the rest of the summary from
    every list left open, quadratic on a crafted one."""
    out, pos = [], 0
    open_tags = list(_LIST_TAGS)  # a tag with no closing after some opening has none after a later one
    while open_tags:
        starts = [(summary.find(f"<{tag}>\n", pos), tag) for tag in open_tags]
        found = [(i, tag) for i, tag in starts if i >= 0]
        if not found:
            break
        i, tag = min(found)
        end = summary.find(f"\n</{tag}>", i + len(tag) + 3)
        if end < 0:
            open_tags.remove(tag)
            continue
        start = i
        while start > pos and summary[start - 1] == "\n":
            start -= 1
        out.append(summary[pos:start])
        pos = end + len(tag) + 4
    out.append(summary[pos:])
    return "".join(out)


def with_file_lists(summary: str, read: list[str], modified: list[str]) -> str:
    """The summary followed by the files it touched, replacing any lists it already ends with."""
    text = strip_file_lists(summary).rstrip()
    for tag, files in (("read-files", read), ("modified-files", modified)):
        if files:
            text += f"\n\n<{tag}>\n" + "\n".join(files) + f"\n</{tag}>"
    return text


@dataclass
class CompactionPlan:
    leaf_id: str | None
    context: Context
    tokens_before: int
    context_window: int | None
    reserve_tokens: int
    keep_recent_tokens: int
    token_count: TokenCount | None = None  # tokens_before, with what of it is reported
    first_kept_entry_id: str | None = None
    summarize: list[Entry] = field(default_factory=list)  # whole turns before the cut
    turn_prefix: list[Entry] = field(default_factory=list)  # a split turn's early part
    tokens_kept: int = 0
    message_tokens: int = 0  # the estimated size of the context's messages (the summary left out)
    read_files: list[str] = field(default_factory=list)
    modified_files: list[str] = field(default_factory=list)
    reason: str | None = None  # why there is nothing to compact
    active_leaf: str | None = None  # the session's active leaf when the plan was made
    at_active_leaf: bool = False  # planned for the active branch (not an explicit other leaf)

    @property
    def keeps_spec_default(self) -> bool:
        return self.keep_recent_tokens == DEFAULT_KEEP_RECENT_TOKENS

    @property
    def split_turn(self) -> bool:
        return bool(self.turn_prefix)

    @property
    def can_compact(self) -> bool:
        return self.reason is None

    @property
    def should_compact(self) -> bool:
        """SPEC §6 trigger: the context no longer leaves `reserve_tokens` free in the window."""
        if not self.context_window:
            return False
        return self.tokens_before > self.context_window - self.reserve_tokens

    @property
    def previous_summary(self) -> str | None:
        c = self.context.compaction
        return c.get("summary") if c is not None else None

    def entries_to_summarize(self) -> list[Entry]:
        return self.summarize + self.turn_prefix

    def messages_of(self, entries: list[Entry]) -> list[dict]:
        """The context messages that `entries` contribute, in context order."""
        ids = {e.id for e in entries}
        return [m for m, s in zip(self.context.messages, self.context.sources) if s.id in ids]

    def messages_to_summarize(self) -> list[dict]:
        return self.messages_of(self.entries_to_summarize())

    def tokens_after(self, summary: str | None = None) -> int:
        """Estimated: the kept messages, the summary, and the overhead the provider counts beyond
        the messages (the same figure the inspector gives at the compaction once written)."""
        text = summary if summary is not None else (self.previous_summary or "")
        overhead = self.token_count.overhead if self.token_count else 0
        return self.tokens_kept + estimate_message_tokens(summary_message_of(text)) + overhead

    def as_dict(self) -> dict:
        return {
            "leafId": self.leaf_id,
            "canCompact": self.can_compact,
            "reason": self.reason,
            "shouldCompact": self.should_compact,
            "firstKeptEntryId": self.first_kept_entry_id,
            "summarizeEntryIds": [e.id for e in self.summarize],
            "turnPrefixEntryIds": [e.id for e in self.turn_prefix],
            "splitTurn": self.split_turn,
            "tokensBefore": self.tokens_before,
            "tokensKept": self.tokens_kept,
            "tokensAfterEstimate": self.tokens_after(),
            "contextWindow": self.context_window,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
            "previousCompactionId": self.context.compaction.id if self.context.compaction else None,
            "readFiles": self.read_files,
            "modifiedFiles": self.modified_files,
        }


def _context_entries(ctx: Context) -> tuple[list[Entry], dict[str, int]]:
    """The entries the context is made of (without the compaction's summary), oldest first,
    each with its estimated size in tokens."""
    entries: list[Entry] = []
    sizes: dict[str, int] = {}
    for msg, src in zip(ctx.messages, ctx.sources):
        if src is ctx.compaction:
            continue
        if src.id not in sizes:
            entries.append(src)
            sizes[src.id] = 0
        sizes[src.id] += estimate_message_tokens(msg)
    return entries, sizes


def context_sources(ctx: Context) -> list[Entry]:
    """The entries the context is made of (without the compaction's summary), oldest first:
    `_context_entries(ctx)`'s, without their sizes (no message is measured)."""
    seen: dict[str, Entry] = {}
    for src in ctx.sources:
        if src is not ctx.compaction and src.id not in seen:
            seen[src.id] = src
    return list(seen.values())


def _kept_cut(entries: list[Entry], first_kept: str) -> int | None:
    """The index in `entries` of `first_kept`, when it is a cut point there."""
    return next((i for i, e in enumerate(entries) if e.id == first_kept and is_cut_point(e)), None)


def _split_at(entries: list[Entry], cut: int) -> tuple[list[Entry], list[Entry]]:
    """(whole turns before the cut, the early part of the turn it splits) of a cut at `cut` > 0."""
    turn_start = _turn_start(entries, cut)
    if entries[cut].role != "user" and entries[turn_start].role == "user":
        return entries[:turn_start], entries[turn_start:cut]
    return entries[:cut], []


def summarized_at_cut(tree: SessionTree, leaf_id: str | None, first_kept: str) -> tuple[list[Entry] | None, Context]:
    """(the entries a compaction at `leaf_id` keeping from `first_kept` summarizes, the context
    there): what `plan_compaction(tree, leaf_id, first_kept=first_kept).entries_to_summarize()`
    gives, None where that plan cannot compact, without the plan's token counts and file lists.
    An audit asks this of every summary of every session a corpus build reads: the counts took
    7% of its time."""
    ctx = build_context(tree, leaf_id)
    entries = context_sources(ctx)
    cut = _kept_cut(entries, first_kept)
    if not cut:  # (None: not a cut point of this context; 0: nothing before it)
        return None, ctx
    summarize, turn_prefix = _split_at(entries, cut)
    return summarize + turn_prefix, ctx


def fitted_budgets(context_window: int | None) -> tuple[int, int]:
    """(keepRecentTokens, reserveTokens) by default for a model of this window. SPEC §6's
    defaults (20,000 kept, 16,384 reserved) suppose a window of 100k tokens or more; for a
    smaller one the reserve is at most a quarter of the window and what is kept at most half of
    the rest, so that a compaction of an 8,192-token model keeps and reserves what it can hold."""
    if not context_window:
        return DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS
    reserve = min(DEFAULT_RESERVE_TOKENS, context_window // 4)
    return min(DEFAULT_KEEP_RECENT_TOKENS, (context_window - reserve) // 2), reserve


def suggested_keep_recent_tokens(tree: SessionTree, leaf_id: str | None, context_window: int | None = None) -> int:
    """The keep budget a preview starts with: the default for the model's window when the
    branch is large enough for it to leave something to summarize, else the largest round budget
    (a share of the branch's estimated tokens) that still makes a cut, so every branch with a cut
    point can be previewed without hunting for a number."""
    entries, sizes = _context_entries(build_context(tree, leaf_id))
    total = sum(sizes.values())
    default = fitted_budgets(context_window)[0]
    budgets = [default] + [int(max(round(total * share, -2), 100)) for share in (0.4, 0.3, 0.2, 0.1, 0.05)]
    cuts = {keep: _cut_index(entries, sizes, keep) for keep in budgets if keep < total}
    # First a cut that summarizes whole turns, else one that splits a turn.
    for whole in (True, False):
        for keep, cut in cuts.items():
            if cut and (not whole or _turn_start(entries, cut) > 0):
                return keep
    return default


def _turn_start(entries: list[Entry], cut: int) -> int:
    """The index of the user message that starts the turn the cut falls in."""
    start = cut
    while start > 0 and entries[start].role != "user":
        start -= 1
    return start


def plan_compaction(
    tree: SessionTree,
    leaf_id: str | None,
    keep_recent_tokens: int | None = None,
    reserve_tokens: int | None = None,
    context_window: int | None = None,
    first_kept: str | None = None,
) -> CompactionPlan:
    """Where to cut the context at `leaf_id` and what the summary must then cover (SPEC §6).
    `first_kept` cuts there instead of where `keep_recent_tokens` falls (a summary made again
    for the same cut). A budget not given is the default fitted to the window (fitted_budgets)."""
    fitted_keep, fitted_reserve = fitted_budgets(context_window)
    keep_recent_tokens = fitted_keep if keep_recent_tokens is None else keep_recent_tokens
    reserve_tokens = fitted_reserve if reserve_tokens is None else reserve_tokens
    ctx = build_context(tree, leaf_id)
    count = context_tokens(ctx)
    plan = CompactionPlan(
        leaf_id, ctx, count.context, context_window, reserve_tokens, keep_recent_tokens, token_count=count,
        active_leaf=tree.active_leaf, at_active_leaf=leaf_id == tree.conversation_leaf(tree.active_leaf),
    )
    entries, sizes = _context_entries(ctx)
    plan.message_tokens = sum(sizes.values())
    if first_kept is not None:
        cut = _kept_cut(entries, first_kept)
        if cut is None:
            plan.reason = f"{first_kept!r} is not a cut point of the context at {leaf_id!r}"
            return plan
    else:
        cut = _cut_index(entries, sizes, keep_recent_tokens)
    if cut is None:
        total = sum(sizes.values())
        plan.reason = (
            f"nothing to compact: the messages, {format_tokens(total)} tokens (estimated), fit in the "
            f"{format_tokens(keep_recent_tokens)} to keep (keepRecentTokens); keep fewer to compact anyway"
        )
        return plan
    if cut == 0:
        plan.reason = "nothing to compact: the only cut point left is the start of the context"
        return plan
    plan.summarize, plan.turn_prefix = _split_at(entries, cut)
    plan.first_kept_entry_id = entries[cut].id
    plan.tokens_kept = sum(sizes[e.id] for e in entries[cut:])
    ops = FileOps()
    if ctx.compaction is not None:
        ops.add_details(ctx.compaction.get("details"))
    for e in plan.entries_to_summarize():
        ops.add_entry(e)
    plan.read_files, plan.modified_files = ops.lists()
    return plan


def _cut_index(entries: list[Entry], sizes: dict[str, int], keep_recent: int) -> int | None:
    """Walk back adding sizes until `keep_recent` is reached, then take the next cut point."""
    total = 0
    for i in range(len(entries) - 1, -1, -1):
        total += sizes[entries[i].id]
        if total >= keep_recent:
            for j in range(i, len(entries)):
                if is_cut_point(entries[j]):
                    return j
            return None
    return None


def check_first_kept(tree: SessionTree, parent_id: str | None, first_kept: str | None) -> None:
    """Refuse a compaction whose firstKeptEntryId the tree could not honour (SPEC §6)."""
    if not first_kept:
        raise InvalidWrite("firstKeptEntryId is missing")
    if first_kept not in tree.by_id:
        raise InvalidWrite(f"firstKeptEntryId {first_kept!r} names no entry of this session")
    if parent_id is None or not tree.is_ancestor(first_kept, parent_id):
        raise InvalidWrite(
            f"firstKeptEntryId {first_kept!r} is not on the path the compaction is written on"
        )
    if not is_cut_point(tree.by_id[first_kept]):
        kind = tree.by_id[first_kept].role or tree.by_id[first_kept].type
        raise InvalidWrite(f"firstKeptEntryId {first_kept!r} is a {kind}, not a valid cut point")


@dataclass
class BranchSummaryPlan:
    old_leaf: str | None
    new_leaf: str | None
    common_ancestor: str | None
    entries: list[Entry]
    read_files: list[str]
    modified_files: list[str]
    compaction: Entry | None = None  # where the walk stopped: its summary is carried forward

    def messages(self) -> list[dict]:
        return [m for e in self.entries for m in entry_messages(e)]

    @property
    def previous_summary(self) -> str | None:
        """The summary of the compaction the walk stopped at: what it covered is part of the
        branch being left, and would otherwise be in neither branch's context."""
        summary = self.compaction.get("summary") if self.compaction is not None else None
        return summary if isinstance(summary, str) and summary.strip() else None

    @property
    def has_content(self) -> bool:
        """Something to summarize: entries of the branch, or a compaction's summary to carry."""
        return bool(self.entries) or self.previous_summary is not None


def plan_branch_summary(tree: SessionTree, old_leaf: str | None, new_leaf: str | None) -> BranchSummaryPlan:
    """SPEC §4: the entries of the branch being left, back to the common ancestor or a compaction;
    a compaction met on the way is carried forward (its summary, its files)."""
    ancestor = tree.common_ancestor(old_leaf, new_leaf)
    entries: list[Entry] = []
    compaction = None
    node = old_leaf
    while node is not None and node != ancestor:
        entry = tree.by_id[node]
        if entry.type == COMPACTION:
            compaction = entry
            break
        entries.append(entry)
        node = tree.parent[node]
    entries.reverse()
    ops = FileOps()
    if compaction is not None:
        ops.add_details(compaction.get("details"))
    for e in entries:
        ops.add_entry(e)
    read, modified = ops.lists()
    return BranchSummaryPlan(old_leaf, new_leaf, ancestor, entries, read, modified, compaction)
