"""One session file as rows of the corpus tables, read through the format seam and the core's own
figures: the catalog's summary, the one-walk leaf figures and outcome, the audit of each summary,
the tool actions. Pure: no database here, so the same function runs in the indexer, in a Ray
worker or in a test, and gives the same rows.

The file's bytes are read once. A pi file is read as a server reads a big one (`agents.pi.reader`'s
loop for the usual line: an entry without its body, its facts in typed columns), which costs a
third of making every entry hold its body; each body is then parsed once more, from the bytes
held, when the rows read it (`_Parsed`: a line parsed twice by orjson costs less than an entry
made with its body). Other formats' entries hold their bodies, as their readers make them."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import orjson

from ..core.agents import source_of
from ..core.audit import audit_entry
from ..core.catalog import first_message_preview
from ..core.conversations import link_of, root_id
from ..core.entries import (BRANCH_SUMMARY, COMPACTION, MESSAGE, MODEL_CHANGE, Entry, as_key,
                            parse_time)
from ..core.bodies import Bodies
from ..core.leaf_figures import leaf_figures
from ..core.search import searchable_text
from ..core.reader import SessionLog
from ..core.tree import SessionTree
from ..core.storage import sidecar_stamp, url_name
from ..core.agents.tools import tool_action

# The columns of each table, in order (docs/corpus-tables.md tells what each one means).
COLUMNS: dict[str, tuple[str, ...]] = {
    "sessions": ("file", "session_id", "format", "agent", "project", "cwd", "name", "first_message",
                 "created", "modified", "size", "entries", "leaves", "compactions", "branch_summaries",
                 "bad_lines", "problems", "warnings", "cost", "input_tokens", "output_tokens", "model",
                 "link_kind", "link_field", "link_names", "root_id", "conversation", "parent_file"),
    "entries": ("file", "entry_id", "parent_id", "leaf_id", "line", "type", "role", "time", "model",
                "usage_tokens", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost",
                "tool_name", "is_error", "text"),
    "branches": ("file", "leaf_id", "label", "last_user", "depth", "turns", "tokens", "cost", "calls",
                 "errors", "wall_seconds", "status", "active", "model", "time"),
    "summaries": ("file", "entry_id", "kind", "time", "tokens_before", "tokens_after", "score",
                  "facts", "missing"),
    "tool_calls": ("file", "call_id", "entry_id", "line", "name", "kind", "target", "is_error", "time"),
}
TEXT_CHARS = 100_000  # of one entry's searchable text: a 20 MB tool output is not a search hit
_NO_MESSAGE: dict = {}  # (the message of an entry that has none: read, never written)


@dataclass
class Extracted:
    """The rows of one file, one list of tuples per table (in COLUMNS order)."""

    rows: dict[str, list[tuple]] = field(default_factory=lambda: {t: [] for t in COLUMNS})
    # (entry id, leaf id) of the entries before `from_line`: their tip moves when the file grows
    tips: list[tuple[str, str]] = field(default_factory=list)
    # (a grown file) the summaries before `from_line` are left out: their audits read what they
    # read before the file grew, so the rows indexed then hold (`audits_hold`)
    kept_summaries: bool = False


def as_time(instant: float | None) -> datetime | None:
    return None if instant is None else datetime.fromtimestamp(instant, timezone.utc).replace(tzinfo=None)


def _usage(msg: dict) -> tuple[int | None, int | None, int | None, int | None]:
    """(input tokens, cache included; output tokens; cache reads; cache writes) a message reports:
    the kinds a cost is computed from (`core/prices.py`) kept apart."""
    u = msg.get("usage")
    if not isinstance(u, dict):
        return None, None, None, None

    def n(key: str) -> int | float | None:
        v = u.get(key)  # (JSON numbers: exactly int or float; a bool is not one)
        return v if type(v) is int or type(v) is float else None

    read, write, out = n("cacheRead"), n("cacheWrite"), n("output")
    vals = [v for v in (n("input"), read, write) if v is not None]
    whole = lambda v: None if v is None else int(v)  # noqa: E731
    return (int(sum(vals)) if vals else None), whole(out), whole(read), whole(write)


def _model(e: Entry) -> str | None:
    if e.type == MODEL_CHANGE:
        return as_key(e.get("modelId"))
    if e.type == MESSAGE and e.role == "assistant":
        return as_key(e.message.get("model"))
    return None


def project_of(cwd: str | None, file: str) -> str:
    """What a session belongs to: its working folder, else the folder its file is in."""
    return cwd or os.path.dirname(file) or "(no folder)"


def file_mtime(path: Path, st: os.stat_result | None = None) -> float:
    """The newest mtime of the file (`st`: its stat, when made already) and the files read with
    it (Claude Code's sub-agents)."""
    st = st or path.stat()
    return max([st.st_mtime_ns, *(m for _, _, m in sidecar_stamp(path))]) / 1e9


def extract(path: str | os.PathLike, from_line: int = 0, later: bool = False) -> Extracted:
    """The rows of the session file at `path` (its `file` column: `storage.url_name` of its path,
    which any bytes of a name survive). `from_line`: entries and their text only from that
    line on (a grown file: the entries before it are in the index already); the other tables are
    always whole, since a leaf's figures read the whole tree, but for the summaries before
    `from_line` when the lines after it cannot change what their audits read (`kept_summaries`:
    an audit is most of a summary's cost, and a growing session is indexed again and again).
    `later`: the entries' text and the summaries' audits are left out (None), for a build that
    makes them after the tables are written (`later.py`)."""
    path = Path(path)
    file = url_name(str(path))
    tree = read_tree(path)
    out = Extracted()
    rows = out.rows
    by_id = tree.by_id
    results = {e.tool_call_id: e for e in tree.entries if e.role == "toolResult" and e.tool_call_id}

    leaf_of = tips_finder(tree)
    cost = 0.0
    tokens_in = tokens_out = 0
    last_model = None
    entry_rows, call_rows, tips = rows["entries"], rows["tool_calls"], out.tips
    for e in tree.entries:  # (every entry of every session: each body read once, each fact once)
        t, role, raw = e.type, e.role, e.raw
        instant, spent, _, used, failed = e.figures
        used_in = used_out = cache_read = cache_write = None
        if t == MESSAGE:
            msg = raw.get("message")
            if not isinstance(msg, dict):
                msg = _NO_MESSAGE
            model = None
            if role == "assistant":
                model = as_key(msg.get("model"))
                used_in, used_out, cache_read, cache_write = _usage(msg)
                tokens_in += used_in or 0
                tokens_out += used_out or 0
        else:
            msg = _NO_MESSAGE
            model = as_key(raw.get("modelId")) if t == MODEL_CHANGE else None
        if model:
            last_model = model
        cost += spent
        time = as_time(instant)
        if role == "assistant":
            content = msg.get("content")
            if isinstance(content, list):  # (text alone makes no tool call)
                n = 0
                for call in content:  # (the blocks `content_blocks` keeps as they are: dicts)
                    if not isinstance(call, dict) or call.get("type") != "toolCall":
                        continue
                    action = tool_action(call)
                    call_id = as_key(call.get("id")) or f"{e.id}#{n}"
                    result = results.get(call_id)
                    call_rows.append((
                        file, call_id, e.id, e.line, as_key(call.get("name")) or "?", action.kind,
                        action.path or action.command, bool(result is not None and result.is_error), time))
                    n += 1
        if e.line < from_line:
            tips.append((e.id, leaf_of(e.id)))
            continue
        tool_name = as_key(msg.get("toolName")) if role == "toolResult" else None
        entry_rows.append((
            file, e.id, e.parent_id, leaf_of(e.id), e.line, t, role, time, model, used, used_in, used_out,
            cache_read, cache_write, spent, tool_name, failed, None if later else searchable_text(raw)[:TEXT_CHARS]))

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
            f.errors, f.wall_seconds, f.status, f.active, model, as_time(f.leaf.instant)))

    summaries = 0
    out.kept_summaries = kept = from_line > 0 and audits_hold(tree, from_line)
    for e in tree.entries:
        if e.type not in (COMPACTION, BRANCH_SUMMARY):
            continue
        summaries += e.type == BRANCH_SUMMARY
        if kept and e.line < from_line:
            continue
        before, after = e.get("tokensBefore"), e.get("tokensAfter")
        scores = (None, None, None) if later else audit_scores(tree, e.id)
        rows["summaries"].append((
            file, e.id, e.type, as_time(e.instant), before if isinstance(before, int) else None,
            after if isinstance(after, int) else None, *scores))

    header = tree.header or {}
    st = path.stat()
    cwd = as_key(header.get("cwd"))
    rows["sessions"].append((
        file, as_key(header.get("id")), tree.format, source_of(tree.format), project_of(cwd, file), cwd,
        tree.name, first_message_preview(tree), as_time(parse_iso(header.get("timestamp"))
                                                                       or first_instant(tree)),
        as_time(file_mtime(path)), st.st_size, len(tree.entries), len(tree.leaves()),
        sum(1 for e in tree.entries if e.type == COMPACTION), summaries, len(tree.bad_lines),
        *tree.problem_counts(), cost, tokens_in, tokens_out, last_model, *link_columns(tree)))
    return out


def audit_scores(tree: SessionTree, entry_id: str) -> tuple[int, int, int]:
    """(score, facts, missing) of the audit of the summary `entry_id`: the `summaries` columns."""
    audit = audit_entry(tree, entry_id)
    return audit.score(), len(audit.facts), len(audit.missing())


def link_columns(tree: SessionTree) -> tuple:
    """The sessions row's link columns: the link the file makes, its first entry's id, and (filled
    once every file is indexed: `joins.join_conversations`) its conversation's first file and the
    file it goes on from."""
    link = link_of(tree)
    return (link.kind if link else None, link.field if link else None, link.names if link else None,
            root_id(tree), None, None)


class _Parsed(Bodies):
    """The bodies of one reading of a file whose bytes are held: a body is parsed from them when
    first read and kept (the rows read every body, the audits and outcomes read some again)."""

    def __init__(self, data: bytes) -> None:
        super().__init__(None)
        self.data = data
        self.parsed: dict[int, dict] = {}

    def body(self, entry) -> dict:
        line = entry.line
        obj = self.parsed.get(line)
        if obj is None:
            starts = self.starts
            obj = self.parsed[line] = orjson.loads(self.data[starts[line - 1]:starts[line]])
        return obj


def read_tree(path: Path) -> SessionTree:
    """The tree of the file at `path`, from one read of its bytes."""
    data = path.read_bytes()
    log = SessionLog(str(path), _Parsed(data))
    log.feed(data)
    return SessionTree(log)


def tips_finder(tree):
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


def audits_hold(tree: SessionTree, from_line: int) -> bool:
    """Whether the audits of the summaries before `from_line` read what they read when the file
    ended there. An audit reads the path to its summary (and a branch summary the branch it
    left): the lines from `from_line` on change it only by holding an entry that an earlier one
    names as its parent or as the branch it left, or one with an earlier entry's id."""
    new = {e.id for e in tree.entries if e.line >= from_line}
    for e in tree.entries:
        if e.line >= from_line:
            continue
        if e.id in new or e.parent_id in new:
            return False
        if e.type == BRANCH_SUMMARY and as_key(e.get("fromId")) in new:
            return False
    return True


def parse_iso(value) -> float | None:
    t = parse_time(value) if isinstance(value, str) else None
    return t.timestamp() if t else None


def first_instant(tree) -> float | None:
    return next((e.instant for e in tree.entries if e.instant is not None), None)

