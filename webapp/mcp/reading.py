"""The MCP tools' answers about one session, as text a model reads: the session at a glance, a
branch read from its root, the context at an entry, two branches compared.

Every answer is bounded (`bounded`): a branch of 100,000 entries is not a 50 MB answer but its
first blocks up to MAX_ANSWER characters, with a note that says how many were left out and how
to ask for the next ones. An entry id may be given short (a unique prefix), as everywhere."""

from __future__ import annotations

from collections.abc import Iterable

import orjson

from ..core.compare import FIGURE_ROWS, compare
from ..core.context import build_context
from ..core.context_diff import diff_contexts
from ..core.context_text import context_blocks, context_head, diff_lines, request_text
from ..core.entries import MESSAGE, Entry, entry_text, short_id, tool_calls
from ..core.entry_types import content_blocks
from ..core.session import Session
from ..core.branch_names import branch_name
from ..core.verdicts import verdicts
from ..web.compare import figure_text
from .sources import Sources

MAX_ANSWER = 50_000  # characters of one answer (about 12k tokens): a model's context is the budget
MAX_BLOCK = 8_000  # characters of one entry or message within it
MAX_ARGUMENTS = 1_000  # characters of one tool call's arguments


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit:,} more characters]"


def bounded(head: Iterable[str], blocks: Iterable[str], start: int, total: int, what: str, again: str) -> str:
    """`head`, then `blocks` from number `start` on, each cut at MAX_BLOCK, until MAX_ANSWER
    characters; a last line says what was left out and how to read on (`again` with start=N)."""
    out = list(head)
    size = sum(len(line) + 1 for line in out)
    shown = 0
    for i, block in enumerate(blocks):
        if i < start:
            continue
        block = cut(block, MAX_BLOCK)
        if size + len(block) > MAX_ANSWER and shown:
            out.append(f"[cut: {what} {start + 1:,}–{i:,} of {total:,} shown; to read on, call {again} "
                       f"with start={i}]")
            break
        out.append(block)
        size += len(block) + 1
        shown += 1
    else:
        if start and start >= total:
            out.append(f"[nothing from start={start}: there are {total:,} {what}]")
    return "\n".join(out)


def opened(sources: Sources, name: str) -> Session:
    """The session named by its path under the root (as `list_sessions` gives it)."""
    return sources.store.session(name)


def _leaf(session: Session, leaf: str | None) -> str | None:
    tree = session.tree
    return tree.active_leaf if not leaf else tree.find(leaf).id


def session_text(sources: Sources, name: str) -> str:
    """A session at a glance: header, counts, its branches (tip and name), labels, verdicts, problems."""
    session = opened(sources, name)
    tree = session.tree
    header = tree.header or {}
    leaves = tree.leaves()
    given = verdicts(session)
    lines = [
        f"session {name}",
        f"id {header.get('id', '-')}  format {tree.format}  cwd {header.get('cwd', '-')}  created {header.get('timestamp', '-')}",
        f"name {tree.name or '-'}",
        "entries " + (", ".join(f"{k} {v}" for k, v in sorted(tree.counts_by_type().items())) or "none"),
        f"active leaf {tree.active_leaf or '(empty conversation)'}",
        f"read-only: {session.read_only_reason}" if session.read_only_reason else "writable (pi v3)",
        f"{len(leaves)} branches (tip id, name):",
    ]
    for leaf in leaves[:200]:
        mark = " (active)" if leaf == tree.conversation_leaf(tree.active_leaf) else ""
        said = "; ".join(f"{v.verdict} by {v.by}" for v in given.get(leaf, {}).values())
        lines.append(f"  {leaf}  {branch_name(tree, leaf)}{mark}"
                     + (f"  [verdict: {said}]" if said else ""))
    if len(leaves) > 200:
        lines.append(f"  … and {len(leaves) - 200:,} more")
    for target, label in list(tree.labels.items())[:200]:
        lines.append(f"label {target}: {label}")
    problems = tree.all_problems()
    lines.append(f"problems {len(problems)}")
    lines += [f"  {p.where}: {p.kind}: {p.message}" for p in problems[:50]]
    return cut("\n".join(lines), MAX_ANSWER)


def _block_text(b: dict) -> str:
    kind = b.get("type")
    if kind == "text":
        return b.get("text", "")
    if kind == "thinking":
        return "(thinking) " + str(b.get("thinking", ""))
    if kind == "toolCall":
        return f"→ {b.get('name')}({cut(orjson.dumps(b.get('arguments')).decode(), MAX_ARGUMENTS)}) [call {b.get('id')}]"
    return f"({kind})"


def entry_block(entry: Entry) -> str:
    """An entry as a model reads it: its id and kind, then all it says (tool calls with their
    arguments, thinking marked)."""
    kind = entry.role if entry.type == MESSAGE else entry.type
    msg = entry.message if entry.type == MESSAGE else {}
    extra = ""
    if entry.role == "toolResult":
        extra = f" of {msg.get('toolName', '?')} [call {msg.get('toolCallId', '?')}]" + (
            " (error)" if msg.get("isError") else "")
    elif entry.role == "assistant" and msg.get("model"):
        extra = f" ({msg.get('model')})"
    if entry.type == MESSAGE and entry.role not in ("bashExecution", "system"):
        text = "\n".join(filter(None, map(_block_text, content_blocks(msg.get("content")))))
        if not text and msg.get("errorMessage"):
            text = f"(error) {msg['errorMessage']}"
    elif entry.role == "bashExecution":
        text = f"$ {msg.get('command', '')}\n{msg.get('output', '')}"
    else:
        text = entry_text(entry)
    return f"[{entry.id}] {kind}{extra}:" + (f"\n{text}" if text else "")


def branch_text(sources: Sources, name: str, leaf: str | None = None, start: int = 0) -> str:
    """The path from the root to `leaf` (the active leaf when none), entry by entry from `start`."""
    session = opened(sources, name)
    tree = session.tree
    leaf_id = _leaf(session, leaf)
    path = tree.path(leaf_id)
    head = [f"branch of {name} to {leaf_id or '(empty conversation)'}: {len(path):,} entries"
            + (f" ({branch_name(tree, leaf_id)})" if leaf_id else "")]
    return bounded(head, map(entry_block, path), start, len(path), "entries", "read_branch")


def context_text(sources: Sources, name: str, leaf: str | None = None, request: bool = False, start: int = 0) -> str:
    """What the model sees at `leaf` (SPEC §5, as `session-tree context` prints it), or with
    `request` the request it would be sent (§5b), message by message from `start`."""
    session = opened(sources, name)
    leaf_id = _leaf(session, leaf)
    ctx = build_context(session.tree, leaf_id)
    if request:
        head, blocks = request_text(leaf_id, ctx)
        total = len(ctx.messages)  # (the request's count is in its head line)
    else:
        head, blocks, total = context_head(leaf_id, ctx), context_blocks(ctx), len(ctx.messages)
    return bounded(head, blocks, start, total, "messages", "get_context")


def comparison_text(sources: Sources, name: str, a: str, b: str) -> str:
    """Two branches of one session side by side: where they part, how each ended, the figures of
    each after the parting and on its whole path, its verdicts, then how their contexts differ."""
    session = opened(sources, name)
    tree = session.tree
    ids = [tree.find(a).id, tree.find(b).id]
    if ids[0] == ids[1]:
        return f"{a} and {b} are the same entry: nothing to compare"
    cmp = compare(tree, ids)
    given = verdicts(session)
    where = (f"they share {len(cmp.shared)} entries, up to {cmp.ancestor}" if cmp.ancestor else "they share no entry")
    first = "none" if cmp.divergence is None else f"turn row {cmp.divergence + 1} ({cmp.divergence_kind})"
    lines = [f"A = {ids[0]}, B = {ids[1]}: {where}; first divergence: {first}"]
    for label, br in zip("AB", cmp.branches):
        said = "; ".join(f"{v.verdict} by {v.by}" for v in given.get(br.tip, {}).values())
        lines.append(f"{label} ({branch_name(tree, br.tip)}): {br.outcome.status_text}"
                     + (f", {br.outcome.detail}" if br.outcome.detail else "") + (f"; verdict: {said}" if said else ""))
        answer = " ".join((br.outcome.answer_text or "(no final answer)").split())
        lines.append(f"  final answer: {cut(answer, 1500)}")
    lines.append("figures (A after the divergence / on its whole path | B likewise):")
    for row in FIGURE_ROWS:
        cells = []
        for br in cmp.branches:
            mine = figure_text(row.kind, row.mine(br))
            cells.append(f"{mine} / {figure_text(row.whole_kind or row.kind, row.whole(br))}" if row.whole else mine)
        lines.append(f"  {row.title.lower()}: {cells[0]} | {cells[1]}")
    lines.append("their contexts compared, the messages that differ (- only in A, + only in B, ~ changed; "
                 "get_context shows a whole context):")
    lines += list(diff_lines(diff_contexts(tree, *ids), short_id(ids[0]), short_id(ids[1]),
                             ("changed", "only-a", "only-b")))
    return cut("\n".join(lines), MAX_ANSWER)
