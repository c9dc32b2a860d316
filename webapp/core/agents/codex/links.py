"""How Codex's rollouts name the rollouts they continue (shared/formats/conversations.md):

- a legacy fork's `session_meta` names `forked_from_id`; the parent's lines follow it as they were
  (the parent's own `session_meta` first), then the fork's own: its copies have ids of their own
  (Codex lines have none), found line by line (`copies`);
- a paginated fork's also names `history_base {thread_id, end_ordinal_exclusive}`: it holds only
  its own lines, and inherits the parent's before that ordinal (`attach_point`);
- a sub-agent's names `parent_thread_id` (or `source.subagent.thread_spawn.parent_thread_id`): it
  hangs under the call whose output names its thread.
"""

from __future__ import annotations

from ...entries import CUSTOM, content_text, tool_calls
from ..links import FORK, SUBAGENT, Link


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def link_of(tree) -> Link | None:
    header = tree.header or {}
    parent = header.get("forked_from_id")
    if isinstance(parent, str) and parent:
        base = header.get("history_base")
        end = _int(base.get("end_ordinal_exclusive")) if isinstance(base, dict) else None
        if end is None:
            end = _int(header.get("forked_from_ordinal_exclusive")) if header.get("history_mode") == "paginated" else None
        return Link(FORK, "forked_from_id", parent, end, f"before ordinal {end}" if end is not None else None)
    parent = header.get("parent_thread_id")
    if isinstance(parent, str) and parent:
        return Link(SUBAGENT, "parent_thread_id", parent)
    return None


def _rows(entry) -> list:
    source = entry.source
    return source if isinstance(source, list) else [source] if isinstance(source, dict) else []


def _said(entry) -> list:
    """What an entry's lines say, without when they were written or where they are numbered."""
    return [(row.get("type"), row.get("payload")) for row in _rows(entry)]


def copies(child, parent, link: Link) -> dict[str, str | None]:
    """A legacy fork's copies of its parent's lines, in order, up to the first line of its own;
    the copy of the parent's `session_meta` (the parent's header) is no node."""
    if link.kind != FORK or link.position is not None:
        return {}
    mine, out = list(child.entries), {}
    if mine and mine[0].type == CUSTOM and mine[0].get("customType") == "codex/session_meta":
        data = mine[0].get("data")
        if isinstance(data, dict) and data.get("id") == link.names:
            out[mine[0].id] = None
            mine = mine[1:]
    for c, p in zip(mine, parent.entries):
        if _said(c) != _said(p):
            break
        out[c.id] = p.id
    return out


def ordinal(entry) -> int:
    """Where an entry's first line is in its thread's history: its `ordinal`, else its line's place."""
    rows = _rows(entry)
    number = _int(rows[0].get("ordinal")) if rows else None
    return number if number is not None else entry.line - 1


def attach_point(parent, child, link: Link) -> str | None:
    if link.kind == SUBAGENT:
        return _spawned_by(parent, child)
    if link.position is None:
        return None
    before = [e for e in parent.entries if not e.sidechain and ordinal(e) < link.position]
    return before[-1].id if before else None


def _spawned_by(parent, child) -> str | None:
    """The parent's entry that made the call whose output names the child's thread, else its last
    entry written before the child's first."""
    thread = (child.header or {}).get("id")
    calls: dict[str, str] = {}
    for e in parent.entries:
        for call in tool_calls(e):
            if isinstance(call.get("id"), str):
                calls[call["id"]] = e.id
        if isinstance(thread, str) and thread and e.role == "toolResult" and e.tool_call_id in calls \
                and thread in content_text(e.message.get("content"), " "):
            return calls[e.tool_call_id]
    start = next((e.instant for e in child.entries if e.instant is not None), None)
    before = [e for e in parent.entries if e.instant is not None and start is not None and e.instant <= start]
    return before[-1].id if before else None
