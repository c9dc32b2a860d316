"""Conversations across files (SPEC §5e), as a listing groups them: from what a listing already
holds of each file (its session id, its first entry's id, the link it makes: `Facts`), never by
reading the files again. The tree one conversation's files make together is `joined.py`'s.

A file joins the file its link names (a path, or a session's id), and every file whose first
entry is its own first entry again (a copy that goes on: a resumed session, a `/branch` that kept
its uuids). A link that names no file here is said, with the reference it makes. A sub-agent's
file that carries the id of the session it names (Claude Code's) is read with that session: found,
it joins nothing; gone, it is said like any other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from .agents import of_format
from .agents.links import FORK, RESUME, SUBAGENT, Link
from .reader import SessionLog
from .tree import SessionTree


@dataclass(frozen=True)
class Facts:
    """What joining needs of one file: `file` (as the listing names it), its session id, when it
    was made, its first entry's id (None when ids are made from line numbers: they say nothing
    across files) and the link it makes."""

    file: str
    session_id: str | None
    created: str | None
    root_id: str | None = None
    link_kind: str | None = None
    link_field: str | None = None
    link_names: str | None = None

    @property
    def link(self) -> Link | None:
        return Link(self.link_kind, self.link_field or "", self.link_names) if self.link_kind else None

    @property
    def read_with_parent(self) -> bool:
        """A sub-agent's file whose lines carry the id of the session it names (Claude Code's):
        that session reads it with its own, and the id is the session's, not the file's."""
        return self.link_kind == SUBAGENT and self.session_id is not None and self.session_id == self.link_names


@dataclass
class Grouping:
    """The conversations of a set of files: each one's files in order (the first file, then each
    file after the one it continues), the file each continues where it was found, and the
    reference of each whose source is not among them."""

    conversations: list[list[str]] = field(default_factory=list)
    parent: dict[str, str] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)  # file -> the reference that names no file here
    first: dict[str, str] = field(default_factory=dict)  # file -> its conversation's first file
    # (each conversation by its first file: looked for in the list, `ls --index` of 10,000
    # sessions spent a second of its 1.9 s finding each file's)
    by_first: dict[str, list[str]] = field(default_factory=dict)

    def members(self, file: str) -> list[str]:
        """The files of `file`'s conversation, in order (itself alone when it is in none)."""
        return self.by_first.get(self.first.get(file, file)) or [file]


def root_id(tree) -> str | None:
    """The id of the file's first entry of the conversation (a root, not a sub-agent's), when it
    is a UUID the file wrote: a copy of the file keeps it. Ids made from line numbers, and ids too
    short to be told apart across thousands of files (pi's 8 hex characters, whose forks name
    their source anyway), say nothing across files."""
    for e in tree.entries:
        if e.parent_id is None and not e.sidechain:
            return e.id if not e.generated_id and _UUID.fullmatch(e.id) else None
    return None


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def link_of(tree) -> Link | None:
    """What the file says it continues, in its agent's words (the agent's `links` module); kept
    on the tree (a tree is one version of its file), as Claude Code's is read from every row and
    a page and each context it builds ask for it."""
    known = getattr(tree, "_link_of", _UNKNOWN)
    if known is not _UNKNOWN:
        return known
    try:
        link = of_format(tree.format).links().link_of(tree)
    except ModuleNotFoundError:  # (an agent whose room says nothing of links)
        link = None
    try:
        tree._link_of = link
    except AttributeError:  # (a tree that keeps no attributes of ours)
        pass
    return link


_UNKNOWN = object()


def session_of_name(name: str) -> str:
    """The session id a file name holds: pi's `<time>_<id>.jsonl`, Claude Code's `<id>.jsonl`,
    Codex's `rollout-<time>-<uuid>.jsonl` (its last 36 characters)."""
    stem = PurePath(name).name.removesuffix(".jsonl")
    if stem.startswith("rollout-") and len(stem) > 36:
        return stem[-36:]
    return stem.rsplit("_", 1)[-1]


class _Finder:
    """Files by what a link may name them with: their path, their file name, their session id."""

    def __init__(self, facts: list[Facts]):
        self.by_path = {f.file: f for f in facts}
        self.by_name: dict[str, list[Facts]] = {}
        self.by_session: dict[str, list[Facts]] = {}
        for f in sorted(facts, key=_order):
            self.by_name.setdefault(PurePath(f.file).name, []).append(f)
            for sid in {None if f.read_with_parent else f.session_id, session_of_name(f.file)} - {None, ""}:
                self.by_session.setdefault(sid, []).append(f)

    def find(self, names: str, asking: Facts) -> str | None:
        """The file `names` names (a path, or a session id), other than the file asking."""
        if names in self.by_path and names != asking.file:
            return names
        for pool in (self.by_name.get(PurePath(names).name, []), self.by_session.get(names, []),
                     self.by_session.get(session_of_name(names), [])):
            found = next((f.file for f in pool if f.file != asking.file), None)
            if found is not None:
                return found
        return None


def _order(f: Facts) -> tuple:
    """Older files first; of files made at one time (copies keep their rows' times), the one that
    names no other first."""
    return (f.created or "", f.link_kind is not None, f.file)


def group(facts: Iterable[Facts]) -> Grouping:
    """The conversations of `facts` (see the module's docstring). Files are ordered by creation
    time; a link loop (two files naming each other) is cut at the newer file."""
    facts = sorted(facts, key=_order)
    finder = _Finder(facts)
    out = Grouping()
    by_root: dict[str, str] = {}  # a first entry's id -> the first file that holds it
    for f in facts:
        parent = finder.find(f.link_names, f) if f.link_names else None
        if parent is None and f.root_id:
            first = by_root.setdefault(f.root_id, f.file)
            parent = first if first != f.file else None
        if parent is not None and f.read_with_parent:
            continue  # (its entries are in the session's tree already)
        if parent is not None and not _loops(out.parent, f.file, parent):
            out.parent[f.file] = parent
        elif f.link_names and parent is None:
            out.missing[f.file] = f.link.said if f.link else f.link_names
    children: dict[str, list[str]] = {}
    for f in facts:
        if f.file in out.parent:
            children.setdefault(out.parent[f.file], []).append(f.file)
    for f in facts:
        if f.file in out.parent:
            continue
        members, stack = [], [f.file]
        while stack:
            file = stack.pop()
            members.append(file)
            out.first[file] = f.file
            stack.extend(reversed(children.get(file, ())))
        out.conversations.append(members)
        out.by_first[f.file] = members
    return out


def _loops(parent: dict[str, str], file: str, new_parent: str) -> bool:
    node: str | None = new_parent
    while node is not None:
        if node == file:
            return True
        node = parent.get(node)
    return False


HEAD_BYTES = 32 * 1024  # of a file read to learn what joins it (its header, its first entries)


def head_facts(path: Path, name: str | None = None) -> Facts:
    """What joins a file to others, read from its first lines only (its header, the link its
    first rows make, its first entry): what a page reads of the files beside the one it shows,
    when no index holds them. The files read with a session (sub-agents) are not read."""
    with open(path, "rb") as f:
        data = f.read(HEAD_BYTES)
    end = data.rfind(b"\n") + 1
    log = SessionLog()
    log.feed(data[:end] if end else data)
    return tree_facts(name or str(path), SessionTree(log))


def tree_facts(name: str, tree) -> Facts:
    """What joining reads of a file whose tree is read."""
    header = tree.header or {}
    link = link_of(tree)
    sid, created = header.get("id"), header.get("timestamp")
    return Facts(name, sid if isinstance(sid, str) else None, created if isinstance(created, str) else None,
                 root_id(tree), link.kind if link else None, link.field if link else None, link.names if link else None)


def relation(kind: str | None, joined_by_ids: bool) -> str:
    """How a file continues the one before it, in a listing's words."""
    if kind == SUBAGENT:
        return "sub-agent"
    if kind == FORK:
        return "fork"
    if kind == RESUME or joined_by_ids:
        return "copy that goes on"
    return "continues"
