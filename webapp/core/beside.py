"""The conversation of one file, found on disk without an index (what `session-tree context FILE`
reads): the files in its folder, and the file its link names (by its path, else by the session
id in a file's name, in its folder and in the folders next to it: a Codex fork made on another
day lies in another `YYYY/MM/DD` folder). The files beside it are read by their first lines only
(`conversations.head_facts`); those of its conversation are then read whole and joined."""

from __future__ import annotations

import os
from pathlib import Path

from .conversations import group, head_facts, link_of, session_of_name, tree_facts
from .joined import join
from .session import Session
from .tree import SessionTree

FOLDER_FILES = 2000  # files beside it read for their links, at most (a bigger folder: the named file only)
UP = 3  # folders above its own searched for the file its link names (Codex's YYYY/MM/DD)


def _jsonl(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            return [Path(e.path) for e in it if e.name.endswith(".jsonl") and e.is_file()]
    except OSError:
        return []


def named_file(path: Path, names: str) -> Path | None:
    """The file a link names, near `path`: the path itself, else a file of its folder or of a
    folder up to UP above whose name holds the session it names."""
    direct = Path(names)
    if direct.is_absolute() and direct.is_file() and direct.resolve() != path.resolve():
        return direct
    wanted, base = session_of_name(names), Path(names).name
    folder = path.parent
    for up in range(UP + 1):
        pattern = "/".join(["*"] * up + [f"*{wanted}*.jsonl"])
        for found in sorted(folder.glob(pattern)):
            if found.resolve() != path.resolve() and (found.name == base or session_of_name(found.name) == wanted):
                return found
        if folder.parent == folder:
            break
        folder = folder.parent
    return None


def conversation_at(path: Path) -> SessionTree:
    """The tree of the conversation of the file at `path`, as its page draws it; the file's own
    tree when it joins no other."""
    path = Path(path)
    own = Session.open(path).tree
    link = link_of(own)
    beside = [p for p in _jsonl(path.parent) if p.resolve() != path.resolve()]
    candidates = beside if len(beside) <= FOLDER_FILES else []
    if link is not None and link.names:
        named = named_file(path, link.names)
        if named is not None and named not in candidates:
            candidates.append(named)
    facts = [tree_facts(str(path), own)]
    for p in candidates:
        try:
            facts.append(head_facts(p, str(p)))
        except OSError:
            continue
    members = group(facts).members(str(path))
    if len(members) < 2 and link is None:
        return own
    trees = {str(path): own, **{m: Session.open(m).tree for m in members if m != str(path)}}
    return join(str(path), trees)
