"""Branches side by side: what they share, where they part, how each one ended, what each did.

A branch is the path from the root to one node (any node, not only a leaf). Branches are compared
from their deepest common ancestor on: each branch's own part is cut into turns (a user message
and everything until the next one). The turns are aligned by their prompts (`align`: similar
prompts on one row, gaps where a branch inserted or skipped a turn), or by number on request.
Figures are given for each branch's own part (after the divergence) and for its whole path.
Nothing here writes to a session.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from .align import align_sequences
from .audit import lost_by_compactions
from .compaction import FileOps
from .context import build_context
from .entries import (
    BRANCH_SUMMARY,
    COMPACTION,
    MARKER_TYPES,
    MESSAGE,
    MODEL_CHANGE,
    THINKING_LEVEL_CHANGE,
    Entry,
    as_key,
    content_text,
    entry_text,
    parse_time,
    tool_calls,
)
from .messages import estimate_message_tokens
from .outcome import Outcome, assistant_text, final_answer, outcome  # (re-exported: the views import them here)
from .tokens import context_sent, context_tokens, entry_cost, usage_tokens  # entry_cost: summaries' calls count too
from .tree import SessionTree

_WORDS = re.compile(r"\s+|\w+|[^\w\s]")
MAX_DIFF_TOKENS = 20_000  # beyond this a word diff costs more than it tells
ALIGNMENTS = ("content", "number")


def is_user(entry: Entry) -> bool:
    return entry.type == MESSAGE and entry.role == "user"


def user_text(entry: Entry) -> str:
    return content_text(entry.message.get("content"))


def is_tool_error(entry: Entry) -> bool:
    return entry.role == "toolResult" and bool(entry.message.get("isError"))


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


# A pause longer than this between two entries of a path is not time worked: a branch added to
# a months-old session today would otherwise show the months ("6657h") as its wall time.
IDLE_GAP = 3600.0
LEADING_TYPES = MARKER_TYPES | {MODEL_CHANGE, THINKING_LEVEL_CHANGE}  # what may come before a turn's prompt


@dataclass
class Turn:
    """A user message and what followed it; `continued` when it begins without one, i.e. it
    carries on a turn begun before (in the shared part) or precedes the first user message."""

    number: int  # 1-based on the whole path; 0 before the first user message
    entries: list[Entry] = field(default_factory=list)

    @property
    def opening(self) -> Entry:
        """The turn's first entry that is not a marker (a model change, a thinking level) before it."""
        return next((e for e in self.entries if e.type not in LEADING_TYPES), self.entries[0])

    @property
    def continued(self) -> bool:
        return not is_user(self.opening)

    @property
    def user(self) -> Entry | None:
        return None if self.continued else self.opening

    @property
    def user_text(self) -> str:
        return user_text(self.user) if self.user else ""

    @property
    def answer(self) -> Entry | None:
        return final_answer(self.entries)

    @property
    def answer_text(self) -> str | None:
        return assistant_text(self.answer) if self.answer else None

    @property
    def assistant_messages(self) -> int:
        return sum(1 for e in self.entries if e.role == "assistant")

    @property
    def tool_calls(self) -> Counter:
        return Counter(str(c.get("name", "?")) for e in self.entries for c in tool_calls(e))

    @property
    def tool_errors(self) -> int:
        return sum(1 for e in self.entries if is_tool_error(e))

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
    """Cut `entries` at each user message; `before` is how many turns began earlier on the path.
    Markers before the first user message (a replay's model change) open the turn that follows
    them rather than make a turn of their own: a branch that differs only in its model then lines
    up with the one it replays, prompt for prompt."""
    turns: list[Turn] = []
    number = before
    leading: list[Entry] = []
    for e in entries:
        if is_user(e):
            number += 1
            turns.append(Turn(number, leading + [e]))
            leading = []
        elif turns:
            turns[-1].entries.append(e)
        elif e.type in LEADING_TYPES:
            leading.append(e)
        else:
            turns.append(Turn(number, leading + [e]))
            leading = []
    if leading:
        turns.append(Turn(number, leading))
    return turns


def _head_and_rest(turns: list[Turn]) -> tuple[Turn | None, list[Turn]]:
    """A branch's continuation of the shared turn (if it has one) and its own turns."""
    return (turns[0], turns[1:]) if turns and turns[0].continued else (None, turns)


def align_by_number(turn_lists: list[list[Turn]]) -> list[list[Turn | None]]:
    """Rows of turns with the same number: first the continuations of the shared turn (if any
    branch has one), then turn after turn; a branch without that turn has None."""
    heads, rests = zip(*(_head_and_rest(ts) for ts in turn_lists)) if turn_lists else ((), ())
    rows = [list(heads)] if any(heads) else []
    for i in range(max((len(r) for r in rests), default=0)):
        rows.append([r[i] if i < len(r) else None for r in rests])
    return rows


def align_by_content(turn_lists: list[list[Turn]]) -> list[list[Turn | None]]:
    """Rows of turns whose prompts match (see `align`): the continuations of the shared turn
    first, then the aligned turns; a branch that skipped a turn, or has none there, has None."""
    heads, rests = zip(*(_head_and_rest(ts) for ts in turn_lists)) if turn_lists else ((), ())
    rows = [list(heads)] if any(heads) else []
    for indexes in align_sequences([[t.user_text for t in r] for r in rests]):
        rows.append([rests[k][i] if i is not None else None for k, i in enumerate(indexes)])
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


def diffs_against(texts: list[str | None], base: int) -> list[list[tuple[str, str]] | None]:
    """Each text's word diff against the baseline's; None where absent, the baseline or equal."""
    ref = texts[base] if 0 <= base < len(texts) else None
    return [
        None if t is None or ref is None or i == base or t == ref else word_diff(ref, t)
        for i, t in enumerate(texts)
    ]


# -- figures ---------------------------------------------------------------------------------------


@dataclass
class Figures:
    """What a run of entries amounts to: a branch's own part, or its whole path from the root."""

    entries: int
    turns: int
    assistant_messages: int
    tool_calls: dict[str, int]
    tool_errors: int
    cost: float
    wall_seconds: float | None  # the time worked: from entry to entry, pauses over IDLE_GAP left out
    files_read: list[str]
    files_modified: list[str]
    compactions: list[str]  # entry ids
    labels: list[tuple[str, str]]  # (entry id, label)
    models: list[str]

    @property
    def tool_call_count(self) -> int:
        return sum(self.tool_calls.values())

    @property
    def files(self) -> set[str]:
        return set(self.files_read) | set(self.files_modified)


def figures_of(tree: SessionTree, entries: list[Entry]) -> Figures:
    ops = FileOps()
    models: list[str] = []
    calls: Counter = Counter()
    for e in entries:
        ops.add_entry(e)
        if e.type == COMPACTION:
            ops.add_details(e.get("details"))
        for c in tool_calls(e):
            calls[str(c.get("name", "?"))] += 1
        model = e.message.get("model") if e.role == "assistant" else None
        if isinstance(model, str) and model and model not in models:
            models.append(model)
    times = [t for t in (parse_time(e.timestamp) for e in entries) if t]
    worked = sum(gap for gap in ((b - a).total_seconds() for a, b in zip(times, times[1:])) if 0 < gap <= IDLE_GAP)
    read, modified = ops.lists()
    return Figures(
        entries=len(entries),
        turns=sum(1 for e in entries if is_user(e)),
        assistant_messages=sum(1 for e in entries if e.role == "assistant"),
        tool_calls=dict(sorted(calls.items())),
        tool_errors=sum(1 for e in entries if is_tool_error(e)),
        cost=sum(entry_cost(e) for e in entries),
        wall_seconds=round(worked, 6) if times else None,
        files_read=read,
        files_modified=modified,
        compactions=[e.id for e in entries if e.type == COMPACTION],
        labels=[(e.id, tree.labels[e.id]) for e in entries if e.id in tree.labels],
        models=models,
    )


def figures(tree: SessionTree, tip: str) -> Figures:
    """The figures of the whole path from the root to `tip`."""
    return figures_of(tree, tree.path(tip))


# -- the comparison --------------------------------------------------------------------------------


@dataclass
class Branch:
    tip: str
    path: list[Entry]
    own: list[Entry]  # after the common ancestor: what this branch did on its own
    turns: list[Turn]
    whole: Figures
    mine: Figures  # of `own`: the figures after the divergence
    context_tokens: int  # the context at the tip
    context_growth: int  # the context at the tip minus the context at the common ancestor
    context_sent: dict | None  # the context its first reply was sent with (tokens.context_sent); None: no reply
    outcome: Outcome
    summary: Entry | None  # an existing branch_summary of this branch
    only_files: list[str] = field(default_factory=list)  # touched on its own part, by no other branch
    unique_labels: list[str] = field(default_factory=list)  # on entries no other compared branch has
    inherited_labels: list[str] = field(default_factory=list)  # on entries it shares with another branch
    lost_facts: dict[str, int] = field(default_factory=dict)  # compaction id on the path -> facts it lost

    @property
    def answer(self) -> Entry | None:
        return self.outcome.answer


@dataclass
class Row:
    cells: list[Turn | None]
    differs: bool  # not the same turn on every branch
    prompts_differ: bool  # the prompts differ, or a branch has no turn here
    user_diffs: list[list[tuple[str, str]] | None]  # per branch, against the baseline's prompt
    answer_diffs: list[list[tuple[str, str]] | None]  # per branch, against the baseline's answer

    @property
    def number(self) -> int:
        return next(c.number for c in self.cells if c)

    @property
    def numbers(self) -> list[int]:
        """The distinct turn numbers on this row (aligned by content, they may differ)."""
        return sorted({c.number for c in self.cells if c})

    @property
    def continued(self) -> bool:
        return any(c and c.continued for c in self.cells)


@dataclass
class Comparison:
    shared: list[Entry]  # root .. deepest common ancestor
    shared_turns: list[Turn]
    shared_tokens: int
    branches: list[Branch]
    rows: list[Row]
    baseline: int  # index of the branch the word diffs are made against
    alignment: str  # "content" or "number"
    answer_diffs: list[list[tuple[str, str]] | None]  # per branch, final answer against the baseline's

    @property
    def ancestor(self) -> str | None:
        return self.shared[-1].id if self.shared else None

    @property
    def divergence(self) -> int | None:
        """Index in `rows` of the first row where the branches differ."""
        return next((i for i, r in enumerate(self.rows) if r.differs), None)

    @property
    def divergence_kind(self) -> str | None:
        """What differs first: "prompt" (another request, or a turn one branch lacks) or "answer"."""
        i = self.divergence
        return None if i is None else "prompt" if self.rows[i].prompts_differ else "answer"


def existing_summary(tree: SessionTree, own: list[Entry], tip: str, found: list[Entry] | None = None) -> Entry | None:
    """The latest branch_summary left from this branch: its `fromId` is the tip or on the branch
    after the common ancestor (deepest first). `found`: the session's branch summaries, when the
    caller has them already."""
    depth = {e.id: i for i, e in enumerate(own)}
    depth.setdefault(tip, len(own))
    if found is None:
        found = [e for e in tree.entries if e.type == BRANCH_SUMMARY]
    mine = [e for e in found if as_key(e.get("fromId")) in depth]
    return max(mine, key=lambda e: (depth[as_key(e.get("fromId"))], e.line), default=None)


def _row(cells: list[Turn | None], base: int) -> Row:
    sigs = {c.signature() if c else None for c in cells}
    prompts = [c.user_text if c and c.user else None for c in cells]
    continued = [c is not None and c.continued for c in cells]
    prompts_differ = any(c is None for c in cells) or len({(p, k) for p, k in zip(prompts, continued)}) > 1
    answers = [c.answer_text if c else None for c in cells]
    return Row(cells, len(sigs) > 1, prompts_differ, diffs_against(prompts, base), diffs_against(answers, base))


def _mark_what_is_only_theirs(tree: SessionTree, branches: list[Branch]) -> None:
    """Files and labels that belong to one branch alone: a file no other branch touched after the
    divergence, a label on an entry no other compared path goes through (a label on history that
    two of three branches share belongs to neither)."""
    on_paths = Counter(e.id for b in branches for e in b.own)
    for b in branches:
        others = set().union(*(o.mine.files for o in branches if o is not b))
        b.only_files = sorted(b.mine.files - others)
        b.unique_labels = [tree.labels[e.id] for e in b.own if on_paths[e.id] == 1 and e.id in tree.labels]
        b.inherited_labels = [
            tree.labels[e.id] for e in b.path
            if e.id in tree.labels and not (e.id in on_paths and on_paths[e.id] == 1)
        ]


def compare(tree: SessionTree, ids: list[str], baseline: int = 0, alignment: str = "content") -> Comparison:
    """Compare the branches ending at `ids` (UnknownEntry for an id the session lacks). Word
    diffs are made against branch `baseline` (an index into `ids`); `alignment` is one of
    ALIGNMENTS."""
    for i in ids:
        tree.entry(i)
    if alignment not in ALIGNMENTS:
        raise ValueError(f"alignment {alignment!r}: use one of {', '.join(ALIGNMENTS)}")
    baseline = baseline if 0 <= baseline < len(ids) else 0
    shared = common_prefix(tree, ids)
    shared_tokens = context_tokens(build_context(tree, shared[-1].id)).context if shared else 0
    before = sum(1 for e in shared if is_user(e))
    summaries = [e for e in tree.entries if e.type == BRANCH_SUMMARY]
    branches = []
    lost: dict[str, int] = {}  # facts lost by each compaction met, audited once (core/audit.py)
    for tip in ids:
        path = tree.path(tip)
        own = path[len(shared):]
        tokens = context_tokens(build_context(tree, tip)).context
        sent, basis = _first_sent(tree, own, shared_tokens)
        branches.append(Branch(
            tip=tip, path=path, own=own, turns=split_turns(own, before),
            whole=figures_of(tree, path), mine=figures_of(tree, own),
            context_tokens=tokens, context_growth=tokens - basis, context_sent=sent,
            outcome=outcome(path), summary=existing_summary(tree, own, tip, summaries),
            lost_facts=lost_by_compactions(tree, path, lost),
        ))
    _mark_what_is_only_theirs(tree, branches)
    aligner = align_by_content if alignment == "content" else align_by_number
    rows = [_row(cells, baseline) for cells in aligner([b.turns for b in branches])]
    return Comparison(
        shared=shared,
        shared_turns=split_turns(shared),
        shared_tokens=shared_tokens,
        branches=branches,
        rows=rows,
        baseline=baseline,
        alignment=alignment,
        answer_diffs=diffs_against([b.outcome.answer_text for b in branches], baseline),
    )


def _first_sent(tree: SessionTree, own: list[Entry], shared_tokens: int) -> tuple[dict | None, int]:
    """(what the branch's first reply was sent with, the context at the common ancestor to grow
    from). Where the server counted that reply's prompt, the ancestor's context is read off that
    count (less the branch's own messages before the reply): the tip's count is the server's too,
    and an estimate against a server's count gave growth that was not there (-3.9k after an Ask
    whose server counted 3,016 tokens where this app estimated 7.0k)."""
    first = next((e for e in own if e.type == MESSAGE and e.role == "assistant"), None)
    if first is None:
        return None, shared_tokens
    usage = first.message.get("usage")
    if not isinstance(usage, dict) or "input" not in usage:  # no usage at all: estimated here
        parent = tree.parent.get(first.id)
        return {"sent_tokens": context_tokens(build_context(tree, parent)).context if parent else 0,
                "sent_estimated": True}, shared_tokens
    sent = context_sent(usage)  # (the client's estimate where the server sent no usage, said so)
    if sent["sent_estimated"] or usage_tokens(first) is None or not sent["sent_tokens"]:
        return sent, shared_tokens
    before = sum(estimate_message_tokens(e.message) for e in own[:own.index(first)] if e.type == MESSAGE)
    return sent, sent["sent_tokens"] - before


# -- rows of figures -------------------------------------------------------------------------------


@dataclass(frozen=True)
class FigureRow:
    """One row of the figures matrix: how to read it off a branch, after the divergence and
    over the whole path (None: the figure has no whole-path counterpart). `kind` tells a
    renderer how to print a value: count, cost, tokens, delta, seconds, names, calls, files, ids."""

    key: str
    title: str
    kind: str
    mine: Callable[[Branch], Any]
    whole: Callable[[Branch], Any] | None = None
    whole_kind: str | None = None  # when the whole-path value reads differently (default: `kind`)


# The rows the page, the export and the CLI print, in order. Another figure is one more
# FigureRow here (its `kind` must be one the renderers know).
FIGURE_ROWS: list[FigureRow] = [
    FigureRow("turns", "Turns", "count", lambda b: b.mine.turns, lambda b: b.whole.turns),
    FigureRow("context", "Context tokens", "delta", lambda b: b.context_growth, lambda b: b.context_tokens, "tokens"),
    FigureRow("context_sent", "Context sent (first reply)", "sent", lambda b: b.context_sent),
    FigureRow("cost", "Cost", "cost", lambda b: b.mine.cost, lambda b: b.whole.cost),
    FigureRow("wall", "Wall time", "seconds", lambda b: b.mine.wall_seconds, lambda b: b.whole.wall_seconds),
    FigureRow("tool_calls", "Tool calls", "calls", lambda b: b.mine.tool_calls, lambda b: b.whole.tool_calls),
    FigureRow("tool_errors", "Tool errors", "count", lambda b: b.mine.tool_errors, lambda b: b.whole.tool_errors),
    FigureRow("files_read", "Files read", "files", lambda b: b.mine.files_read, lambda b: b.whole.files_read),
    FigureRow("files_modified", "Files modified", "files",
              lambda b: b.mine.files_modified, lambda b: b.whole.files_modified),
    FigureRow("only_files", "Files only this branch touched", "files", lambda b: b.only_files),
    FigureRow("models", "Models", "names", lambda b: b.mine.models, lambda b: b.whole.models),
    FigureRow("compactions", "Compactions", "ids", lambda b: b.mine.compactions, lambda b: b.whole.compactions),
    FigureRow("lost_facts", "Facts lost by compactions", "count",
              lambda b: sum(b.lost_facts[c] for c in b.mine.compactions), lambda b: sum(b.lost_facts.values())),
    FigureRow("labels", "Labels on its own part", "names", lambda b: b.unique_labels),
    FigureRow("inherited_labels", "Labels from the shared part", "names", lambda b: b.inherited_labels),
]


def comparison_data(cmp: Comparison) -> dict:
    """The comparison as plain data (for `session-tree compare --json`): outcomes, figures by
    FIGURE_ROWS, and the aligned rows as entry ids."""
    def cell(turn: Turn | None):
        if turn is None:
            return None
        return {"turn": turn.number, "start": turn.entries[0].id, "prompt": turn.user_text if turn.user else None,
                "answer": turn.answer.id if turn.answer else None}

    return {
        "ancestor": cmp.ancestor,
        "shared_entries": len(cmp.shared),
        "alignment": cmp.alignment,
        "divergence": {"row": cmp.divergence, "kind": cmp.divergence_kind},
        "branches": [
            {
                "tip": b.tip,
                "status": b.outcome.status,
                "status_detail": b.outcome.detail,
                "final_answer": {"id": b.answer.id, "text": b.outcome.answer_text} if b.answer else None,
                "figures": {
                    r.key: {"after_divergence": r.mine(b), **({"whole_path": r.whole(b)} if r.whole else {})}
                    for r in FIGURE_ROWS
                },
            }
            for b in cmp.branches
        ],
        "rows": [
            {"differs": r.differs, "cells": [cell(c) for c in r.cells]} for r in cmp.rows
        ],
    }
