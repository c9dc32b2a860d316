"""How Claude Code's files name the files they continue (shared/formats/conversations.md):

- `/branch` copies the path into a new session file, each row keeping its uuid and marked
  `forkedFrom: {sessionId, messageUuid}`; the SDK's `forkSession` does the same with NEW uuids,
  `forkedFrom.messageUuid` naming each original (those are `copies`);
- `claude --resume ID --fork-session` writes the inherited rows again with their original uuids
  and nothing else, after a `mode` line: only the shared uuids tell (a RESUME link);
- sub-agents' files are read with their session (`reader`); one whose session is gone is listed
  alone, every row of it a sidechain's naming its session in `sessionId`: a SUBAGENT link (found,
  that session reads it already, so `conversations.group` joins it to nothing).
"""

from __future__ import annotations

from ..links import FORK, RESUME, SUBAGENT, Link, attach_point  # noqa: F401 (no attach point: copies say it all)


def _rows(entry) -> list:
    source = entry.source
    return source if isinstance(source, list) else [source] if isinstance(source, dict) else []


def _forked_from(row) -> dict | None:
    mark = row.get("forkedFrom") if isinstance(row, dict) else None
    return mark if isinstance(mark, dict) else None


def link_of(tree) -> Link | None:
    session = _sub_agent_of(tree)
    if session is not None:
        return Link(SUBAGENT, "sessionId", session)
    last = None
    for e in tree.entries:
        if e.sidechain:
            continue
        for row in _rows(e):
            mark = _forked_from(row)
            if mark is not None and isinstance(mark.get("sessionId"), str) and mark["sessionId"]:
                last = mark
    if last is not None:
        at = last.get("messageUuid")
        return Link(FORK, "forkedFrom", last["sessionId"], at=f"after {at}" if isinstance(at, str) else None)
    first = tree.metadata[0][1] if tree.metadata else None
    if isinstance(first, dict) and first.get("type") == "mode" and tree.metadata[0][0] == 1:
        return Link(RESUME, "", None)
    return None


def _sub_agent_of(tree) -> str | None:
    """The session a sub-agent's transcript read on its own names: every row of the file's own
    entries is a sidechain's, and carries that session's id."""
    rows = [row for e in tree.entries if e.file is None for row in _rows(e)]
    if not rows or not all(isinstance(row, dict) and row.get("isSidechain") is True for row in rows):
        return None
    session = rows[0].get("sessionId")
    return session if isinstance(session, str) and session else None


def copies(child, parent, link: Link) -> dict[str, str | None]:
    """Entries of the child whose `forkedFrom.messageUuid` names another uuid than their own (an
    SDK fork's copies): the same node as that original. An entry made of several rows is named by
    its last row (as the reader names it), a tool result of a row of several by its place in it."""
    out: dict[str, str | None] = {}
    for e in child.entries:
        rows = _rows(e)
        mark = _forked_from(rows[-1]) if rows else None
        original = mark.get("messageUuid") if mark else None
        if not isinstance(original, str) or not original:
            continue
        uuid = rows[-1].get("uuid")
        if not isinstance(uuid, str) or uuid == original:
            continue
        suffix = e.id[len(uuid):] if e.id.startswith(uuid) else ""
        out[e.id] = original + suffix
    return out
