"""One tree of a conversation's files (SPEC §5e): the file a page shows, with the files it
continues and those that continue it, drawn as the one tree the agent grew.

An entry copied into another file is the same node as its original: the same id (pi's forks,
Claude Code's `/branch` and resumed copies), or the original its agent's room names
(`links.copies`: an SDK fork's new uuids, a legacy Codex fork's copied lines). Each node is drawn
once; each file's own entries branch off where its copies end, or hang where its room says the
file goes on from (`links.attach_point`: a paginated Codex fork, a sub-agent's first call). The
context at any leaf is then the path the agent would send: the file's own copies where it has
them, its parent's entries up to where it went on, never what the parent did after.

The file shown keeps its own entries as they are (their ids, lines and bodies: every node of
its own opens and is written to as before); the other files' entries are copies that name their
file (`Entry.file`), their ids kept unless made from line numbers (then prefixed with their
file's mark, as two files may both have a line 12). Nothing here reads or writes a file.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field

from .agents import of_format
from .agents.links import SUBAGENT, Link
from .conversations import group, link_of, relation, session_of_name, tree_facts
from .entries import Entry, content_text
from .reader import SessionLog
from .tree import SessionTree


SHORT_NAME = 34  # characters of a file's name in a caption


@dataclass
class Part:
    """One file of a conversation as the tree draws it."""

    name: str  # the file, as the page names it (its path under the served folder)
    title: str
    format: str
    link: Link | None
    parent: int | None = None  # the part it goes on from, where found
    missing: str | None = None  # the reference it makes that names no file here
    relation: str = ""  # how it goes on from its parent ("fork", "copy that goes on", "sub-agent")
    own: int = 0  # entries only it holds
    starts: list[str] = field(default_factory=list)  # its own entries whose parent is another file's (or none)
    shown: bool = False  # the file the page is of

    @property
    def label(self) -> str:
        """The file's name, without its folder."""
        return self.name.rsplit("/", 1)[-1]

    @property
    def short(self) -> str:
        """The file's name up to the first characters of the session id it holds (a name is a
        time and an id, whose first characters tell the files apart), else cut in its middle."""
        name = self.label
        if len(name) <= SHORT_NAME:
            return name
        sid = session_of_name(name)
        at = name.find(sid) if len(sid) > 8 else -1
        if 0 <= at and at + 8 <= SHORT_NAME:
            return name[:at + 8] + "…"
        return name[:SHORT_NAME // 2 - 1] + "…" + name[-(SHORT_NAME // 2):]

    @property
    def said(self) -> str:
        """How the part is captioned: whether it is the file shown, how it goes on from its
        parent, and its short name."""
        how = "this file" if self.shown else self.relation or "first file"
        if self.shown and self.relation:
            how += f" ({self.relation})"
        return f"{how} · {self.short}"


@dataclass
class Conversation:
    """What a joined tree knows of its files: the parts in order and which part holds each node
    first (`home`: the file that wrote it; a copy in a later file is not its home)."""

    parts: list[Part]
    home: dict[str, int]
    held: set[str] = field(default_factory=set)  # the nodes the file shown holds (its own or its copies)

    @property
    def shown(self) -> Part:
        return next(p for p in self.parts if p.shown)

    def part_of(self, entry_id: str) -> Part | None:
        """The file that wrote the node first."""
        i = self.home.get(entry_id)
        return self.parts[i] if i is not None else None

    def elsewhere(self, entry_id: str) -> Part | None:
        """The file a node of another file is read from, None for a node the file shown holds
        (only those may be written after in it)."""
        return None if entry_id in self.held or entry_id not in self.home else self.part_of(entry_id)

    @property
    def boundaries(self) -> set[str]:
        """The entries where a file's own part starts: each stays drawn, so that a part's caption
        and edge are where the file begins."""
        return {x for p in self.parts for x in p.starts}


class _JoinedLog(SessionLog):
    """A log made of the joined entries, read by `SessionTree` as a file's log is."""

    def __init__(self, shown: SessionTree, entries: list[Entry], active: str | None) -> None:
        super().__init__()
        self._format = shown.format
        self.header, self.metadata = shown.header, shown.metadata
        self.entries, self.ids = entries, {e.id: e for e in entries}
        self.problems, self.bad_lines = list(shown.problems), list(shown.bad_lines)
        self._active = active

    @property
    def format(self) -> str:
        return self._format


def _mark(name: str) -> str:
    """A short mark of a file for the ids made from its line numbers (safe in URLs and drawings)."""
    return hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:6]


class _Classes:
    """Nodes of several files that are one node: (part, entry id) keys in union-find."""

    def __init__(self) -> None:
        self.up: dict[tuple, tuple] = {}

    def find(self, key: tuple) -> tuple:
        up = self.up
        root = key
        while up.get(root, root) != root:
            root = up[root]
        while up.get(key, key) != root:
            up[key], key = root, up[key]
        return root

    def union(self, a: tuple, b: tuple) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.up[ra] = rb


def join(shown: str, trees: dict[str, SessionTree]) -> SessionTree:
    """The tree of the conversation of the files `trees` (name -> its tree), as the page of the
    file `shown` draws it: its `joined` says which part each node is of. Files that join no
    other are left out; the file shown alone comes back as its own tree."""
    grouping = group(tree_facts(name, tree) for name, tree in trees.items())
    names = grouping.members(shown)
    if len(names) < 2 and shown not in grouping.missing:
        return trees[shown]
    index = {name: i for i, name in enumerate(names)}
    parts = []
    for name in names:
        tree = trees[name]
        parent = grouping.parent.get(name)
        link = link_of(tree)
        parts.append(Part(name, tree.name or _first_words(tree) or name.rsplit("/", 1)[-1], tree.format, link,
                          index.get(parent) if parent is not None else None, grouping.missing.get(name),
                          relation(link.kind if link else None, parent is not None) if parent is not None else "",
                          shown=name == shown))
    tree_of = [trees[n] for n in names]
    classes, dropped = _classes(parts, tree_of)
    return _build(parts, tree_of, classes, dropped)


def _first_words(tree: SessionTree) -> str | None:
    for e in tree.entries:
        if e.role == "user" and not e.sidechain:
            text = content_text(e.message.get("content"), " ").strip()
            if text:
                return text[:80]
    return None


def _classes(parts: list[Part], trees: list[SessionTree]) -> tuple[_Classes, set[tuple]]:
    """Which entries of the files are one node: the same id written by the file (not made from a
    line number), and the copies each file's room finds of its parent's entries."""
    classes, dropped = _Classes(), set()
    for i, tree in enumerate(trees):
        for e in tree.entries:
            if not e.generated_id:
                classes.union((i, e.id), ("id", e.id))
    for i, part in enumerate(parts):
        if part.parent is None or part.link is None:
            continue
        rooms = of_format(part.format).links()
        for child_id, parent_id in rooms.copies(trees[i], trees[part.parent], part.link).items():
            if parent_id is None:
                dropped.add((i, child_id))
            elif parent_id in trees[part.parent].by_id:
                classes.union((i, child_id), (part.parent, parent_id))
    return classes, dropped


def _build(parts: list[Part], trees: list[SessionTree], classes: _Classes, dropped: set[tuple]) -> SessionTree:
    shown = next(i for i, p in enumerate(parts) if p.shown)
    # The entry that stands for each node: the shown file's where it holds one, else the first file's.
    rep: dict[tuple, tuple[int, Entry]] = {}
    home: dict[tuple, int] = {}
    for i, tree in enumerate(trees):
        for e in tree.entries:
            if (i, e.id) in dropped:
                continue
            c = classes.find((i, e.id))
            home.setdefault(c, i)
            if c not in rep or i == shown and rep[c][0] != shown:
                rep[c] = (i, e)
    canon: dict[tuple, str] = {}
    taken: set[str] = {e.id for e in trees[shown].entries}
    for c, (i, e) in rep.items():
        new = e.id
        if i != shown and (e.generated_id or new in taken and classes.find((shown, new)) != c):
            new = f"{_mark(parts[i].name)}.{e.id}"
        canon[c] = new
        taken.add(new)
    def canonical(i: int, entry_id: str | None) -> str | None:
        if entry_id is None or (i, entry_id) in dropped:
            return None
        if entry_id in trees[i].by_id:
            return canon.get(classes.find((i, entry_id)))
        return canon.get(classes.find(("id", entry_id)))  # (a parent written in another file)

    attach = [canonical(p.parent, _attach_point(p, trees, i)) if p.parent is not None else None
              for i, p in enumerate(parts)]
    entries: list[Entry] = []
    node_home: dict[str, int] = {}
    held: set[str] = set()
    for i in sorted(range(len(parts)), key=lambda k: (k != shown, k)):  # (the shown file's first: its file order)
        tree = trees[i]
        for e in tree.entries:
            c = classes.find((i, e.id)) if (i, e.id) not in dropped else None
            if c is None or rep[c][1] is not e:
                continue
            own_parent = tree.parent.get(e.id)
            parent = canonical(i, own_parent if own_parent is not None else e.parent_id)
            if parent is None and not e.sidechain:
                parent = attach[i]
            node = canon[c]
            node_home[node] = home[c]
            if i == shown:
                held.add(node)
            entries.append(_as_node(e, node, parent, parts[i], i == shown))
            if home[c] == i:
                parts[i].own += 1
    by_id = {e.id: e for e in entries}
    for e in entries:
        h = node_home[e.id]
        if e.parent_id is None or node_home.get(e.parent_id) != h:
            if not (e.sidechain and e.parent_id is not None and by_id[e.parent_id].sidechain):
                parts[h].starts.append(e.id)
    active = trees[shown].active_leaf
    log = _JoinedLog(trees[shown], entries, canonical(shown, active) if active is not None else None)
    joined = SessionTree(log)
    joined.joined = Conversation(parts, node_home, held)
    return joined


def _attach_point(part: Part, trees: list[SessionTree], i: int) -> str | None:
    """Where the part's own first entries hang in its parent's, as its room says (a paginated
    fork, a sub-agent): the parent's entry id, or None."""
    if part.parent is None or part.link is None:
        return None
    return of_format(part.format).links().attach_point(trees[part.parent], trees[i], part.link)


def _as_node(e: Entry, node: str, parent: str | None, part: Part, shown: bool) -> Entry:
    """The entry as the joined tree holds it: the shown file's own as it is where nothing changes;
    another file's as a copy that names its file (and marked a sub-agent's when its file is one)."""
    sidechain = e.sidechain or (part.link is not None and part.link.kind == SUBAGENT)
    if shown and node == e.id and parent == e.parent_id and sidechain == e.sidechain:
        return e
    if shown and sidechain == e.sidechain:
        moved = copy.copy(e)
        moved.id, moved.parent_id = node, parent
        return moved
    return Entry(e.raw, e.line, node, parent, e.generated_id, e.source, sidechain, e.file or (None if shown else part.name))
