"""Branches side by side: what they share, where they part, and what each did after that.

A branch is the path from the root to one node (any node, not only a leaf). Branches are compared
from their deepest common ancestor on: each branch's remainder is cut into turns (a user message
and everything until the next one) and the turns are aligned by number, so row i holds turn i of
every branch. Nothing here writes to a session.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from dataclasses import dataclass, field

from .compaction import FileOps
from .context import build_context
from .entries import (
    BRANCH_SUMMARY,
    COMPACTION,
    MARKER_TYPES,
    MESSAGE,
    MODEL_CHANGE,
    Entry,
    as_key,
    content_text,
    parse_time,
    entry_text,
    tool_calls,
)
from .tokens import context_tokens, entry_cost  # entry_cost: summaries' calls count too
from .tree import SessionTree

_WORDS = re.compile(r"\s+|\w+|[^\w\s]")
MAX_DIFF_TOKENS = 20_000  # beyond this a word diff costs more than it tells


def is_user(entry: Entry) -> bool:
    return entry.type == MESSAGE and entry.role == "user"


def user_text(entry: Entry) -> str:
    return content_text(entry.message.get("content"))


def assistant_text(entry: Entry) -> str:
    return content_text(entry.message.get("content")) if entry.role == "assistant" else ""


def final_answer(entries: list[Entry]) -> Entry | None:
    """The last assistant message that says something (not only tool calls)."""
    for e in reversed(entries):
        if assistant_text(e).strip():
            return e
    return None


# -- common ancestor -------------------------------------------------------------------------------


def common_prefix(tree: SessionTree, ids: list[str]) -> list[Entry]:
    """The path from the root to the deepest common ancestor of all `ids` (empty: none shared)."""
    paths = [tree.path(i) for i in ids]
    n = 0
    for column in zip(*paths):
        if any(e.id != column[0].id for e in column):
            break
        n += 1
    return paths[0][:n] if paths else []


# -- turns -----------------------------------------------------------------------------------------


@dataclass
class Turn:
    """A user message and what followed it; `continued` when it begins without one, i.e. it
    carries on a turn begun before (in the shared part) or precedes the first user message."""

    number: int  # 1-based on the whole path; 0 before the first user message
    entries: list[Entry] = field(default_factory=list)

    @property
    def continued(self) -> bool:
        return not is_user(self.entries[0])

    @property
    def user(self) -> Entry | None:
        return None if self.continued else self.entries[0]

    @property
    def user_text(self) -> str:
        return user_text(self.user) if self.user else ""

    @property
    def answer(self) -> Entry | None:
        return final_answer(self.entries)

    @property
    def assistant_messages(self) -> int:
        return sum(1 for e in self.entries if e.role == "assistant")

    @property
    def tool_calls(self) -> Counter:
        return Counter(str(c.get("name", "?")) for e in self.entries for c in tool_calls(e))

    @property
    def tool_errors(self) -> int:
        return sum(1 for e in self.entries if e.role == "toolResult" and e.message.get("isError"))

    @property
    def cost(self) -> float:
        return sum(entry_cost(e) for e in self.entries)

    @property
    def notable(self) -> list[Entry]:
        """Entries a reader should not miss in a folded turn: compactions, summaries, model changes."""
        return [e for e in self.entries if e.type in (COMPACTION, BRANCH_SUMMARY, MODEL_CHANGE)]

    def signature(self) -> tuple:
        """What the turn says and does, without ids or times: equal signatures mean the same turn
        replayed, even on another branch."""
        return tuple(
            (e.type, e.role, entry_text(e), _calls_key(e))
            for e in self.entries
            if e.type not in MARKER_TYPES
        )


def _calls_key(entry: Entry) -> str:
    """Tool calls as comparable text (json, unlike orjson, takes any integer a file may hold)."""
    return json.dumps([[c.get("name"), c.get("arguments")] for c in tool_calls(entry)], sort_keys=True, default=str)


def split_turns(entries: list[Entry], before: int = 0) -> list[Turn]:
    """Cut `entries` at each user message; `before` is how many turns began earlier on the path."""
    turns: list[Turn] = []
    number = before
    for e in entries:
        if is_user(e):
            number += 1
            turns.append(Turn(number, [e]))
        elif turns:
            turns[-1].entries.append(e)
        else:
            turns.append(Turn(number, [e]))
    return turns


def align(turn_lists: list[list[Turn]]) -> list[list[Turn | None]]:
    """Rows of turns with the same number: first the continuations of the shared turn (if any
    branch has one), then turn after turn; a branch without that turn has None."""
    heads = [ts[0] if ts and ts[0].continued else None for ts in turn_lists]
    rests = [ts[1:] if ts and ts[0].continued else ts for ts in turn_lists]
    rows = [heads] if any(heads) else []
    for i in range(max((len(r) for r in rests), default=0)):
        rows.append([r[i] if i < len(r) else None for r in rests])
    return rows


# -- word diff -------------------------------------------------------------------------------------


def words(text: str) -> list[str]:
    """Words, punctuation and runs of whitespace: joined they give the text back exactly."""
    return _WORDS.findall(text)


def word_diff(a: str, b: str) -> list[tuple[str, str]]:
    """(op, text) pieces turning `a` into `b`, op one of "equal", "delete", "insert"."""
    ta, tb = words(a), words(b)
    if len(ta) + len(tb) > MAX_DIFF_TOKENS:
        return [("delete", a), ("insert", b)] if a != b else [("equal", a)]
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        if tag in ("equal", "delete", "replace") and i2 > i1:
            out.append(("equal" if tag == "equal" else "delete", "".join(ta[i1:i2])))
        if tag in ("insert", "replace") and j2 > j1:
            out.append(("insert", "".join(tb[j1:j2])))
    return out


# -- figures ---------------------------------------------------------------------------------------


@dataclass
class Figures:
    """What one branch amounts to, over its whole path from the root."""

    turns: int
    assistant_messages: int
    tool_calls: dict[str, int]
    tool_errors: int
    context_tokens: int
    cost: float
    wall_seconds: float | None  # first to last timestamp
    files_read: list[str]
    files_modified: list[str]
    compactions: list[str]  # entry ids
    labels: list[tuple[str, str]]  # (entry id, label)
    models: list[str]


def figures(tree: SessionTree, tip: str) -> Figures:
    path = tree.path(tip)
    turn = Turn(0, path)  # the whole path read as one long turn gives the sums
    ops = FileOps()
    models: list[str] = []
    for e in path:
        ops.add_entry(e)
        if e.type == COMPACTION:
            ops.add_details(e.get("details"))
        model = e.message.get("model") if e.role == "assistant" else None
        if isinstance(model, str) and model and model not in models:
            models.append(model)
    ctx = build_context(tree, tip)
    if not models and ctx.settings.model_id:  # no answer yet: the model the path is set to
        models = [ctx.settings.model_id]
    times = [t for t in (parse_time(e.timestamp) for e in path) if t]
    read, modified = ops.lists()
    return Figures(
        turns=sum(1 for e in path if is_user(e)),
        assistant_messages=turn.assistant_messages,
        tool_calls=dict(sorted(turn.tool_calls.items())),
        tool_errors=turn.tool_errors,
        context_tokens=context_tokens(ctx).context,
        cost=turn.cost,
        wall_seconds=(max(times) - min(times)).total_seconds() if times else None,
        files_read=read,
        files_modified=modified,
        compactions=[e.id for e in path if e.type == COMPACTION],
        labels=[(e.id, tree.labels[e.id]) for e in path if e.id in tree.labels],
        models=models,
    )


# -- the comparison --------------------------------------------------------------------------------


@dataclass
class Branch:
    tip: str
    path: list[Entry]
    turns: list[Turn]  # after the common ancestor
    figures: Figures
    summary: Entry | None  # an existing branch_summary of this branch

    @property
    def own(self) -> list[Entry]:
        """The entries after the common ancestor: what this branch did on its own."""
        return [e for t in self.turns for e in t.entries]

    @property
    def answer(self) -> Entry | None:
        return final_answer(self.path)


@dataclass
class Row:
    cells: list[Turn | None]
    differs: bool  # not the same turn on every branch
    user_diffs: list[list[tuple[str, str]] | None]  # per branch, against the row's first instruction

    @property
    def number(self) -> int:
        return next(c.number for c in self.cells if c)

    @property
    def continued(self) -> bool:
        return any(c and c.continued for c in self.cells)

    @property
    def reference(self) -> int | None:
        """The column whose instruction the others are diffed against: the first with one."""
        return next((i for i, c in enumerate(self.cells) if c and c.user), None)


@dataclass
class Comparison:
    shared: list[Entry]  # root .. deepest common ancestor
    shared_turns: list[Turn]
    shared_tokens: int
    branches: list[Branch]
    rows: list[Row]
    answer_diffs: list[list[tuple[str, str]] | None]  # per branch, final answer against the first

    @property
    def ancestor(self) -> str | None:
        return self.shared[-1].id if self.shared else None

    @property
    def divergence(self) -> int | None:
        """Index in `rows` of the first turn where the branches differ."""
        return next((i for i, r in enumerate(self.rows) if r.differs), None)


def existing_summary(tree: SessionTree, own: list[Entry], tip: str) -> Entry | None:
    """The latest branch_summary left from this branch: its `fromId` is the tip or on the branch
    after the common ancestor (deepest first)."""
    depth = {e.id: i for i, e in enumerate(own)}
    depth.setdefault(tip, len(own))
    found = [e for e in tree.entries if e.type == BRANCH_SUMMARY and as_key(e.get("fromId")) in depth]
    return max(found, key=lambda e: (depth[as_key(e.get("fromId"))], e.line), default=None)


def _diffs_against_first(texts: list[str | None]) -> list[list[tuple[str, str]] | None]:
    """Each text's word diff against the first present one; None where absent, first or equal."""
    ref = next((i for i, t in enumerate(texts) if t is not None), None)
    return [
        None if t is None or i == ref or t == texts[ref] else word_diff(texts[ref], t)
        for i, t in enumerate(texts)
    ]


def compare(tree: SessionTree, ids: list[str]) -> Comparison:
    """Compare the branches ending at `ids` (UnknownEntry for an id the session lacks)."""
    for i in ids:
        tree.entry(i)
    shared = common_prefix(tree, ids)
    shared_turns = split_turns(shared)
    before = sum(1 for e in shared if is_user(e))
    branches = []
    for tip in ids:
        path = tree.path(tip)
        own = path[len(shared):]
        summary = existing_summary(tree, own, tip)
        branches.append(Branch(tip, path, split_turns(own, before), figures(tree, tip), summary))
    rows = []
    for cells in align([b.turns for b in branches]):
        sigs = {c.signature() if c else None for c in cells}
        texts = [c.user_text if c and c.user else None for c in cells]
        rows.append(Row(cells, len(sigs) > 1, _diffs_against_first(texts)))
    answers = [assistant_text(b.answer) if b.answer else None for b in branches]
    return Comparison(
        shared=shared,
        shared_turns=shared_turns,
        shared_tokens=context_tokens(build_context(tree, shared[-1].id)).context if shared else 0,
        branches=branches,
        rows=rows,
        answer_diffs=_diffs_against_first(answers),
    )
