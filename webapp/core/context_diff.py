"""What changed in the model's view: around a compaction, and between any two contexts.

Both answers compare two `Context`s message by message. A message is known by the entry it came
from and its place among that entry's messages: two contexts of one tree that hold the same key
hold the same message, whatever branch they are on, so the common part of two branches lines up
without comparing text. Only a compaction's own messages differ under one key (its summary is
written per compaction), and their entry ids differ anyway.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from .align import prompt_words, similarity
from .compare import word_diff
from .context import Context, build_context
from .entries import COMPACTION, Entry
from .errors import SessionError
from .tokens import TokenCount, context_tokens
from .tree import SessionTree
from .system_prompt import replay

PAIR_SIMILARITY = 0.3  # two differing messages in the same place are one changed message above this


@dataclass(frozen=True)
class Item:
    """One message of a context with where it came from."""

    index: int  # in `Context.messages`
    message: dict
    entry: Entry
    key: tuple[str, int]  # (entry id, its place among that entry's messages)

    @property
    def text(self) -> str:
        return message_text(self.message)


def message_text(message: dict) -> str:
    """A message's words as compared and diffed: its text, tool calls written out."""
    content = message.get("content")
    if isinstance(content, list):
        text = "\n".join(str(p.get("text", "[image]")) for p in content if isinstance(p, dict))
    else:
        text = content or ""
    calls = [f"→ {c['function']['name']}({c['function']['arguments']})" for c in message.get("tool_calls") or ()]
    return "\n".join([text, *calls]) if calls and text else "\n".join(calls) or text


def items_of(ctx: Context) -> list[Item]:
    """The context's messages, each keyed by (entry id, its place among that entry's messages)."""
    out: list[Item] = []
    first: dict[str, int] = {}
    for i, (m, e) in enumerate(zip(ctx.messages, ctx.sources)):
        start = first.setdefault(m["entryId"], i)
        out.append(Item(i, m, e, (m["entryId"], i - start)))
    return out


@dataclass
class Side:
    """One context being compared: where it is taken and how large it is."""

    node_id: str
    context: Context
    tokens: TokenCount

    @property
    def settings(self):
        return self.context.settings


def side_at(tree: SessionTree, node_id: str) -> Side:
    ctx = build_context(tree, node_id)
    return Side(node_id, ctx, context_tokens(ctx))


# -- before and after a compaction ------------------------------------------------------------------


@dataclass
class TurnGroup:
    """Messages of one turn (a user message and what answered it) that left the context."""

    items: list[Item]

    @property
    def title(self) -> str:
        first = self.items[0]
        return message_text(first.message) if first.message.get("role") == "user" else ""

    @property
    def entry_ids(self) -> list[str]:
        return list(dict.fromkeys(i.entry.id for i in self.items))


@dataclass
class BeforeAfter:
    compaction: Entry
    before: Side  # at the last entry before the compaction (its parent)
    after: Side  # at the compaction itself: its summary and what it kept
    left: list[TurnGroup]  # what the model saw before and no longer sees, by turn
    summary: list[Item]  # what stands in for them
    stayed: list[tuple[Item, Item]]  # the same message in both (before, after)
    returned: list[Item] = field(default_factory=list)  # kept again although an earlier compaction dropped it

    @property
    def left_items(self) -> list[Item]:
        return [i for g in self.left for i in g.items]

    @property
    def left_entries(self) -> list[str]:
        """The entries whose messages left: the count every view of this compaction gives."""
        return list(dict.fromkeys(i.entry.id for i in self.left_items))


def _by_turn(items: list[Item]) -> list[TurnGroup]:
    groups: list[TurnGroup] = []
    for item in items:
        if not groups or (item.message.get("role") == "user" and item.entry.role == "user"):
            groups.append(TurnGroup([]))
        groups[-1].items.append(item)
    return groups


def before_after(tree: SessionTree, compaction_id: str) -> BeforeAfter:
    """The context at a compaction's parent beside the one at the compaction. SessionError when
    the id (or a unique start or end of it) names no compaction, or one with nothing before it."""
    entry = tree.find(compaction_id)
    if entry.type != COMPACTION:
        raise SessionError(f"{compaction_id!r} is not a compaction in this session")
    parent = tree.parent.get(entry.id)
    if parent is None:
        raise SessionError(f"compaction {entry.id} has no entry before it: nothing was compacted")
    before, after = side_at(tree, parent), side_at(tree, entry.id)
    b_items, a_items = items_of(before.context), items_of(after.context)
    after_keys = {i.key: i for i in a_items}
    before_keys = {i.key for i in b_items}
    left = [i for i in b_items if i.key not in after_keys]
    stayed = [(i, after_keys[i.key]) for i in b_items if i.key in after_keys]
    summary = [i for i in a_items if i.entry.id == entry.id]
    returned = [i for i in a_items if i.entry.id != entry.id and i.key not in before_keys]
    return BeforeAfter(entry, before, after, _by_turn(left), summary, stayed, returned)


def replaced_entries(tree: SessionTree, compaction_id: str) -> list[str]:
    """The entries a compaction replaced: those whose messages the model saw just before it and
    no longer sees after it (a previous compaction's summary counts as one). The one count of
    "entries replaced" every view gives: inspector, Lost tab, node panel, preview, before/after."""
    return before_after(tree, compaction_id).left_entries


# -- any two contexts ----------------------------------------------------------------------------


@dataclass
class Row:
    """One line of a diff: a message in both, only in A, only in B, or changed (a word diff)."""

    kind: str  # "both" | "only-a" | "only-b" | "changed"
    a: Item | None
    b: Item | None
    diff: list[tuple[str, str]] | None = None


@dataclass
class SettingChange:
    name: str
    a: str | None
    b: str | None


@dataclass
class ContextDiff:
    a: Side
    b: Side
    rows: list[Row]
    settings: list[SettingChange]  # only what differs

    def count(self, kind: str) -> int:
        return sum(1 for r in self.rows if r.kind == kind)

    @property
    def shared_until(self) -> str | None:
        """The last entry both paths share (their common ancestor)."""
        b_ids = {e.id for e in self.b.context.path}
        shared = [e.id for e in self.a.context.path if e.id in b_ids]
        return shared[-1] if shared else None

    def as_dict(self) -> dict:
        def side(s: Side) -> dict:
            return {"nodeId": s.node_id, "messages": len(s.context.messages),
                    "tokens": {"context": s.tokens.context, "estimated": s.tokens.estimated},
                    "compactionId": s.context.compaction.id if s.context.compaction else None}

        def msg(i: Item | None) -> dict | None:
            return None if i is None else {"index": i.index, "entryId": i.entry.id,
                                           "role": i.message.get("role"), "text": i.text}

        return {
            "a": side(self.a), "b": side(self.b), "sharedUntil": self.shared_until,
            "counts": {k: self.count(k) for k in ("both", "only-a", "only-b", "changed")},
            "settings": [{"name": c.name, "a": c.a, "b": c.b} for c in self.settings],
            "rows": [{"kind": r.kind, "a": msg(r.a), "b": msg(r.b),
                      "diff": [list(op) for op in r.diff] if r.diff else None} for r in self.rows],
        }


def _system_text(ctx: Context) -> str | None:
    """The system prompt and tools the context's system messages leave in force (pi 1.6); None
    when it has none."""
    state = replay(ctx.messages, ctx.sources)
    if not state.seen:
        return None
    tools = ", ".join(state.tools)
    return f"{state.prompt}\n\ntools: {tools or '(none)'}"


def _setting_changes(a: Context, b: Context) -> list[SettingChange]:
    pairs = [
        ("model", a.settings.model_name, b.settings.model_name),
        ("thinking level", a.settings.thinking_level, b.settings.thinking_level),
        ("tools", ", ".join(a.settings.active_tools) if a.settings.active_tools is not None else None,
         ", ".join(b.settings.active_tools) if b.settings.active_tools is not None else None),
        ("system prompt", _system_text(a), _system_text(b)),
    ]
    return [SettingChange(n, x, y) for n, x, y in pairs if x != y]


def _pair_up(a: list[Item], b: list[Item]) -> list[Row]:
    """A stretch where the two contexts differ: a message of A and one of B in the same place,
    of one role and alike enough, are one changed message; between such pairs, what is only in A
    comes first, then what is only in B."""
    rows: list[Row] = []
    only_a: list[Row] = []
    only_b: list[Row] = []

    def flush() -> None:
        rows.extend(only_a + only_b)
        only_a.clear()
        only_b.clear()

    for k in range(max(len(a), len(b))):
        x = a[k] if k < len(a) else None
        y = b[k] if k < len(b) else None
        if x is not None and y is not None and x.message.get("role") == y.message.get("role") \
                and similarity(prompt_words(x.text), prompt_words(y.text)) >= PAIR_SIMILARITY:
            flush()
            rows.append(Row("changed", x, y, word_diff(x.text, y.text)))
            continue
        if x is not None:
            only_a.append(Row("only-a", x, None))
        if y is not None:
            only_b.append(Row("only-b", None, y))
    flush()
    return rows


def diff_contexts(tree: SessionTree, a_id: str, b_id: str) -> ContextDiff:
    """The contexts at two nodes (full ids, or unique starts or ends of them), aligned on the
    messages they share. UnknownEntry (a SessionError) for an id that names no entry."""
    a, b = side_at(tree, tree.find(a_id).id), side_at(tree, tree.find(b_id).id)
    ai, bi = items_of(a.context), items_of(b.context)
    matcher = difflib.SequenceMatcher(None, [i.key for i in ai], [i.key for i in bi], autojunk=False)
    rows: list[Row] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows.extend(Row("both", x, y) for x, y in zip(ai[i1:i2], bi[j1:j2]))
        else:
            rows.extend(_pair_up(ai[i1:i2], bi[j1:j2]))
    return ContextDiff(a, b, rows, _setting_changes(a.context, b.context))
