"""Continue a session we may not write to in a new pi v3 file (SPEC §5c).

The path to the chosen entry is copied into a new file beside the source, whose header names the
source as `parentSession`; the source is only read. Entries keep their ids where these are UUIDs
(so the copy can be matched with its source) and get new UUID v7 ids otherwise (pi v1's line
numbers, a duplicate's suffixed id), and every reference between copied entries follows them.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from .entries import BRANCH_SUMMARY, COMPACTION, CONTEXT_EDIT, LABEL, LEAF, Entry, new_id, now_iso
from .errors import SessionError
from .reader import first_kept_id
from .session import FILLED_KEYS, Session, write_new_session
from .storage import JsonlStorage

# Keys of a copied entry that name another entry of the session, by entry type.
_REFERENCES = {COMPACTION: "firstKeptEntryId", BRANCH_SUMMARY: "fromId", CONTEXT_EDIT: "targetId"}


def is_uuid(entry_id: str) -> bool:
    try:
        return str(uuid.UUID(entry_id)) == entry_id.lower()
    except ValueError:
        return False


def continue_in_new_session(session: Session, leaf_id: str | None, mapping: dict[str, str] | None = None,
                            source: Path | None = None) -> Path:
    """A new v3 file holding the path from the root to `leaf_id` (and the labels on it), in the
    source's folder; its last entry is the active leaf. Returns its path; `mapping`, when given,
    is filled with each copied entry's id in the new file (by its id here). The source is the
    session's file, or `source`: the file of a conversation across files that holds `leaf_id`
    (the path then runs through several files; the new file names the one it goes on from)."""
    if source is None and not isinstance(getattr(session.storage, "_storage", session.storage), JsonlStorage):
        raise SessionError("only a session file can be continued in a new file")
    tree = session.tree
    ids = {e.id: e.id if is_uuid(e.id) else new_id() for e in tree.path(leaf_id) if e.type not in (LEAF, LABEL)}
    if mapping is not None:
        mapping.update(ids)
    lines = copied_path(tree, leaf_id, ids)
    parent = lines[-1]["id"] if lines else None
    for target, text in tree.labels.items():
        if target in ids:
            lines.append({"type": LABEL, "id": new_id(), "parentId": parent, "timestamp": now_iso(),
                          "targetId": ids[target], "label": text})
            parent = lines[-1]["id"]
    header = tree.header or {}
    cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else ""
    source = (source or session.storage.path).resolve()
    return write_new_session(source.parent, cwd, str(source), lines)


def copied_path(tree, leaf_id: str | None, ids: dict[str, str] | None = None) -> list[dict]:
    """The path from the root to `leaf_id` as pi v3 lines, each the child of the one before,
    with the ids of `ids` (the entries' own where it names none: a copy held in memory needs no
    new ones); the markers (leaf, label) are left out, they say nothing there."""
    lines, parent = [], None
    for entry in tree.path(leaf_id):
        if entry.type in (LEAF, LABEL):
            continue
        lines.append(_copy(entry, ids if ids is not None else {}, parent))
        parent = lines[-1]["id"]
    return lines


def _copy(entry: Entry, ids: dict[str, str], parent: str | None) -> dict:
    line = {"type": entry.type, "id": ids.get(entry.id, entry.id), "parentId": parent,
            "timestamp": entry.timestamp or now_iso()}
    line.update((k, v) for k, v in entry.raw.items() if k not in FILLED_KEYS and k != "type")
    if entry.type == COMPACTION:
        # Claude Code and Codex compactions keep nothing before them: in pi v3 that is a compaction
        # whose first kept entry is itself (pi keeps the entries before it from that id on: none).
        line["firstKeptEntryId"] = first_kept_id(entry) or line["id"]
    ref = _REFERENCES.get(entry.type)
    if ref and isinstance(line.get(ref), str) and line[ref] in ids:
        line[ref] = ids[line[ref]]
    return line
