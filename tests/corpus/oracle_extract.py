"""The corpus extractor as it was before the index read pi files as a server does: every entry
holding its body, each table's columns read through the core's entries. Kept here as the oracle
the product's extractor (`webapp.corpus.extract`) is compared with, row for row."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

from webapp.core.agents import source_of
from webapp.core.audit import audit_entry
from webapp.core.catalog import first_user_message
from webapp.core.entries import (BRANCH_SUMMARY, COMPACTION, MESSAGE, MODEL_CHANGE, Entry, as_key, content_blocks,
                                 parse_time)
from webapp.core.leaf_figures import leaf_figures
from webapp.core.search import searchable_text
from webapp.core.reader import SessionLog
from webapp.core.tree import SessionTree
from webapp.core.storage import url_name
from webapp.core.agents.tools import tool_action
from webapp.corpus.extract import TEXT_CHARS, Extracted, file_mtime, link_columns, project_of


def _time(instant: float | None) -> datetime | None:
    return None if instant is None else datetime.fromtimestamp(instant, timezone.utc).replace(tzinfo=None)


def _usage(msg: dict) -> tuple[int | None, int | None, int | None, int | None]:
    """(input tokens, cache included; output tokens; cache reads; cache writes) a message reports."""
    u = msg.get("usage")
    if not isinstance(u, dict):
        return None, None, None, None
    def num(*keys):
        vals = [u.get(k) for k in keys if isinstance(u.get(k), (int, float)) and not isinstance(u.get(k), bool)]
        return int(sum(vals)) if vals else None
    return num("input", "cacheRead", "cacheWrite"), num("output"), num("cacheRead"), num("cacheWrite")


def _model(e: Entry) -> str | None:
    if e.type == MODEL_CHANGE:
        return as_key(e.get("modelId"))
    if e.type == MESSAGE and e.role == "assistant":
        return as_key(e.message.get("model"))
    return None


def extract(path: str | os.PathLike, from_line: int = 0) -> Extracted:
    """The rows of the session file at `path` (its `file` column: `storage.url_name` of its path,
    which any bytes of a name survive). `from_line`: entries and their text only from that
    line on (a grown file: the entries before it are in the index already); the other tables are
    always whole, since a leaf's figures and a summary's audit read the whole tree."""
    path = Path(path)
    file = url_name(str(path))
    tree = read_tree(path)
    out = Extracted()
    rows = out.rows
    by_id = tree.by_id
    results = {e.tool_call_id: e for e in tree.entries if e.role == "toolResult" and e.tool_call_id}

    leaf_of = _tips(tree)
    cost = 0.0
    tokens_in = tokens_out = 0
    last_model = None
    for e in tree.entries:
        t = e.type
        model = _model(e)
        if model:
            last_model = model
        msg = e.message if t == MESSAGE else {}
        used_in, used_out, cache_read, cache_write = _usage(msg) if e.role == "assistant" else (None,) * 4
        cost += e.cost
        tokens_in += used_in or 0
        tokens_out += used_out or 0
        time = _time(e.instant)
        if e.role == "assistant":
            for n, call in enumerate(b for b in content_blocks(msg.get("content")) if b.get("type") == "toolCall"):
                action = tool_action(call)
                call_id = as_key(call.get("id")) or f"{e.id}#{n}"
                result = results.get(call_id)
                rows["tool_calls"].append((
                    file, call_id, e.id, e.line, as_key(call.get("name")) or "?", action.kind,
                    action.path or action.command, bool(result is not None and result.is_error), time))
        if e.line < from_line:
            out.tips.append((e.id, leaf_of(e.id)))
            continue
        tool_name = as_key(msg.get("toolName")) if e.role == "toolResult" else None
        text = searchable_text(e.raw)
        rows["entries"].append((
            file, e.id, e.parent_id, leaf_of(e.id), e.line, t, e.role, time, model, e.usage_tokens, used_in, used_out,
            cache_read, cache_write, e.cost, tool_name, e.is_error, text[:TEXT_CHARS]))

    for f in leaf_figures(tree):
        model = None
        node = f.leaf
        while node is not None:  # the model that answered last on this branch
            model = _model(node) if node.type == MESSAGE else None
            if model:
                break
            node = by_id.get(tree.parent.get(node.id)) if tree.parent.get(node.id) else None
        rows["branches"].append((
            file, f.leaf.id, f.label, f.last_user[:500], f.depth, f.turns, f.tokens, f.cost, f.calls,
            f.errors, f.wall_seconds, f.status, f.active, model, _time(f.leaf.instant)))

    summaries = 0
    for e in tree.entries:
        if e.type not in (COMPACTION, BRANCH_SUMMARY):
            continue
        summaries += e.type == BRANCH_SUMMARY
        audit = audit_entry(tree, e.id)
        before, after = e.get("tokensBefore"), e.get("tokensAfter")
        rows["summaries"].append((
            file, e.id, e.type, _time(e.instant), before if isinstance(before, int) else None,
            after if isinstance(after, int) else None, audit.score(), len(audit.facts), len(audit.missing())))

    header = tree.header or {}
    st = path.stat()
    cwd = as_key(header.get("cwd"))
    rows["sessions"].append((
        file, as_key(header.get("id")), tree.format, source_of(tree.format), project_of(cwd, file), cwd,
        tree.name, (first_user_message(tree) or "")[:500] or None, _time(_parse_iso(header.get("timestamp"))
                                                                       or _first_instant(tree)),
        _time(file_mtime(path)), st.st_size, len(tree.entries), len(tree.leaves()),
        sum(1 for e in tree.entries if e.type == COMPACTION), summaries, len(tree.bad_lines),
        *tree.problem_counts(), cost, tokens_in, tokens_out, last_model, *link_columns(tree)))
    return out


def read_tree(path: Path) -> SessionTree:
    """The tree of the file at `path`, its bodies held, from one read of its bytes."""
    log = SessionLog(str(path), None)
    log.feed(path.read_bytes())
    return SessionTree(log)


def _tips(tree):
    """entry id -> the tip a reader goes on to from it (`transcript.descend`: along the active
    path, else by the newest child), for every entry in one walk: each step down depends on
    the node alone, so the tip found from a node holds for every node on the way to it."""
    active = tree.path_ids(tree.active_leaf) if tree.active_leaf else set()
    tips: dict[str, str] = {}

    def tip(node: str) -> str:
        chain = []
        while node not in tips:
            chain.append(node)
            kids = tree.conversation_children(node)
            if not kids:
                tips[node] = node
                break
            node = next((k for k in kids if k in active), kids[-1])
        for n in chain:
            tips[n] = tips[node]
        return tips[chain[0]] if chain else tips[node]

    return tip


def _parse_iso(value) -> float | None:
    t = parse_time(value) if isinstance(value, str) else None
    return t.timestamp() if t else None


def _first_instant(tree) -> float | None:
    return next((e.instant for e in tree.entries if e.instant is not None), None)

